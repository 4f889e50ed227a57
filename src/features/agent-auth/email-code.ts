// Legacy email-code agent login: request_code mails an 8-digit code, verify_code trades it for
// an agent API key. Privacy first: request_code answers the same for every valid address (no
// account, two-factor, over a limit: nothing is sent, the answer does not change, and the mail
// goes out after the response so timing tells nothing either); INVALID_CODE covers every failure.
// It never creates accounts. Codes: 10 minutes, single use, stored as an HMAC keyed by the
// instance secret (D263): 10^8 codes are hashed in seconds, so a plain hash would give a reader
// of the database every live code.
//
// No limit here may let a stranger lock the address's owner out (docs/security.md): wrong codes
// are counted per (address, client) with the shared guess policy, not against the code (5 wrong
// tries from anyone used to burn it); the mail quota is kept per (address, client) too, and over
// it nothing is sent but the code already mailed stays good.
import { randomInt } from "node:crypto";
import { and, desc, eq, gt, inArray, isNull } from "drizzle-orm";
import type { BucketPermission, Deps, Scope } from "../../core/context";
import { safeEqual } from "../../core/crypto";
import { ApiError } from "../../core/errors";
import { newId } from "../../core/ids";
import { agentLoginCodes, buckets } from "../../db/schema";
import { transaction } from "../../db/tx";
import { capToRole, createApiKey } from "../accounts";
import { defaultAccountOf, findUserByEmail, normalizeEmail } from "../accounts";
import { twoFactorEnabled } from "../accounts";
import { mailerFor } from "../mail";
import { isoAfter } from "../../core/clock";
import { addressKey, FailureLog, GuessLimiter } from "../../core/guess-limits";

export const CODE_TTL_S = 600;
/** Wrong tries one code survives from all clients together: 1 in 100,000 of the 8-digit space. */
export const MAX_CODE_ATTEMPTS = 1000;
/** Codes one client may have mailed to one address per hour. */
export const CODES_PER_CLIENT_PER_HOUR = 5;
/** Codes mailed to one address per hour, whoever asks (bounds mail to a victim's inbox). */
export const CODES_PER_EMAIL_PER_HOUR = 20;

const guidance = (deps: Deps) => ({
  fallback_url: `${deps.urls.baseUrl}/oauth/device`,
  signup_url: `${deps.urls.baseUrl}/signup`,
  hint: "If no code arrives, or the code is refused, use the browser device sign-in (pier login, or the device flow in /api/v1/agent_auth/capabilities) instead of retrying. Sign-up happens in the web UI.",
});

const hashCode = (deps: Deps, id: string, code: string) => deps.secrets.sign("signin", `agent-login-code|${id}|${code}`);
/** Per running Pier (a field of Deps): codes mailed and wrong codes tried. */
export class EmailCodeLimits {
  readonly mailed = new FailureLog(3600_000);
  readonly guesses = new GuessLimiter({ perPair: 5, perAddress: 50, attackStep: 50, floor: 3, windowMs: 15 * 60_000 });

  /** May another code be mailed to `email` for this client? Records it when so. */
  takeMail(email: string, ip: string, now: number): boolean {
    const pair = `${email}|${addressKey(ip)}`;
    if (this.mailed.waitFor(pair, CODES_PER_CLIENT_PER_HOUR, now) > 0 || this.mailed.waitFor(email, CODES_PER_EMAIL_PER_HOUR, now) > 0) return false;
    this.mailed.add(pair, now, CODES_PER_CLIENT_PER_HOUR);
    this.mailed.add(email, now, CODES_PER_EMAIL_PER_HOUR);
    return true;
  }
}
export const newEmailCodeLog = () => new EmailCodeLimits();

export function requestCode(deps: Deps, input: { email: string }, ip: string) {
  const email = normalizeEmail(input.email);
  const answer = { status: "code_sent_if_the_address_can_sign_in", expires_in: CODE_TTL_S, ...guidance(deps) };
  const user = findUserByEmail(deps, email);
  if (!user || twoFactorEnabled(user)) return answer;
  const now = deps.clock.now();
  // Over the quota nothing more is mailed, and nothing is replaced: the newest code already
  // mailed stays the one verify_code accepts.
  if (!deps.emailCodesSent.takeMail(email, ip, now.getTime())) return answer;
  const id = newId("lcd");
  const code = String(randomInt(0, 100_000_000)).padStart(8, "0");
  deps.db
    .insert(agentLoginCodes)
    .values({
      id,
      email,
      userId: user.id,
      codeHash: hashCode(deps, id, code),
      createdAt: now.toISOString(),
      expiresAt: isoAfter(now, CODE_TTL_S * 1000),
    })
    .run();
  // After the response: the time to answer must not depend on whether mail is sent.
  queueMicrotask(() => {
    mailerFor(deps)
      .send({
        to: email,
        kind: "agent-login-code",
        subject: `Your Pier code: ${code}`,
        text: `Your code to connect an agent to Pier (${deps.urls.baseUrl}) is:\n\n    ${code}\n\nIt works once, for 10 minutes. If you did not ask for it, ignore this message: nothing happens without the code.\n`,
      })
      .catch((e) => deps.log.warn("agent login code not sent", { error: e instanceof Error ? e.message : String(e) }));
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

export function verifyCode(deps: Deps, input: VerifyInput, ip: string) {
  const invalid = () => new ApiError("INVALID_CODE", "The code is wrong, expired or used up.", guidance(deps));
  let email: string;
  try {
    email = normalizeEmail(input.email);
  } catch {
    throw invalid();
  }
  const guesses = deps.emailCodesSent.guesses;
  const { wait } = guesses.check(email, ip, deps.clock.now().getTime());
  if (wait > 0) {
    throw new ApiError(
      "TOO_MANY_ATTEMPTS",
      `Too many wrong codes from your network address. Try again in ${Math.ceil(wait / 60)} minutes, or use the browser device sign-in.`,
      { retry_after: wait, ...guidance(deps) },
      wait,
    );
  }
  const code = input.code.trim();
  const now = deps.clock.now().toISOString();
  const outcome = transaction(deps.db, (tx) => {
    // The newest live code for the address; every wrong try counts against it.
    const row = tx
      .select()
      .from(agentLoginCodes)
      .where(and(eq(agentLoginCodes.email, email), isNull(agentLoginCodes.usedAt), gt(agentLoginCodes.expiresAt, now)))
      .orderBy(desc(agentLoginCodes.createdAt))
      .get();
    if (!row || row.attempts >= MAX_CODE_ATTEMPTS) return invalid();
    if (!/^\d{8}$/.test(code) || !safeEqual(hashCode(deps, row.id, code), row.codeHash)) {
      tx.update(agentLoginCodes)
        .set({ attempts: row.attempts + 1 })
        .where(eq(agentLoginCodes.id, row.id))
        .run();
      return invalid();
    }
    guesses.succeed(email, ip);
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
      const known = new Set(
        tx
          .select({ id: buckets.id })
          .from(buckets)
          .where(and(eq(buckets.accountId, accountId), inArray(buckets.id, ids)))
          .all()
          .map((b) => b.id),
      );
      const unknown = ids.filter((id) => !known.has(id));
      if (unknown.length) return new ApiError("VALIDATION_FAILED", "Some bucket_ids are not buckets of this account.", { field: "bucket_ids", unknown });
      permissions = Object.fromEntries(ids.map((id) => [id, input.bucket_permissions?.[id] ?? "admin"]));
    }
    // A bad bucket selection is fixable: the code stays valid until the key is created.
    tx.update(agentLoginCodes).set({ usedAt: now }).where(eq(agentLoginCodes.id, row.id)).run();
    // Capped as an OAuth approval is (D295): the stored key never claims more than the user may give.
    const scope = capToRole(tx, accountId, user.id, input.permission_scope ?? input.scope ?? "bucket_admin");
    const { key, record } = createApiKey(
      deps,
      {
        accountId,
        userId: user.id,
        label: (input.label?.trim() || "Agent (email code)").slice(0, 200),
        kind: "agent",
        scope,
        bucketAccess: access,
        bucketPermissions: permissions,
      },
      tx,
    );
    return {
      api_key: key,
      key_id: record.id,
      permission_scope: scope,
      bucket_access: access,
      guidance:
        "Store api_key securely (for example in the user's config dir with 0600 permissions); never print or log it. Send it as Authorization: Bearer <key>.",
    };
  });
  if (outcome instanceof ApiError) {
    if (outcome.code === "INVALID_CODE") guesses.fail(email, ip, deps.clock.now().getTime());
    throw outcome;
  }
  return outcome;
}
