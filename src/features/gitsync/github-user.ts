// A GitHub user's own authorization of the app, kept so that an export can create a repository in
// that user's personal account: GitHub lets an installation token create repositories only in
// organizations, and POST /user/repos needs a user token. The authorization comes from the
// install/authorize round trip (github-setup.ts) and is kept per Pier account and GitHub user,
// sealed with the instance key; an expiring app's refresh token is rotated at every use.
// https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/refreshing-user-access-tokens
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { randomToken } from "../../core/ids";
import { githubUserAuthorizations } from "../../db/schema";
import { GithubError, githubRequest, installationInfo, requireGithubApp, type GithubApp, type GithubRepository } from "./github-app";
import { GithubGrantRefused, refreshUserToken, type UserTokens } from "./github-oauth";
import type { InstallationRow } from "./github-setup";

type AuthorizationRow = typeof githubUserAuthorizations.$inferSelect;

export interface GithubUser {
  id: number;
  login: string;
}

const aad = (rowId: string) => `github-user:${rowId}`;
const seal = (deps: Deps, rowId: string, token: string) => deps.secrets.seal("github", token, aad(rowId));
/** The kept token, or null when it cannot be opened (instance key changed, value copied from another row). */
function open(deps: Deps, rowId: string, sealed: string): string | null {
  try {
    return deps.secrets.open("github", sealed, aad(rowId));
  } catch {
    return null;
  }
}

/** The signed-in GitHub user behind a user token (GET /user). */
export function githubUserOf(app: GithubApp, userToken: string): Promise<GithubUser> {
  return githubRequest<GithubUser>(app, "GET", "/user", { bearer: userToken });
}

/** What a token grant leaves to keep: the refresh token when the app's user tokens expire, else the access token itself. */
function sealedTokens(deps: Deps, rowId: string, tokens: UserTokens) {
  return tokens.refreshToken
    ? {
        refreshTokenSealed: seal(deps, rowId, tokens.refreshToken),
        refreshTokenExpiresAt: tokens.refreshTokenExpiresAt?.toISOString() ?? null,
        accessTokenSealed: null,
      }
    : { refreshTokenSealed: null, refreshTokenExpiresAt: null, accessTokenSealed: seal(deps, rowId, tokens.accessToken) };
}

/** Keep (or replace) a GitHub user's authorization for one Pier account. */
export function rememberUserAuthorization(deps: Deps, accountId: string, pierUserId: string, user: GithubUser, tokens: UserTokens): void {
  const now = deps.clock.now().toISOString();
  const existing = deps.db
    .select({ id: githubUserAuthorizations.id })
    .from(githubUserAuthorizations)
    .where(and(eq(githubUserAuthorizations.accountId, accountId), eq(githubUserAuthorizations.githubUserId, user.id)))
    .get();
  const id = existing?.id ?? `ghua_${randomToken(20)}`;
  const values = { githubLogin: user.login, linkedByUserId: pierUserId || null, updatedAt: now, ...sealedTokens(deps, id, tokens) };
  if (existing) deps.db.update(githubUserAuthorizations).set(values).where(eq(githubUserAuthorizations.id, id)).run();
  else
    deps.db
      .insert(githubUserAuthorizations)
      .values({ id, accountId, githubUserId: user.id, createdAt: now, ...values })
      .run();
}

/** GitHub said the user revoked the app's authorization (github_app_authorization revoked): forget it everywhere. */
export function forgetUserAuthorizations(deps: Deps, githubUserId: number): number {
  return deps.db.delete(githubUserAuthorizations).where(eq(githubUserAuthorizations.githubUserId, githubUserId)).returning().all().length;
}

function authorizationRequired(login: string, settingsUrl: string, message?: string): ApiError {
  return new ApiError(
    "GITHUB_AUTHORIZATION_REQUIRED",
    message ??
      `Pier holds no valid GitHub authorization for ${login}: open the bucket's Git page and use "Link an existing installation" (signed in to GitHub as ${login}), then export again. Nothing was created.`,
    { settings_url: settingsUrl, account_login: login },
  );
}

function authorizationFor(deps: Deps, accountId: string, login: string): AuthorizationRow | undefined {
  return deps.db
    .select()
    .from(githubUserAuthorizations)
    .where(and(eq(githubUserAuthorizations.accountId, accountId), sql`lower(${githubUserAuthorizations.githubLogin}) = ${login.toLowerCase()}`))
    .get();
}

/** Drop the row only if it still holds what we used (another process may have rotated it meanwhile). */
function dropIfUnchanged(deps: Deps, row: AuthorizationRow): void {
  const same =
    row.refreshTokenSealed !== null
      ? eq(githubUserAuthorizations.refreshTokenSealed, row.refreshTokenSealed)
      : row.accessTokenSealed !== null
        ? eq(githubUserAuthorizations.accessTokenSealed, row.accessTokenSealed)
        : isNull(githubUserAuthorizations.refreshTokenSealed);
  deps.db
    .delete(githubUserAuthorizations)
    .where(and(eq(githubUserAuthorizations.id, row.id), same))
    .run();
}

/**
 * One use of an authorization at a time per Pier account and GitHub login in this process: a
 * refresh kills the access token issued with the previous refresh token, so a second export must
 * not refresh while the first still uses its token, and GitHub's refusal of a refresh token
 * already used must not erase the rotation that used it.
 */
async function oneAtATime<T>(key: string, run: () => Promise<T>): Promise<T> {
  const previous = inUse.get(key) ?? Promise.resolve();
  const mine = previous.then(run);
  const settled = mine.then(
    () => {},
    () => {},
  );
  inUse.set(key, settled);
  try {
    return await mine;
  } finally {
    if (inUse.get(key) === settled) inUse.delete(key);
  }
}

const inUse = new Map<string, Promise<void>>();

/**
 * A user token for the GitHub user `login` as this Pier account knows them. An expiring app's
 * refresh token is exchanged now and the rotated one stored at once (GitHub invalidates the old
 * one on use); a refusal that is not explained by a concurrent rotation forgets the authorization
 * and asks for a new one. A non-expiring token is used as it is.
 */
async function userToken(deps: Deps, app: GithubApp, accountId: string, login: string, settingsUrl: string): Promise<{ token: string; row: AuthorizationRow }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const row = authorizationFor(deps, accountId, login);
    if (!row) throw authorizationRequired(login, settingsUrl);
    const kept = row.accessTokenSealed ?? row.refreshTokenSealed;
    const token = kept ? open(deps, row.id, kept) : null;
    const expired = row.refreshTokenSealed !== null && row.refreshTokenExpiresAt !== null && row.refreshTokenExpiresAt <= deps.clock.now().toISOString();
    if (token === null || expired) {
      dropIfUnchanged(deps, row);
      throw authorizationRequired(login, settingsUrl);
    }
    if (row.accessTokenSealed) return { token, row };
    let tokens: UserTokens;
    try {
      tokens = await refreshUserToken(deps, app, token);
    } catch (e) {
      if (!(e instanceof GithubGrantRefused)) throw new ApiError("GITHUB_UNAVAILABLE", undefined, { reason: (e as Error).message?.slice(0, 200) });
      // Another serving process rotated it meanwhile: try again with the one it stored.
      const now = authorizationFor(deps, accountId, login);
      if (now && now.refreshTokenSealed !== row.refreshTokenSealed) continue;
      dropIfUnchanged(deps, row);
      throw authorizationRequired(login, settingsUrl);
    }
    const stored = deps.db
      .update(githubUserAuthorizations)
      .set({ ...sealedTokens(deps, row.id, tokens), updatedAt: deps.clock.now().toISOString() })
      .where(eq(githubUserAuthorizations.id, row.id))
      .returning()
      .get();
    return { token: tokens.accessToken, row: stored ?? row };
  }
  throw authorizationRequired(login, settingsUrl);
}

/**
 * A new private, empty repository in a personal account that has the app installed: refresh the
 * owner's user token, check it is that account's, `POST /user/repos`, then make sure the
 * installation reaches the repository (a "selected repositories" installation gets it added with
 * `PUT /user/installations/{id}/repositories/{repo}`). Nothing is created when the authorization
 * is missing, expired or revoked. GitHub errors other than authorization come back as GithubError.
 */
export function createUserRepository(deps: Deps, installation: InstallationRow, name: string, settingsUrl: string): Promise<GithubRepository> {
  const key = `${installation.accountId}:${installation.targetLogin.toLowerCase()}`;
  return oneAtATime(key, () => createWithUserToken(deps, installation, name, settingsUrl));
}

async function createWithUserToken(deps: Deps, installation: InstallationRow, name: string, settingsUrl: string): Promise<GithubRepository> {
  const app = requireGithubApp(deps);
  const login = installation.targetLogin;
  const { token, row } = await userToken(deps, app, installation.accountId, login, settingsUrl);
  const refusedToken = (e: unknown) => {
    if (e instanceof GithubError && e.status === 401) {
      dropIfUnchanged(deps, row);
      return authorizationRequired(login, settingsUrl);
    }
    return e;
  };
  let me: GithubUser;
  try {
    me = await githubUserOf(app, token);
  } catch (e) {
    throw refusedToken(e);
  }
  if (me.login.toLowerCase() !== login.toLowerCase())
    throw authorizationRequired(
      login,
      settingsUrl,
      `The kept GitHub authorization belongs to ${me.login}, not ${login}: authorize again on the bucket's Git page.`,
    );
  let repo: GithubRepository;
  try {
    repo = await githubRequest<GithubRepository>(
      app,
      "POST",
      "/user/repos",
      { bearer: token },
      { name, private: true, auto_init: false, description: "Synced with a Pier bucket" },
    );
  } catch (e) {
    throw refusedToken(e);
  }
  await grantToInstallation(deps, app, installation.installationId, repo, token);
  return repo;
}

/**
 * An installation limited to selected repositories does not see a repository created after it;
 * add it. If GitHub refuses, the export still goes ahead: its first sync then stops with
 * repository_access_removed, and granting the repository on GitHub resumes it (webhook).
 */
async function grantToInstallation(deps: Deps, app: GithubApp, installationId: number, repo: GithubRepository, userToken: string): Promise<void> {
  try {
    const info = await installationInfo(deps, installationId);
    if (info.repository_selection === "all") return;
    await githubRequest(app, "PUT", `/user/installations/${installationId}/repositories/${repo.id}`, { bearer: userToken });
  } catch (e) {
    deps.log.warn("git sync: could not add the new repository to the GitHub App installation", {
      installation: installationId,
      repository: repo.full_name,
      error: (e as Error).message,
    });
  }
}
