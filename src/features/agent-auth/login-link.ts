// browser_login_link: an agent holding a key hands its user a one-time link that signs the
// browser in to the dashboard (e.g. to approve something or revoke a connection). Opening the
// link shows a "Continue" button; only the POST consumes it, so link scanners and previews cannot.
//
// A browser session holds the owner's full power, so only a credential that already holds it may
// mint a link: an API key or OAuth token of the account's owner, with bucket_admin scope over all
// buckets (`isAccountOwner` and bucket access "all"). A bucket_read key, a key limited to selected
// buckets, or a member's key is refused: otherwise the link would turn it into the owner. Refused
// too for users with two-factor on: a key must not be a way around the second factor. And the
// session it opens never saw the password: its account-security actions (keys, two-factor,
// connections) ask for the password first (sudo mode, sudo.ts in accounts).
import { and, eq, isNull } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { randomSecret, sha256Hex } from "../../core/crypto";
import { ApiError } from "../../core/errors";
import { loginLinks, memberships, sessions, users } from "../../db/schema";
import { transaction } from "../../db/tx";
import { createSession } from "../accounts";
import { twoFactorEnabled } from "../accounts";
import { safeNext } from "../../http/browser";
import { actorFromApiKeyId } from "../accounts";
import { actorFromGrantId } from "../oauth";
import { isoAfter } from "../../core/clock";

export const LOGIN_LINK_TTL_S = 300;

/** A credential with everything a browser session of the owner could do (see the header). */
export function holdsOwnersFullPower(actor: Actor): boolean {
  return (actor.kind === "api_key" || actor.kind === "oauth") && actor.isAccountOwner && actor.scope === "bucket_admin" && actor.bucketAccess === "all";
}

export function createLoginLink(deps: Deps, actor: Actor, input: { redirect_path?: string }) {
  if (actor.kind === "session") throw new ApiError("FORBIDDEN", "You are already signed in in this browser.");
  if (!actor.userId) throw new ApiError("FORBIDDEN", "This credential belongs to no user.");
  if (!holdsOwnersFullPower(actor)) {
    throw new ApiError(
      "FORBIDDEN",
      "Only the account owner's credential with bucket_admin scope over all buckets may create a browser login link; sign in at /signin instead.",
      {
        reason: "needs_owner_full_access",
        required_scope: "bucket_admin",
        signin_url: `${deps.urls.baseUrl}/signin`,
      },
    );
  }
  const path = input.redirect_path ?? "/dashboard";
  if (safeNext(path, "") !== path)
    throw new ApiError("VALIDATION_FAILED", "redirect_path must be a path on this Pier, such as /dashboard or /account/access.", { field: "redirect_path" });
  const user = deps.db.select().from(users).where(eq(users.id, actor.userId)).get();
  if (!user) throw new ApiError("FORBIDDEN", "This credential belongs to no user.");
  if (twoFactorEnabled(user)) {
    throw new ApiError("FORBIDDEN", "Browser login links are disabled for accounts with two-factor authentication; sign in at /signin instead.", {
      reason: "two_factor",
      signin_url: `${deps.urls.baseUrl}/signin`,
    });
  }
  const token = randomSecret(32);
  const now = deps.clock.now();
  const expiresAt = isoAfter(now, LOGIN_LINK_TTL_S * 1000);
  deps.db
    .insert(loginLinks)
    .values({
      tokenHash: sha256Hex(token),
      userId: user.id,
      accountId: actor.accountId,
      credentialId: actor.credentialId,
      redirectPath: path,
      createdAt: now.toISOString(),
      expiresAt,
    })
    .run();
  return { url: `${deps.urls.baseUrl}/login_link/${token}`, expires_at: expiresAt, redirect_path: path, one_time: true };
}

const invalid = () =>
  new ApiError("LOGIN_LINK_NOT_FOUND", "This sign-in link is invalid, expired or already used. Ask your agent for a new one, or sign in at /signin.");

/** Is the link usable (for the confirmation page)? */
export function peekLoginLink(deps: Deps, token: string) {
  const row =
    token.length <= 100
      ? deps.db
          .select()
          .from(loginLinks)
          .where(eq(loginLinks.tokenHash, sha256Hex(token)))
          .get()
      : undefined;
  if (!row || row.usedAt || row.expiresAt <= deps.clock.now().toISOString()) throw invalid();
  const user = deps.db.select({ email: users.email }).from(users).where(eq(users.id, row.userId)).get();
  if (!user) throw invalid();
  return { ...row, email: user.email };
}

/** Consume the link once and start a browser session for its user. */
export function useLoginLink(deps: Deps, token: string, meta: { ip: string; userAgent: string }) {
  const now = deps.clock.now().toISOString();
  return transaction(deps.db, (tx) => {
    const row = peekLoginLink(deps, token);
    const used = tx
      .update(loginLinks)
      .set({ usedAt: now })
      .where(and(eq(loginLinks.tokenHash, row.tokenHash), isNull(loginLinks.usedAt)))
      .returning()
      .get();
    if (!used) throw invalid();
    const user = tx.select().from(users).where(eq(users.id, row.userId)).get();
    // Two-factor switched on since the link was made: the link no longer works.
    if (!user || twoFactorEnabled(user) || user.disabledAt) throw invalid();
    if (
      !tx
        .select()
        .from(memberships)
        .where(and(eq(memberships.userId, user.id), eq(memberships.accountId, row.accountId)))
        .get()
    )
      throw invalid();
    // The credential that minted the link must still hold the owner's full power now: revoking
    // a leaked key (or narrowing it, or the user's role) also ends the links it handed out.
    const minter = actorFromApiKeyId(deps, row.credentialId) ?? actorFromGrantId(deps, row.credentialId);
    if (!minter || !holdsOwnersFullPower(minter) || minter.userId !== user.id || minter.accountId !== row.accountId) throw invalid();
    const session = createSession(deps, user.id, { remember: false, userAgent: meta.userAgent, ip: meta.ip });
    // The browser acts on the account the agent's key acts on.
    tx.update(sessions).set({ accountId: row.accountId }).where(eq(sessions.id, session.session.id)).run();
    return { session, redirectPath: row.redirectPath, email: user.email };
  });
}
