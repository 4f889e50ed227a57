// Authorization code grant with PKCE (RFC 6749 §4.1, RFC 7636, OAuth 2.1): S256 only, the
// redirect URI must match a registered one exactly, codes are single-use and short-lived.
import { createHash } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { oauthAuthCodes, oauthGrants } from "../../db/schema";
import { transaction } from "../../db/tx";
import { assertGrantType, getClient, type ClientRow } from "./clients";
import { OAuthError } from "./errors";
import { createGrant, holderRefusal, issueTokens, revokeGrant } from "./grants";
import { checkResource } from "./metadata";
import { parseScope, type ParsedScope } from "./scopes";
import { str } from "./device";
import { AUTH_CODE_TTL_S, hashSecret, newSecret } from "./credentials";
import { isoAfter } from "../../core/clock";

export interface AuthorizeRequest {
  client: ClientRow;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  scope: ParsedScope;
  resource: string | undefined;
}

/** Errors the user must see on the page: the client or its redirect URI cannot be trusted. */
export class UntrustedRedirectError extends Error {}

/**
 * Validate an authorization request. Problems with client_id or redirect_uri are never sent to
 * the redirect URI (RFC 6749 §4.1.2.1): they throw UntrustedRedirectError. Others throw
 * OAuthError, which the caller sends back to the (now trusted) redirect URI with `state`.
 */
export function validateAuthorizeRequest(deps: Deps, q: Record<string, unknown>): AuthorizeRequest {
  let client: ClientRow;
  try {
    client = getClient(deps, q.client_id);
  } catch {
    throw new UntrustedRedirectError("Unknown client_id: the application that sent you here is not registered with this Pier.");
  }
  const redirectUri = str(q.redirect_uri);
  if (!redirectUri && client.redirectUris.length !== 1) throw new UntrustedRedirectError("redirect_uri is required.");
  const uri = redirectUri ?? client.redirectUris[0]!;
  if (!client.redirectUris.includes(uri)) throw new UntrustedRedirectError("The redirect_uri does not match any URI the application registered.");
  const state = str(q.state);
  const fail = (code: ConstructorParameters<typeof OAuthError>[0], msg: string) =>
    new OAuthError(code, msg, { redirect_uri: uri, state, client_id: client.id });
  if (q.response_type !== "code") throw fail("unsupported_response_type", 'response_type must be "code".');
  try {
    assertGrantType(client, "authorization_code");
  } catch (e) {
    throw fail("unauthorized_client", (e as Error).message);
  }
  const challenge = str(q.code_challenge);
  if (q.code_challenge_method !== "S256" || !challenge) throw fail("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256.");
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) throw fail("invalid_request", "code_challenge must be a base64url SHA-256 (43 characters).");
  let scope: ParsedScope;
  try {
    scope = parseScope(str(q.scope));
    checkResource(deps, q.resource);
  } catch (e) {
    const oe = e as OAuthError;
    throw fail(oe.error, oe.description);
  }
  return { client, redirectUri: uri, state, codeChallenge: challenge, scope, resource: str(q.resource) };
}

/** Has this user an active connection with this client (approved it before, not revoked)? */
export function hasConsented(deps: Deps, userId: string, clientId: string): boolean {
  return !!deps.db
    .select({ id: oauthGrants.id })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.userId, userId), eq(oauthGrants.clientId, clientId), isNull(oauthGrants.revokedAt)))
    .get();
}

/** The redirect back to the client: `code` (or `error`), `state` and `iss` (RFC 9207). */
export function redirectWith(deps: Deps, redirectUri: string, params: Record<string, string | undefined>): string {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  u.searchParams.set("iss", deps.urls.baseUrl);
  return u.toString();
}

/** The signed-in user approved: create the connection and a single-use code. */
export function approveAuthorization(deps: Deps, actor: Actor, req: AuthorizeRequest): string {
  if (actor.kind !== "session" || !actor.userId) throw new ApiError("FORBIDDEN", "Approve connections in a signed-in browser.");
  const code = newSecret();
  const now = deps.clock.now();
  transaction(deps.db, (tx) => {
    const grant = createGrant(
      deps,
      {
        clientId: req.client.id,
        accountId: actor.accountId,
        userId: actor.userId!,
        flow: "authorization_code",
        scope: req.scope.scope,
        permission: req.scope.permission,
      },
      tx,
    );
    tx.insert(oauthAuthCodes)
      .values({
        codeHash: hashSecret(code),
        clientId: req.client.id,
        grantId: grant.id,
        redirectUri: req.redirectUri,
        codeChallenge: req.codeChallenge,
        createdAt: now.toISOString(),
        expiresAt: isoAfter(now, AUTH_CODE_TTL_S * 1000),
      })
      .run();
  });
  return redirectWith(deps, req.redirectUri, { code, state: req.state });
}

/** PKCE S256 (RFC 7636 §4.6): BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge. */
function s256(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

export function exchangeAuthorizationCode(deps: Deps, input: Record<string, unknown>) {
  const client = getClient(deps, input.client_id);
  assertGrantType(client, "authorization_code");
  const code = str(input.code);
  const verifier = str(input.code_verifier);
  if (!code) throw new OAuthError("invalid_request", "code is required.");
  if (!verifier || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier))
    throw new OAuthError("invalid_request", "code_verifier is required (43-128 characters, RFC 7636).");
  checkResource(deps, input.resource);
  const now = deps.clock.now().toISOString();
  const outcome = transaction(deps.db, (tx) => {
    const row = tx
      .select()
      .from(oauthAuthCodes)
      .where(eq(oauthAuthCodes.codeHash, hashSecret(code)))
      .get();
    if (!row || row.clientId !== client.id) return new OAuthError("invalid_grant", "Unknown authorization code.");
    if (row.usedAt) {
      // A replayed code means it leaked: revoke everything issued from it (RFC 6749 §4.1.2).
      revokeGrant(deps, row.grantId, "authorization_code_replay", tx);
      return new OAuthError("invalid_grant", "This authorization code was already used; the connection it created is revoked.");
    }
    tx.update(oauthAuthCodes).set({ usedAt: now }).where(eq(oauthAuthCodes.codeHash, row.codeHash)).run();
    // OAuth 2.1 (§4.1.3) drops redirect_uri from the token request: the PKCE verifier, required
    // here for every code, already binds the code to the client that asked for it. A client that
    // sends it (OAuth 2.0, RFC 6749 §4.1.3) must send the authorization request's own.
    const redirectUri = str(input.redirect_uri);
    const rejected =
      row.expiresAt <= now
        ? "The authorization code expired."
        : redirectUri && row.redirectUri !== redirectUri
          ? "redirect_uri does not match the authorization request."
          : s256(verifier) !== row.codeChallenge
            ? "PKCE verification failed: code_verifier does not match code_challenge."
            : null;
    if (rejected) {
      // The code is burnt and its not-yet-used connection goes with it: nothing stays granted.
      revokeGrant(deps, row.grantId, "authorization_code_rejected", tx);
      return new OAuthError("invalid_grant", rejected);
    }
    const grant = tx
      .select()
      .from(oauthGrants)
      .where(and(eq(oauthGrants.id, row.grantId), isNull(oauthGrants.revokedAt)))
      .get();
    if (!grant) return new OAuthError("invalid_grant", "The connection was revoked.");
    return holderRefusal(grant, tx) ?? issueTokens(deps, grant, tx);
  });
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}
