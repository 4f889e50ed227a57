// Legacy email-code agent login: request_code mails an 8-digit code, verify_code trades it for
// an agent API key. Privacy first: request_code answers the same for every valid address (no
// account, two-factor, over a limit: nothing is sent, the answer does not change, and the mail
// goes out after the response so timing tells nothing either); INVALID_CODE covers every failure.
// It never creates accounts. Codes: 10 minutes, 5 tries, single use, stored as SHA-256.
import { randomInt } from "node:crypto";
import { and, desc, eq, gt, inArray, isNull } from "drizzle-orm";
import { LRUCache } from "lru-cache";
import type { BucketPermission, Deps, Scope } from "../../core/context";
import { sha256Hex } from "../../core/crypto";
import { ApiError } from "../../core/errors";
import { newId } from "../../core/ids";
import { agentLoginCodes, buckets } from "../../db/schema";
import { transaction } from "../../db/tx";
import { createApiKey } from "../accounts";
import { defaultAccountOf, findUserByEmail, normalizeEmail } from "../accounts";
import { twoFactorEnabled } from "../accounts";
import { mailerFor } from "../mail";
import { isoAfter } from "../../core/clock";

export const CODE_TTL_S = 600;
export const MAX_CODE_ATTEMPTS = 5;
const CODES_PER_EMAIL_PER_HOUR = 5;

const guidance = (deps: Deps) => ({
  fallback_url: `${deps.urls.baseUrl}/oauth/device`,
  signup_url: `${deps.urls.baseUrl}/signup`,
  hint: "If no code arrives, or the code is refused, use the browser device sign-in (pier login, or the device flow in /api/v1/agent_auth/capabilities) instead of retrying. Sign-up happens in the web UI.",
});

const hashCode = (id: string, code: string) => sha256Hex(`${id}:${code}`);
/** Per running Pier (a field of Deps): when codes were last sent to each address. */
export const newEmailCodeLog = () => new LRUCache<string, number[]>({ max: 50_000 });

export function requestCode(deps: Deps, input: { email: string }) {
  const email = normalizeEmail(input.email);
  const answer = { status: "code_sent_if_the_address_can_sign_in", expires_in: CODE_TTL_S, ...guidance(deps) };
  const user = findUserByEmail(deps, email);
  if (!user || twoFactorEnabled(user)) return answer;
  const sent = deps.emailCodesSent;
  const now = deps.clock.now();
  const recent = (sent.get(email) ?? []).filter((t) => now.getTime() - t < 3600_000);
  if (recent.length >= CODES_PER_EMAIL_PER_HOUR) return answer;
  sent.set(email, [...recent, now.getTime()]);
  const id = newId("lcd");
  const code = String(randomInt(0, 100_000_000)).padStart(8, "0");
  deps.db.insert(agentLoginCodes).values({
    id, email, userId: user.id, codeHash: hashCode(id, code), createdAt: now.toISOString(), expiresAt: isoAfter(now, CODE_TTL_S * 1000),
  }).run();
  // After the response: the time to answer must not depend on whether mail is sent.
  queueMicrotask(() => {
    mailerFor(deps).send({
      to: email, kind: "agent-login-code", subject: `Your Pier code: ${code}`,
      text: `Your code to connect an agent to Pier (${deps.urls.baseUrl}) is:\n\n    ${code}\n\nIt works once, for 10 minutes. If you did not ask for it, ignore this message: nothing happens without the code.\n`,
    }).catch((e) => deps.log.warn("agent login code not sent", { error: e instanceof Error ? e.message : String(e) }));
  });
  return answer;
}

export interface VerifyInput {
  email: string;
  code: string;
  label?: string;
  permission_scope?: Scope;
  scope?: Scope;
  bucket_access?: "all" | "selected";
  bucket_ids?: string[];
  bucket_permissions?: Record<string, BucketPermission>;
}

export function verifyCode(deps: Deps, input: VerifyInput) {
  const invalid = () => new ApiError("INVALID_CODE", "The code is wrong, expired or used up.", guidance(deps));
  let email: string;
  try {
    email = normalizeEmail(input.email);
  } catch {
    throw invalid();
  }
  const code = input.code.trim();
  const now = deps.clock.now().toISOString();
  const outcome = transaction(deps.db, (tx) => {
    // The newest live code for the address; every wrong try counts against it.
    const row = tx.select().from(agentLoginCodes)
      .where(and(eq(agentLoginCodes.email, email), isNull(agentLoginCodes.usedAt), gt(agentLoginCodes.expiresAt, now)))
      .orderBy(desc(agentLoginCodes.createdAt)).get();
    if (!row || row.attempts >= MAX_CODE_ATTEMPTS) return invalid();
    if (!/^\d{8}$/.test(code) || hashCode(row.id, code) !== row.codeHash) {
      tx.update(agentLoginCodes).set({ attempts: row.attempts + 1 }).where(eq(agentLoginCodes.id, row.id)).run();
      return invalid();
    }
    const user = findUserByEmail(deps, email, tx);
    const accountId = user ? defaultAccountOf(deps, user.id) : null;
    if (!user || twoFactorEnabled(user) || !accountId) {
      tx.update(agentLoginCodes).set({ usedAt: now }).where(eq(agentLoginCodes.id, row.id)).run();
      return invalid();
    }
    const access = input.bucket_access ?? "all";
    let permissions: Record<string, BucketPermission> = {};
    if (access === "selected") {
      const ids = [...new Set([...(input.bucket_ids ?? []), ...Object.keys(input.bucket_permissions ?? {})])];
      if (!ids.length) return new ApiError("VALIDATION_FAILED", "bucket_access 'selected' needs bucket_ids.", { field: "bucket_ids" });
      const known = new Set(tx.select({ id: buckets.id }).from(buckets).where(and(eq(buckets.accountId, accountId), inArray(buckets.id, ids))).all().map((b) => b.id));
      const unknown = ids.filter((id) => !known.has(id));
      if (unknown.length) return new ApiError("VALIDATION_FAILED", "Some bucket_ids are not buckets of this account.", { field: "bucket_ids", unknown });
      permissions = Object.fromEntries(ids.map((id) => [id, input.bucket_permissions?.[id] ?? "admin"]));
    }
    // A bad bucket selection is fixable: the code stays valid until the key is created.
    tx.update(agentLoginCodes).set({ usedAt: now }).where(eq(agentLoginCodes.id, row.id)).run();
    const scope = input.permission_scope ?? input.scope ?? "bucket_admin";
    const { key, record } = createApiKey(deps, {
      accountId, userId: user.id, label: (input.label?.trim() || "Agent (email code)").slice(0, 200), kind: "agent", scope,
      bucketAccess: access, bucketPermissions: permissions,
    }, tx);
    return { api_key: key, key_id: record.id, permission_scope: scope, bucket_access: access, guidance: "Store api_key securely (for example in the user's config dir with 0600 permissions); never print or log it. Send it as Authorization: Bearer <key>." };
  });
  if (outcome instanceof ApiError) throw outcome;
  return outcome;
}
