// The GitHub App's OAuth side ("user-to-server"), through oauth4webapi: the authorization-code
// exchange at the end of the install/authorize round trip, and the refresh-token grant that
// renews an expiring user token. GitHub answers both at {web}/login/oauth/access_token.
// https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/refreshing-user-access-tokens
import * as oauth from "oauth4webapi";
import type { Deps } from "../../core/context";
import type { GithubApp } from "./github-app";

/** What GitHub hands back: expiring apps add refresh_token (6 months) and expires_in (8 hours). */
export interface UserTokens {
  accessToken: string;
  /** Absent when the app opted out of expiring user tokens. */
  refreshToken: string | null;
  accessTokenExpiresAt: Date | null;
  refreshTokenExpiresAt: Date | null;
}

/** GitHub refused the code or the refresh token (expired, revoked, already used): only a new authorization helps. */
export class GithubGrantRefused extends Error {}

const TOKEN_TIMEOUT_MS = 20_000;

function authorizationServer(app: GithubApp): oauth.AuthorizationServer {
  return {
    issuer: app.webUrl,
    authorization_endpoint: `${app.webUrl}/login/oauth/authorize`,
    token_endpoint: `${app.webUrl}/login/oauth/access_token`,
  };
}

const clientOf = (app: GithubApp): oauth.Client => ({ client_id: app.clientId });

// GitHub's web origin is https; plain http only where the operator allows plain http git (tests, private GHES).
const requestOptions = (deps: Deps) => ({
  ...(deps.config.gitAllowHttp === "on" ? { [oauth.allowInsecureRequests]: true } : {}),
  signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
});

function tokensOf(deps: Deps, r: oauth.TokenEndpointResponse): UserTokens {
  const now = deps.clock.now().getTime();
  const refreshIn = Number((r as { refresh_token_expires_in?: unknown }).refresh_token_expires_in);
  return {
    accessToken: r.access_token,
    refreshToken: typeof r.refresh_token === "string" && r.refresh_token ? r.refresh_token : null,
    accessTokenExpiresAt: typeof r.expires_in === "number" ? new Date(now + r.expires_in * 1000) : null,
    refreshTokenExpiresAt: Number.isFinite(refreshIn) && refreshIn > 0 ? new Date(now + refreshIn * 1000) : null,
  };
}

/**
 * GitHub answers a refused grant with 200 and an `error` member (not the 400 RFC 6749 asks for),
 * which oauth4webapi reports as a response without access_token; both shapes mean "refused".
 * Anything else (network, timeout, 5xx) is GitHub being unavailable.
 */
function refused(e: unknown): boolean {
  if (e instanceof oauth.ResponseBodyError) return true;
  if (e instanceof oauth.OperationProcessingError) {
    const body = (e.cause as { body?: { error?: unknown } } | undefined)?.body;
    return typeof body?.error === "string";
  }
  return false;
}

async function grant<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (refused(e)) throw new GithubGrantRefused(`GitHub refused the grant: ${String((e as Error).message).slice(0, 200)}`);
    throw e;
  }
}

/** The code from GitHub's redirect (state already checked by the caller) for the user's tokens. */
export async function exchangeCode(deps: Deps, app: GithubApp, callback: URL, state: string, redirectUri: string): Promise<UserTokens> {
  const as = authorizationServer(app);
  const client = clientOf(app);
  return grant(async () => {
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const res = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(app.clientSecret),
      params,
      redirectUri,
      oauth.nopkce,
      requestOptions(deps),
    );
    return tokensOf(deps, await oauth.processAuthorizationCodeResponse(as, client, res));
  });
}

/** A new user token for a refresh token; GitHub rotates the refresh token (the old one stops working). */
export async function refreshUserToken(deps: Deps, app: GithubApp, refreshToken: string): Promise<UserTokens> {
  const as = authorizationServer(app);
  const client = clientOf(app);
  return grant(async () => {
    const res = await oauth.refreshTokenGrantRequest(as, client, oauth.ClientSecretPost(app.clientSecret), refreshToken, requestOptions(deps));
    return tokensOf(deps, await oauth.processRefreshTokenResponse(as, client, res));
  });
}
