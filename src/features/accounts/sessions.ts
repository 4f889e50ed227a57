// Browser sessions: a random token (the cookie that carries it is src/http/session-cookie.ts)
// of which only the SHA-256 is stored, a sliding expiry, and the CSRF token bound to it.
import { and, eq, ne } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { randomSecret, safeEqual, sha256Hex } from "../../core/crypto";
import { newId } from "../../core/ids";
import { accounts, memberships, sessions } from "../../db/schema";
import { ApiError } from "../../core/errors";
import { credentialQueries, memberOf } from "./credential-queries";
import { roleScope } from "./roles";
import { defaultAccountOf } from "./service";
import { isoAfter } from "../../core/clock";
import type { Tx } from "../../db/tx";

const SHORT_MS = 12 * 3600_000;
const REMEMBER_MS = 30 * 24 * 3600_000;

export type SessionRow = typeof sessions.$inferSelect;

export function createSession(
  deps: Deps,
  userId: string,
  opts: { remember: boolean; userAgent?: string; ip?: string },
): { token: string; session: SessionRow; maxAgeSeconds: number } {
  const token = randomSecret(32);
  const now = deps.clock.now();
  const ttl = opts.remember ? REMEMBER_MS : SHORT_MS;
  const session = deps.db
    .insert(sessions)
    .values({
      tokenHash: sha256Hex(token),
      id: newId("ses"),
      userId,
      accountId: defaultAccountOf(deps, userId),
      remember: opts.remember,
      userAgent: (opts.userAgent ?? "").slice(0, 300),
      ip: opts.ip ?? "",
      createdAt: now.toISOString(),
      lastSeenAt: now.toISOString(),
      expiresAt: isoAfter(now, ttl),
    })
    .returning()
    .get();
  return { token, session, maxAgeSeconds: Math.floor(ttl / 1000) };
}

export function findSession(deps: Deps, token: string | undefined): SessionRow | null {
  if (!token || token.length > 200) return null;
  const row = credentialQueries(deps.db).sessionByHash.get({ hash: sha256Hex(token) });
  if (!row) return null;
  const now = deps.clock.now();
  if (row.expiresAt <= now.toISOString()) {
    deps.db.delete(sessions).where(eq(sessions.tokenHash, row.tokenHash)).run();
    return null;
  }
  // Sliding expiry, written at most once a minute.
  if (now.getTime() - Date.parse(row.lastSeenAt) > 60_000) {
    const ttl = row.remember ? REMEMBER_MS : SHORT_MS;
    deps.db
      .update(sessions)
      .set({ lastSeenAt: now.toISOString(), expiresAt: isoAfter(now, ttl) })
      .where(eq(sessions.tokenHash, row.tokenHash))
      .run();
  }
  return row;
}

export function actorFromSession(deps: Deps, session: SessionRow): Actor | null {
  let accountId = session.accountId ?? defaultAccountOf(deps, session.userId);
  if (!accountId) return null;
  let m = memberOf(deps.db, accountId, session.userId);
  if (!m && session.accountId) {
    // The account switched to (D323) no longer has this user: back to the one a sign-in would pick.
    accountId = defaultAccountOf(deps, session.userId);
    m = accountId ? memberOf(deps.db, accountId, session.userId) : undefined;
  }
  if (!accountId || !m || m.disabledAt) return null;
  return {
    kind: "session",
    credentialId: session.id,
    userId: session.userId,
    accountId,
    scope: roleScope(m.role),
    bucketAccess: "all",
    bucketPermissions: {},
    isAccountOwner: m.role === "owner",
    isInstanceAdmin: m.admin,
  };
}

/** What a browser session may do now, by its id (null when signed out, expired or its user left); not a use of it. */
export function actorFromSessionId(deps: Deps, sessionId: string): Actor | null {
  const row = deps.db.select().from(sessions).where(eq(sessions.id, sessionId)).get();
  if (!row || row.expiresAt <= deps.clock.now().toISOString()) return null;
  return actorFromSession(deps, row);
}

export function destroySession(deps: Deps, token: string | undefined): void {
  if (token)
    deps.db
      .delete(sessions)
      .where(eq(sessions.tokenHash, sha256Hex(token)))
      .run();
}

/** CSRF token bound to the session: forms and dashboard XHRs must echo it. */
/** End every session of the user but `keepSessionId` (a password change, two-factor turned on); how many ended. */
export function endOtherSessions(tx: Tx, userId: string, keepSessionId: string): number {
  return tx
    .delete(sessions)
    .where(and(eq(sessions.userId, userId), ne(sessions.id, keepSessionId)))
    .returning({ id: sessions.id })
    .all().length;
}

export function csrfToken(deps: Deps, sessionId: string): string {
  return deps.secrets.sign("csrf", `session:${sessionId}`);
}

export function checkCsrf(deps: Deps, sessionId: string, presented: string | null | undefined): boolean {
  return !!presented && safeEqual(csrfToken(deps, sessionId), presented);
}

/** The accounts a user belongs to, for the dashboard's account switcher: name and role, by name. */
export function accountsOfUser(deps: Deps, userId: string): { id: string; name: string; role: string }[] {
  return deps.db
    .select({ id: accounts.id, name: accounts.name, role: memberships.role })
    .from(memberships)
    .innerJoin(accounts, eq(accounts.id, memberships.accountId))
    .where(eq(memberships.userId, userId))
    .orderBy(accounts.name, accounts.id)
    .all();
}

/**
 * Point a browser session at another account its user belongs to: every page and action of the
 * session then acts as a member of that account, with that membership's role. Any other account
 * is not found (its existence is not revealed).
 */
export function switchSessionAccount(deps: Deps, session: Pick<SessionRow, "id" | "userId">, accountId: string): void {
  const m = memberOf(deps.db, accountId, session.userId);
  if (!m || m.disabledAt) throw new ApiError("ACCOUNT_NOT_FOUND", "You are not a member of that account.");
  deps.db.update(sessions).set({ accountId }).where(eq(sessions.id, session.id)).run();
}
