// Linking GitHub App installations to a Pier account, browser only. A signed-in bucket
// administrator leaves for GitHub with a one-time `state` bound to their session; GitHub sends
// them back with a `code` (user authorization during installation) and, after an install, an
// `installation_id`. The id from the query string proves nothing by itself: Pier exchanges the
// code for the GitHub user's token (oauth4webapi) and links only installations that user can see
// (GET /user/installations). When the user has the app on their own personal account, their
// authorization is kept for exports there (github-user.ts). https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app
import { and, eq, lt } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { sha256Hex } from "../../core/crypto";
import { ApiError } from "../../core/errors";
import { randomToken } from "../../core/ids";
import { githubInstallations, githubSetupStates } from "../../db/schema";
import type { DbOrTx } from "../../db/tx";
import { loadMutableBucket } from "../buckets";
import { githubApp, GithubError, githubPages, type GithubApp, type GithubInstallationInfo } from "./github-app";
import { exchangeCode, type UserTokens } from "./github-oauth";
import { githubUserOf, rememberUserAuthorization } from "./github-user";

export type InstallationRow = typeof githubInstallations.$inferSelect;

/** How long a started round trip may take (GitHub's pages, choosing repositories). */
const STATE_TTL_MS = 30 * 60_000;

export const GITHUB_CALLBACK_PATH = "/dashboard/git/github/callback";
export const githubCallbackUrl = (deps: Deps) => `${deps.urls.baseUrl}${GITHUB_CALLBACK_PATH}`;

export function configuredApp(deps: Deps): GithubApp {
  const app = githubApp(deps);
  if (!app) throw new ApiError("GITHUB_NOT_CONFIGURED");
  return app;
}

/**
 * Where "Install on GitHub" (mode install) or "Link an existing installation" (mode authorize)
 * sends the browser. Needs bucket administration; the state is stored hashed, tied to the session.
 */
export function startGithubSetup(deps: Deps, session: { sessionId: string; actor: Actor }, bucketId: string, mode: "install" | "authorize"): string {
  const app = configuredApp(deps);
  const bucket = loadMutableBucket(deps, session.actor, bucketId, { need: "bucket_admin" });
  const state = randomToken(32);
  const now = deps.clock.now();
  deps.db.delete(githubSetupStates).where(lt(githubSetupStates.expiresAt, now.toISOString())).run();
  deps.db
    .insert(githubSetupStates)
    .values({
      id: sha256Hex(state),
      sessionId: session.sessionId,
      userId: session.actor.userId ?? "",
      accountId: bucket.accountId,
      bucketId: bucket.id,
      expiresAt: new Date(now.getTime() + STATE_TTL_MS).toISOString(),
      createdAt: now.toISOString(),
    })
    .run();
  if (mode === "install") return `${app.webUrl}/apps/${encodeURIComponent(app.slug)}/installations/new?state=${state}`;
  const q = new URLSearchParams({ client_id: app.clientId, redirect_uri: githubCallbackUrl(deps), state });
  return `${app.webUrl}/login/oauth/authorize?${q}`;
}

export interface SetupOutcome {
  bucketId: string;
  linked: InstallationRow[];
  /** An organization member asked an owner to approve the install: nothing to link yet. */
  requested: boolean;
}

/** GitHub's redirect back to Pier: check the state, prove the installation, link it to the account. */
export async function completeGithubSetup(deps: Deps, session: { sessionId: string; actor: Actor }, callback: URL): Promise<SetupOutcome> {
  const app = configuredApp(deps);
  const params = callback.searchParams;
  const state = params.get("state") ?? "";
  // One-time: the row goes whatever happens next.
  const row = state
    ? deps.db
        .delete(githubSetupStates)
        .where(eq(githubSetupStates.id, sha256Hex(state)))
        .returning()
        .get()
    : undefined;
  if (!row || row.sessionId !== session.sessionId || row.expiresAt < deps.clock.now().toISOString()) throw new ApiError("GITHUB_SETUP_INVALID");
  // Still an administrator of the bucket the round trip started from.
  loadMutableBucket(deps, session.actor, row.bucketId, { need: "bucket_admin" });
  try {
    return await linkFromCallback(deps, app, row, callback);
  } catch (e) {
    if (e instanceof ApiError) throw new ApiError(e.code, e.message, { ...e.details, bucket_id: row.bucketId });
    throw e;
  }
}

async function linkFromCallback(deps: Deps, app: GithubApp, row: typeof githubSetupStates.$inferSelect, callback: URL): Promise<SetupOutcome> {
  const params = callback.searchParams;
  const state = params.get("state") ?? "";
  if (params.get("setup_action") === "request" && !params.get("code")) return { bucketId: row.bucketId, linked: [], requested: true };
  if (!params.get("code"))
    throw new ApiError("GITHUB_INSTALLATION_NOT_VISIBLE", 'GitHub sent no authorization code; use "Link an existing installation" on the Git page.');

  let tokens: UserTokens;
  try {
    tokens = await exchangeCode(deps, app, callback, state, githubCallbackUrl(deps));
  } catch (e) {
    throw new ApiError("GITHUB_INSTALLATION_NOT_VISIBLE", `GitHub did not accept the authorization: ${(e as Error).message.slice(0, 200)}`);
  }
  const visible = await userInstallations(app, tokens.accessToken);
  const claimed = params.get("installation_id");
  let chosen = visible;
  if (claimed !== null) {
    const id = Number(claimed);
    chosen = visible.filter((i) => i.id === id);
    if (!Number.isSafeInteger(id) || chosen.length === 0) throw new ApiError("GITHUB_INSTALLATION_NOT_VISIBLE");
  }
  // An installation may grant repositories this GitHub user cannot see (an organization member
  // linking the organization's installation): only those they can see may be connected later.
  const linked: InstallationRow[] = [];
  for (const i of chosen) linked.push(linkInstallation(deps, row.accountId, row.userId, i, await userInstallationRepositories(app, tokens.accessToken, i.id)));
  await keepPersonalAuthorization(deps, app, row, tokens, visible);
  return { bucketId: row.bucketId, linked, requested: false };
}

/**
 * When the GitHub user has the app on their own personal account, keep their authorization for
 * this Pier account: creating a repository there later (export) needs a user token. Users who
 * only reach organizations leave nothing behind.
 */
async function keepPersonalAuthorization(
  deps: Deps,
  app: GithubApp,
  row: typeof githubSetupStates.$inferSelect,
  tokens: UserTokens,
  visible: GithubInstallationInfo[],
): Promise<void> {
  if (!visible.some((i) => i.account?.type === "User")) return;
  let user;
  try {
    user = await githubUserOf(app, tokens.accessToken);
  } catch (e) {
    // The installations are linked already; only a later personal-account export will ask again.
    deps.log.warn("github: could not read the authorizing user; their authorization is not kept", { error: (e as Error).message });
    return;
  }
  if (!visible.some((i) => i.account?.type === "User" && i.account.login.toLowerCase() === user.login.toLowerCase())) return;
  rememberUserAuthorization(deps, row.accountId, row.userId, user, tokens);
}

/** The repositories of an installation the GitHub user can access (GET /user/installations/{id}/repositories). */
async function userInstallationRepositories(app: GithubApp, userToken: string, installationId: number): Promise<number[]> {
  const repositories = await userPages<{ id: number }>(app, `/user/installations/${installationId}/repositories`, "repositories", userToken, 50);
  return repositories.map((x) => x.id);
}

/** Every page of a list read with the user's token; GitHub failing is GITHUB_UNAVAILABLE. */
async function userPages<T>(app: GithubApp, path: string, key: string, userToken: string, maxPages: number): Promise<T[]> {
  try {
    return await githubPages<T>(app, path, key, userToken, maxPages);
  } catch (e) {
    throw new ApiError("GITHUB_UNAVAILABLE", undefined, { reason: e instanceof GithubError ? e.message : String(e) });
  }
}

/** A repository Pier created through this installation for the account (an export) may be connected. */
export function allowRepository(deps: Deps, accountId: string, installationId: number, repositoryId: number, db: DbOrTx = deps.db): void {
  const row = db
    .select()
    .from(githubInstallations)
    .where(and(eq(githubInstallations.accountId, accountId), eq(githubInstallations.installationId, installationId)))
    .get();
  if (!row || row.visibleRepositoryIds?.includes(repositoryId)) return;
  db.update(githubInstallations)
    .set({ visibleRepositoryIds: [...(row.visibleRepositoryIds ?? []), repositoryId] })
    .where(eq(githubInstallations.id, row.id))
    .run();
}

/** The installations of this app the GitHub user can access (GET /user/installations). */
async function userInstallations(app: GithubApp, userToken: string): Promise<GithubInstallationInfo[]> {
  return userPages<GithubInstallationInfo>(app, "/user/installations", "installations", userToken, 10);
}

function linkInstallation(deps: Deps, accountId: string, userId: string, i: GithubInstallationInfo, visibleRepositoryIds: number[]): InstallationRow {
  const now = deps.clock.now().toISOString();
  const values = {
    visibleRepositoryIds,
    targetLogin: i.account?.login ?? String(i.id),
    targetType: i.account?.type ?? "User",
    state: i.suspended_at ? ("suspended" as const) : ("active" as const),
    linkedByUserId: userId || null,
    updatedAt: now,
  };
  return deps.db
    .insert(githubInstallations)
    .values({ id: `ghi_${randomToken(20)}`, accountId, installationId: i.id, createdAt: now, ...values })
    .onConflictDoUpdate({ target: [githubInstallations.accountId, githubInstallations.installationId], set: values })
    .returning()
    .get();
}

export function accountInstallations(deps: Deps, accountId: string): InstallationRow[] {
  return deps.db.select().from(githubInstallations).where(eq(githubInstallations.accountId, accountId)).all();
}

export function accountInstallation(deps: Deps, accountId: string, installationId: number): InstallationRow | undefined {
  return deps.db
    .select()
    .from(githubInstallations)
    .where(and(eq(githubInstallations.accountId, accountId), eq(githubInstallations.installationId, installationId)))
    .get();
}

/** Every account's link to one installation changes state together (webhooks). */
export function setInstallationState(deps: Deps, installationId: number, state: InstallationRow["state"]): void {
  deps.db
    .update(githubInstallations)
    .set({ state, updatedAt: deps.clock.now().toISOString() })
    .where(eq(githubInstallations.installationId, installationId))
    .run();
}
