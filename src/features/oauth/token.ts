// The token endpoint (RFC 6749 §3.2): one entry point, dispatched on grant_type.
import { eq } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { apiKeys, oauthGrants, oauthTokens } from "../../db/schema";
import { transaction } from "../../db/tx";
import { exchangeAuthorizationCode } from "./authorize";
import { assertGrantType, DEVICE_GRANT, getClient } from "./clients";
import { pollDeviceToken, str } from "./device";
import { OAuthError } from "./errors";
import { holderRefusal, issueTokens, revokeGrant } from "./grants";
import { hashSecret, REFRESH_TOKEN_PREFIX } from "./credentials";

export function tokenRequest(deps: Deps, input: Record<string, unknown>) {
  switch (input.grant_type) {
    case "authorization_code":
      return exchangeAuthorizationCode(deps, input);
    case DEVICE_GRANT:
      return pollDeviceToken(deps, input);
    case "refresh_token":
      return refresh(deps, input);
    case undefined:
      throw new OAuthError("invalid_request", "grant_type is required.");
    default:
      throw new OAuthError("unsupported_grant_type", `Supported grant types: authorization_code, ${DEVICE_GRANT}, refresh_token.`);
  }
}

/**
 * Refresh with rotation (OAuth 2.1 §4.3.1): every refresh token works once. Presenting a
 * rotated one again means two parties hold it, so the whole family (the connection, its
 * tokens and its API key) is revoked (RFC 9700 §4.14.2). A `scope` parameter is ignored: a
 * refresh keeps the connection's scope.
 */
function refresh(deps: Deps, input: Record<string, unknown>) {
  const client = getClient(deps, input.client_id);
  assertGrantType(client, "refresh_token");
  const token = str(input.refresh_token);
  if (!token || !token.startsWith(REFRESH_TOKEN_PREFIX) || token.length > 200) throw new OAuthError("invalid_grant", "Unknown refresh token.");
  const now = deps.clock.now().toISOString();
  const outcome = transaction(deps.db, (tx) => {
    const row = tx
      .select({ token: oauthTokens, grant: oauthGrants })
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .where(eq(oauthTokens.tokenHash, hashSecret(token)))
      .get();
    if (!row || row.token.kind !== "refresh" || row.grant.clientId !== client.id || row.grant.revokedAt)
      return new OAuthError("invalid_grant", "Unknown refresh token.");
    if (row.token.usedAt) {
      revokeGrant(deps, row.grant.id, "refresh_token_reuse", tx);
      return new OAuthError("invalid_grant", "This refresh token was already used; the connection is revoked. Sign in again.");
    }
    if (row.token.expiresAt <= now) return new OAuthError("invalid_grant", "The refresh token expired. Sign in again.");
    // Refused before it is spent: the token works again once the user is enabled again.
    const refused = holderRefusal(row.grant, tx);
    if (refused) return refused;
    tx.update(oauthTokens).set({ usedAt: now }).where(eq(oauthTokens.tokenHash, row.token.tokenHash)).run();
    return issueTokens(deps, row.grant, tx);
  });
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}

/**
 * Token revocation (RFC 7009) for this client's credentials: an access token, a refresh token or
 * the pier_api_key of a device login. Any of them ends the whole connection (`pier logout`).
 * Unknown tokens answer 200 too (RFC 7009 §2.2), so the endpoint reveals nothing.
 */
export function revokeToken(deps: Deps, input: Record<string, unknown>): Record<string, never> {
  const client = getClient(deps, input.client_id);
  const token = str(input.token);
  if (!token) throw new OAuthError("invalid_request", "token is required.");
  if (token.length > 200) return {};
  const hash = hashSecret(token);
  const viaToken = deps.db.select({ grantId: oauthTokens.grantId }).from(oauthTokens).where(eq(oauthTokens.tokenHash, hash)).get();
  const viaKey = viaToken
    ? undefined
    : deps.db
        .select({ grantId: oauthGrants.id })
        .from(oauthGrants)
        .innerJoin(apiKeys, eq(apiKeys.id, oauthGrants.apiKeyId))
        .where(eq(apiKeys.tokenHash, hash))
        .get();
  const grantId = viaToken?.grantId ?? viaKey?.grantId;
  if (!grantId) return {};
  const grant = deps.db.select({ clientId: oauthGrants.clientId }).from(oauthGrants).where(eq(oauthGrants.id, grantId)).get();
  if (grant?.clientId === client.id) revokeGrant(deps, grantId, "revoked_by_client");
  return {};
}
