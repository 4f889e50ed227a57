// The GitHub App as Pier uses it: the operator's settings, the app's JWT, installation access
// tokens (minted by Pier, cached until shortly before they expire) and the few REST calls git
// sync makes. Nothing here logs or returns the private key, the secrets or a token.
// https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app
import { createPrivateKey, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Deps } from "../../core/context";
import { SyncFailure } from "./remote";

export interface GithubApp {
  appId: string;
  slug: string;
  clientId: string;
  apiUrl: string;
  webUrl: string;
  privateKey: KeyObject;
  webhookSecret: string;
  clientSecret: string;
}

const loaded = new WeakMap<object, GithubApp | null>();

/** GitHub's web origin for an API URL: api.github.com -> github.com, https://HOST/api/v3 -> https://HOST. */
export function webUrlFor(apiUrl: string): string {
  const u = new URL(apiUrl);
  if (u.hostname === "api.github.com") return "https://github.com";
  if (u.hostname.startsWith("api.") && (u.pathname === "/" || u.pathname === "")) return `${u.protocol}//${u.host.slice(4)}`;
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/api\/v3\/?$/, "")}`.replace(/\/$/, "");
}

/** The configured app, or null when the operator has not set one up (config.ts checks the set is whole). */
export function githubApp(deps: Deps): GithubApp | null {
  const c = deps.config;
  if (loaded.has(c)) return loaded.get(c)!;
  let app: GithubApp | null = null;
  if (c.githubAppId && c.githubAppPrivateKeyFile && c.githubAppSlug && c.githubAppClientId) {
    const fromFile = (path: string | null) => (path ? readFileSync(path, "utf8").trim() : "");
    app = {
      appId: c.githubAppId,
      slug: c.githubAppSlug,
      clientId: c.githubAppClientId,
      apiUrl: c.githubApiUrl.replace(/\/$/, ""),
      webUrl: (c.githubUrl ?? webUrlFor(c.githubApiUrl)).replace(/\/$/, ""),
      // GitHub hands out PKCS#1 PEM keys; node's parser reads PKCS#1 and PKCS#8 alike.
      privateKey: createPrivateKey(readFileSync(c.githubAppPrivateKeyFile, "utf8")),
      webhookSecret: c.githubAppWebhookSecret ?? fromFile(c.githubAppWebhookSecretFile),
      clientSecret: c.githubAppClientSecret ?? fromFile(c.githubAppClientSecretFile),
    };
  }
  loaded.set(c, app);
  return app;
}

export function requireGithubApp(deps: Deps): GithubApp {
  const app = githubApp(deps);
  if (!app) throw new SyncFailure("github_not_configured", "This instance has no GitHub App configured (see /docs/guides/git-sync#github-app).");
  return app;
}

/** The app's own JWT (RS256): issued 60 s in the past against clock drift, valid 9 minutes (GitHub allows 10). */
export async function appJwt(deps: Deps, app: GithubApp): Promise<string> {
  // Loaded on first use: every CLI command starts the same module graph, and most never sign a JWT.
  const { SignJWT } = await import("jose");
  const now = Math.floor(deps.clock.now().getTime() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: "RS256" })
    .setIssuer(app.appId)
    .setIssuedAt(now - 60)
    .setExpirationTime(now + 540)
    .sign(app.privateKey);
}

export class GithubError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const API_TIMEOUT_MS = 20_000;

/** One REST call: GitHub's media type and API version, a deadline, JSON in and out. */
export async function githubRequest<T>(
  app: GithubApp,
  method: string,
  path: string,
  auth: { bearer: string },
  body?: unknown,
  timeoutMs = API_TIMEOUT_MS,
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${app.apiUrl}${path}`, {
      method,
      headers: {
        accept: "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
        "user-agent": "Pier-git-sync",
        authorization: `Bearer ${auth.bearer}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    throw new GithubError(0, `GitHub could not be reached: ${(e as Error).message}`);
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) {
    const msg = (json as { message?: string } | null)?.message ?? res.statusText;
    throw new GithubError(res.status, `GitHub answered ${res.status}: ${String(msg).slice(0, 300)}`);
  }
  return json as T;
}

interface CachedToken {
  token: string;
  expiresAt: number;
}

const tokenCaches = new WeakMap<object, Map<number, CachedToken>>();
/** A cached installation token is renewed this long before GitHub's expiry (tokens live an hour). */
const RENEW_BEFORE_MS = 5 * 60_000;

function tokenCache(deps: Deps): Map<number, CachedToken> {
  let m = tokenCaches.get(deps);
  if (!m) tokenCaches.set(deps, (m = new Map()));
  return m;
}

export function forgetInstallationToken(deps: Deps, installationId: number): void {
  tokenCache(deps).delete(installationId);
}

/**
 * An installation access token (POST /app/installations/:id/access_tokens), kept in memory only
 * and reused until 5 minutes before it expires. A removed installation is `installation_revoked`,
 * a suspended one `installation_suspended`.
 */
export async function installationToken(deps: Deps, installationId: number): Promise<string> {
  const app = requireGithubApp(deps);
  const cache = tokenCache(deps);
  const now = deps.clock.now().getTime();
  const hit = cache.get(installationId);
  if (hit && hit.expiresAt - RENEW_BEFORE_MS > now) return hit.token;
  try {
    const r = await githubRequest<{ token: string; expires_at: string }>(app, "POST", `/app/installations/${installationId}/access_tokens`, {
      bearer: await appJwt(deps, app),
    });
    cache.set(installationId, { token: r.token, expiresAt: Date.parse(r.expires_at) || now + 60 * 60_000 });
    return r.token;
  } catch (e) {
    cache.delete(installationId);
    throw installationFailure(e);
  }
}

export function installationFailure(e: unknown): SyncFailure {
  if (e instanceof SyncFailure) return e;
  const status = e instanceof GithubError ? e.status : 0;
  if (status === 404 || status === 401)
    return new SyncFailure(
      "installation_revoked",
      "The GitHub App is no longer installed on the repository's account; install it again from the bucket's Git page.",
    );
  if (status === 403)
    return new SyncFailure("installation_suspended", "The GitHub App's installation is suspended; unsuspend it in the account's GitHub settings.");
  return new SyncFailure("github_unavailable", (e as Error).message ?? String(e));
}

export interface GithubRepository {
  id: number;
  full_name: string;
  name: string;
  private: boolean;
  default_branch: string;
  clone_url: string;
  owner: { login: string; type: string };
}

export interface GithubInstallationInfo {
  id: number;
  account: { login: string; type: string } | null;
  suspended_at?: string | null;
  repository_selection?: "all" | "selected";
}

/** One installation as the app sees it (GET /app/installations/:id, app JWT). */
export async function installationInfo(deps: Deps, installationId: number): Promise<GithubInstallationInfo> {
  const app = requireGithubApp(deps);
  return githubRequest<GithubInstallationInfo>(app, "GET", `/app/installations/${installationId}`, { bearer: await appJwt(deps, app) });
}

/**
 * Every item of one of GitHub's paged lists (`{ total_count, <listKey>: [...] }`), 100 a page, at
 * most `maxPages` pages. `path` has no query of its own.
 */
export async function githubPages<T>(app: GithubApp, path: string, listKey: string, bearer: string, maxPages: number): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; page <= maxPages; page++) {
    const r = await githubRequest<{ total_count: number } & Record<string, T[]>>(app, "GET", `${path}?per_page=100&page=${page}`, { bearer });
    const items = r[listKey] ?? [];
    out.push(...items);
    if (items.length < 100 || out.length >= r.total_count) break;
  }
  return out;
}

/** Repositories an installation grants (GET /installation/repositories), at most 1,000. */
export async function installationRepositories(deps: Deps, installationId: number): Promise<GithubRepository[]> {
  const app = requireGithubApp(deps);
  return githubPages<GithubRepository>(app, "/installation/repositories", "repositories", await installationToken(deps, installationId), 10);
}

/** One repository as the installation sees it (404 when it is not granted or does not exist). */
export async function installationRepository(deps: Deps, installationId: number, fullName: string): Promise<GithubRepository> {
  const app = requireGithubApp(deps);
  const token = await installationToken(deps, installationId);
  return githubRequest<GithubRepository>(app, "GET", `/repos/${fullName}`, { bearer: token });
}

/** A new private, empty repository in an organization (POST /orgs/{org}/repos; the app needs Administration: write). */
export async function createOrgRepository(deps: Deps, installationId: number, org: string, name: string): Promise<GithubRepository> {
  const app = requireGithubApp(deps);
  const token = await installationToken(deps, installationId);
  return githubRequest<GithubRepository>(
    app,
    "POST",
    `/orgs/${encodeURIComponent(org)}/repos`,
    { bearer: token },
    {
      name,
      private: true,
      auto_init: false,
      description: "Synced with a Pier bucket",
    },
  );
}
