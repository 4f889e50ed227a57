// Connections (grants) and their tokens. A grant is one user's approval of one client on one
// account; access and refresh tokens belong to it, and so does the durable API key of a
// device login. Revoking the grant revokes all of them at once.
import { and, eq, isNull } from "drizzle-orm";
import type { Actor, Deps, Scope } from "../../core/context";
import { scopeRank } from "../../core/context";
import { apiKeys, memberships, oauthGrants, oauthTokens, users } from "../../db/schema";
import { transaction, type DbOrTx } from "../../db/tx";
import { capToRole, roleScope, runCredentialsEndedHooks } from "../accounts";
import { OAuthError } from "./errors";
import { ACCESS_TOKEN_PREFIX, ACCESS_TOKEN_TTL_S, hashSecret, REFRESH_TOKEN_PREFIX, REFRESH_TOKEN_TTL_S } from "./credentials";
import { newId, randomToken } from "../../core/ids";
import { isoAfter } from "../../core/clock";

export type GrantRow = typeof oauthGrants.$inferSelect;

export function createGrant(
  deps: Deps,
  input: { clientId: string; accountId: string; userId: string; flow: GrantRow["flow"]; scope: string; permission: Scope },
  db: DbOrTx = deps.db,
): GrantRow {
  // What the approving user may give today, as a named key's scope is capped at creation: a
  // member's approval of bucket_admin is bucket_write, and stays so if they are promoted later.
  const permission = capToRole(db, input.accountId, input.userId, input.permission);
  return db
    .insert(oauthGrants)
    .values({
      id: newId("cxn"),
      clientId: input.clientId,
      accountId: input.accountId,
      userId: input.userId,
      flow: input.flow,
      scope: input.scope,
      permissionScope: permission,
      createdAt: deps.clock.now().toISOString(),
    })
    .returning()
    .get();
}

export interface IssuedTokens {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** A fresh access + refresh token pair for a grant (inside the caller's transaction). */
export function issueTokens(deps: Deps, grant: GrantRow, db: DbOrTx = deps.db): IssuedTokens {
  const now = deps.clock.now();
  const access = ACCESS_TOKEN_PREFIX + randomToken(40);
  const refresh = REFRESH_TOKEN_PREFIX + randomToken(48);
  db.insert(oauthTokens)
    .values([
      {
        tokenHash: hashSecret(access),
        id: newId("tok"),
        kind: "access",
        grantId: grant.id,
        createdAt: now.toISOString(),
        expiresAt: isoAfter(now, ACCESS_TOKEN_TTL_S * 1000),
      },
      {
        tokenHash: hashSecret(refresh),
        id: newId("tok"),
        kind: "refresh",
        grantId: grant.id,
        createdAt: now.toISOString(),
        expiresAt: isoAfter(now, REFRESH_TOKEN_TTL_S * 1000),
      },
    ])
    .run();
  return { access_token: access, token_type: "Bearer", expires_in: ACCESS_TOKEN_TTL_S, refresh_token: refresh, scope: grant.scope };
}

/** Revoke a connection: its tokens stop working at once, and so does its API key. */
export function revokeGrant(deps: Deps, grantId: string, reason: string, db: DbOrTx = deps.db): void {
  transaction(db, (tx) => {
    const now = deps.clock.now().toISOString();
    const grant = tx
      .update(oauthGrants)
      .set({ revokedAt: now, revokedReason: reason })
      .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt)))
      .returning()
      .get();
    if (grant?.apiKeyId)
      tx.update(apiKeys)
        .set({ revokedAt: now })
        .where(and(eq(apiKeys.id, grant.apiKeyId), isNull(apiKeys.revokedAt)))
        .run();
    tx.delete(oauthTokens).where(eq(oauthTokens.grantId, grantId)).run();
    // What the connection and its key held goes with them (their file locks: D257).
    if (grant) runCredentialsEndedHooks(deps, grant.apiKeyId ? [grant.id, grant.apiKeyId] : [grant.id], tx);
  });
}

/** Bearer resolver for OAuth access tokens (wired into buildApp and the MCP endpoint). */
export function actorFromOAuthToken(deps: Deps, token: string): Actor | null {
  if (!token.startsWith(ACCESS_TOKEN_PREFIX) || token.length > 200) return null;
  const row = deps.db
    .select({ token: oauthTokens, grant: oauthGrants })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(and(eq(oauthTokens.tokenHash, hashSecret(token)), eq(oauthTokens.kind, "access")))
    .get();
  if (!row || row.grant.revokedAt) return null;
  if (row.token.expiresAt <= deps.clock.now().toISOString()) return null;
  return actorOfGrant(deps, row.grant, true);
}

/** What a connection may do now, by its grant id (null when revoked or its user left); not a use of it. */
export function actorFromGrantId(deps: Deps, grantId: string): Actor | null {
  const grant = deps.db
    .select()
    .from(oauthGrants)
    .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt)))
    .get();
  return grant ? actorOfGrant(deps, grant, false) : null;
}

/** The approving user's role and flags on the grant's account; undefined when they left it. */
function holderOf(db: DbOrTx, grant: GrantRow) {
  return db
    .select({ role: memberships.role, admin: users.isInstanceAdmin, disabledAt: users.disabledAt })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.accountId, grant.accountId), eq(memberships.userId, grant.userId)))
    .get();
}

/**
 * Why the token endpoint must not mint tokens for this connection now, or null. Its tokens
 * would be refused on use (actorOfGrant) for the same reasons, so a refresh, a code exchange or
 * a device poll is refused with invalid_grant instead of handing out dead tokens (D294). The
 * connection is not revoked and a refresh token not spent: enabling the user again restores them
 * (D147). An authorization code is burnt, as by any failed exchange.
 */
export function holderRefusal(grant: GrantRow, db: DbOrTx): OAuthError | null {
  const m = holderOf(db, grant);
  if (!m) return new OAuthError("invalid_grant", "The user who approved this connection is no longer a member of its account.");
  if (m.disabledAt) return new OAuthError("invalid_grant", "The user who approved this connection was disabled by the instance's admin.");
  return null;
}

function actorOfGrant(deps: Deps, grant: GrantRow, used: boolean): Actor | null {
  const now = deps.clock.now();
  const m = holderOf(deps.db, grant);
  if (!m) return null; // the approving user left the account: the connection dies with the membership
  if (m.disabledAt) return null; // a disabled user's connections stop working until they are enabled
  if (used && (!grant.lastUsedAt || now.getTime() - Date.parse(grant.lastUsedAt) > 60_000)) {
    deps.db.update(oauthGrants).set({ lastUsedAt: now.toISOString() }).where(eq(oauthGrants.id, grant.id)).run();
  }
  const cap = roleScope(m.role);
  const scope = scopeRank[grant.permissionScope] <= scopeRank[cap] ? grant.permissionScope : cap;
  return {
    kind: "oauth",
    credentialId: grant.id,
    userId: grant.userId,
    accountId: grant.accountId,
    scope,
    bucketAccess: "all",
    bucketPermissions: {},
    isAccountOwner: m.role === "owner" && scope === "bucket_admin",
    isInstanceAdmin: m.admin,
  };
}
