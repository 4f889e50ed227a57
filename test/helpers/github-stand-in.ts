// A loopback stand-in for GitHub, answering the calls Pier's GitHub App makes as GitHub's
// documented REST API does (https://docs.github.com/en/rest): the app JWT is verified with the
// app's public key (RS256, iss = app id, at most 10 minutes), installation tokens are minted per
// installation and expire, /installation/repositories and /repos/{owner}/{repo} answer only for
// granted repositories, /orgs/{org}/repos creates one, and the OAuth code exchange and
// /user/installations answer for the GitHub user who "signed in" on the web pages. User tokens
// follow GitHub's two modes: expiring (8-hour access token plus a 6-month refresh token, rotated
// on every refresh grant: the used refresh token and its access token stop working) or, with
// `expiringUserTokens = false`, one access token that never expires. A user token can read
// GET /user, create a repository in its own account (POST /user/repos) and add one of its
// repositories to an installation it can see (PUT /user/installations/{id}/repositories/{repo});
// `revokeUserAuthorization` is the user revoking the app on GitHub. The web pages
// themselves (installation, authorization) are simulated: the test says who is signed in to
// GitHub with an `x-github-user` header and GitHub's redirect back to Pier follows at once.
// Repositories are real: served by git http-backend (test/helpers/git-server.ts), where
// `x-access-token:<installation token>` is accepted only for the installation's repositories.
import { createHmac, generateKeyPairSync, randomBytes, type KeyObject } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jwtVerify } from "jose";
import type { Config } from "../../src/config";
import { startGitServer, type GitServer } from "./git-server";

export interface StandInRepo {
  id: number;
  owner: string;
  name: string;
  fullName: string;
  private: boolean;
  defaultBranch: string;
  /** GitHub users who can see it (e.g. an organization's team); unset: everyone who sees its account. */
  visibleTo?: Set<string>;
}

export interface StandInInstallation {
  id: number;
  login: string;
  type: "User" | "Organization";
  /** GitHub users who can see the installation (members of the org, or the account itself). */
  users: Set<string>;
  repos: Set<number>;
  state: "active" | "suspended" | "deleted";
  /** "all": every repository of the account, present and future; "selected": only `repos`. */
  selection: "selected" | "all";
}

export interface GithubStandIn {
  url: string;
  git: GitServer;
  app: { id: string; slug: string; clientId: string; clientSecret: string; webhookSecret: string; privateKeyFile: string };
  /** Pier's options for this stand-in. */
  config: Partial<Config>;
  /** Pier's callback URL (the app's Callback and Setup URL), set once Pier runs. */
  callbackUrl: string;
  /** Let the stand-in's "now" follow a test clock. */
  useClock(now: () => number): void;
  /** Credential that reads and writes every repository (the test plays the repository's other users). */
  adminUrl(repo: StandInRepo): string;
  account(login: string, type: "User" | "Organization", members?: string[]): void;
  createRepo(owner: string, name: string): StandInRepo;
  repoByName(fullName: string): StandInRepo | undefined;
  installationOn(login: string): StandInInstallation | undefined;
  /** Tokens minted (POST /app/installations/:id/access_tokens answered 201). */
  minted: number;
  /** Requests refused for a bad app JWT. */
  badJwts: number;
  /** GitHub's "Expire user authorization tokens" setting of the app (default on, as on GitHub). */
  expiringUserTokens: boolean;
  /** Whether the app has Administration: write (POST /user/repos and /orgs/{org}/repos need it). */
  administrationWrite: boolean;
  /** GitHub documents PUT /user/installations/{id}/repositories/{repo} for classic tokens: refuse a GitHub App's user token there. */
  refuseAddingRepositories: boolean;
  /** Refresh grants answered with new tokens / refused. */
  refreshes: number;
  refusedRefreshes: number;
  /** Every refresh token GitHub ever issued (the test checks none is stored in the clear). */
  issuedRefreshTokens: string[];
  /** Every user access token issued. */
  issuedUserTokens: string[];
  /** The user revokes the app's authorization on GitHub: every token of theirs stops working. */
  revokeUserAuthorization(login: string): void;
  /** GitHub's numeric id of an account (GET /user, webhooks' sender.id). */
  accountId(login: string): number;
  /** A signed webhook delivery, as GitHub sends it. */
  deliver(pierUrl: string, event: string, payload: unknown, secret?: string): Promise<Response>;
  stop(): Promise<void>;
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });
const notFound = () => json({ message: "Not Found", documentation_url: "https://docs.github.com/rest" }, 404);

export function startGithubStandIn(): GithubStandIn {
  const dir = mkdtempSync(join(tmpdir(), "pier-gh-"));
  // GitHub hands out PKCS#1 PEM private keys.
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const privateKeyFile = join(dir, "app.pem");
  writeFileSync(privateKeyFile, privateKey.export({ type: "pkcs1", format: "pem" }));
  const app = {
    id: "424242",
    slug: "pier-test",
    clientId: "Iv1.standin",
    clientSecret: randomBytes(20).toString("hex"),
    webhookSecret: randomBytes(20).toString("hex"),
    privateKeyFile,
  };
  const accounts = new Map<string, { id: number; type: "User" | "Organization"; members: Set<string> }>();
  const repos = new Map<number, StandInRepo>();
  const installations = new Map<number, StandInInstallation>();
  const tokens = new Map<string, { installation: number; expires: number }>();
  const codes = new Map<string, string>();
  const userTokens = new Map<string, { login: string; expires: number | null }>();
  const refreshTokens = new Map<string, { login: string; expires: number; access: string }>();
  const adminPassword = randomBytes(12).toString("hex");
  let nextId = 1000;
  const counters = { minted: 0, badJwts: 0, refreshes: 0, refusedRefreshes: 0 };
  const issuedRefreshTokens: string[] = [];
  const issuedUserTokens: string[] = [];
  // GitHub's clock is Pier's (a test's ManualClock moves both), so token expiry and JWT checks agree.
  const clock = { now: () => Date.now() };

  const git = startGitServer({
    authorize(user, password, path) {
      if (user === "admin" && password === adminPassword) return true;
      if (user !== "x-access-token") return false;
      const t = tokens.get(password);
      if (!t || t.expires < clock.now()) return false;
      const inst = installations.get(t.installation);
      if (!inst || inst.state !== "active") return false;
      return reposOf(inst).some((id) => {
        const r = repos.get(id);
        return r && path.startsWith(`/${r.fullName}.git/`);
      });
    },
  });

  const repoJson = (r: StandInRepo) => ({
    id: r.id,
    name: r.name,
    full_name: r.fullName,
    private: r.private,
    default_branch: r.defaultBranch,
    clone_url: `${git.url}/${r.fullName}.git`,
    owner: { login: r.owner, type: accounts.get(r.owner)?.type ?? "User" },
  });
  const installationJson = (i: StandInInstallation) => ({
    id: i.id,
    account: { login: i.login, type: i.type },
    repository_selection: i.selection,
    app_id: Number(app.id),
    app_slug: app.slug,
    suspended_at: i.state === "suspended" ? new Date().toISOString() : null,
  });

  async function checkJwt(req: Request): Promise<boolean> {
    const auth = req.headers.get("authorization") ?? "";
    if (!auth.startsWith("Bearer ")) return false;
    try {
      const { payload } = await jwtVerify(auth.slice(7), publicKey as KeyObject, { algorithms: ["RS256"], issuer: app.id, currentDate: new Date(clock.now()) });
      // GitHub refuses a JWT whose expiry is more than 10 minutes ahead.
      const now = Math.floor(clock.now() / 1000);
      return typeof payload.exp === "number" && payload.exp - now <= 600 && typeof payload.iat === "number";
    } catch {
      return false;
    }
  }
  const installationOfToken = (req: Request) => {
    const auth = req.headers.get("authorization") ?? "";
    const t = tokens.get(auth.replace(/^(Bearer|token) /, ""));
    if (!t || t.expires < clock.now()) return null;
    const inst = installations.get(t.installation);
    return inst && inst.state === "active" ? inst : null;
  };
  const userOf = (req: Request) => {
    const t = userTokens.get((req.headers.get("authorization") ?? "").replace(/^(Bearer|token) /, ""));
    return t && (t.expires === null || t.expires > clock.now()) ? t.login : null;
  };
  /** The repositories an installation reaches: all of its account's, or the selected ones. */
  const reposOf = (inst: StandInInstallation): number[] =>
    inst.selection === "all" ? [...repos.values()].filter((r) => r.owner === inst.login).map((r) => r.id) : [...inst.repos];
  /** A token response as GitHub's token endpoint sends it, in the app's user-token mode. */
  const userTokenResponse = (login: string) => {
    const token = `ghu_${randomBytes(18).toString("hex")}`;
    issuedUserTokens.push(token);
    if (!stand.expiringUserTokens) {
      userTokens.set(token, { login, expires: null });
      return json({ access_token: token, token_type: "bearer", scope: "" });
    }
    userTokens.set(token, { login, expires: clock.now() + 8 * 3600_000 });
    const refresh = `ghr_${randomBytes(30).toString("hex")}`;
    issuedRefreshTokens.push(refresh);
    refreshTokens.set(refresh, { login, expires: clock.now() + 184 * 86400_000, access: token });
    return json({ access_token: token, token_type: "bearer", scope: "", expires_in: 28800, refresh_token: refresh, refresh_token_expires_in: 15897600 });
  };
  const makeRepo = (owner: string, name: string): StandInRepo => {
    const r: StandInRepo = { id: nextId++, owner, name, fullName: `${owner}/${name}`, private: true, defaultBranch: "main" };
    git.createRepo(r.fullName);
    repos.set(r.id, r);
    return r;
  };
  const back = (target: string, params: Record<string, string>) => {
    const u = new URL(target);
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
    return new Response(null, { status: 302, headers: { location: u.toString() } });
  };
  const issueCode = (login: string) => {
    const code = randomBytes(10).toString("hex");
    codes.set(code, login);
    return code;
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const path = url.pathname;
      let m: RegExpMatchArray | null;

      // --- the app (JWT) ---
      if ((m = path.match(/^\/app\/installations\/(\d+)\/access_tokens$/)) && req.method === "POST") {
        if (!(await checkJwt(req))) {
          counters.badJwts++;
          return json({ message: "A JSON web token could not be decoded" }, 401);
        }
        const inst = installations.get(Number(m[1]));
        if (!inst || inst.state === "deleted") return notFound();
        if (inst.state === "suspended") return json({ message: "This installation has been suspended" }, 403);
        const token = `ghs_${randomBytes(18).toString("hex")}`;
        const expires = clock.now() + 60 * 60_000;
        tokens.set(token, { installation: inst.id, expires });
        counters.minted++;
        return json({ token, expires_at: new Date(expires).toISOString().replace(/\.\d+Z$/, "Z"), permissions: { contents: "write", metadata: "read" } }, 201);
      }
      if ((m = path.match(/^\/app\/installations\/(\d+)$/)) && req.method === "GET") {
        if (!(await checkJwt(req))) return json({ message: "A JSON web token could not be decoded" }, 401);
        const inst = installations.get(Number(m[1]));
        return inst && inst.state !== "deleted" ? json(installationJson(inst)) : notFound();
      }

      // --- installation tokens ---
      if (path === "/installation/repositories" && req.method === "GET") {
        const inst = installationOfToken(req);
        if (!inst) return json({ message: "Bad credentials" }, 401);
        const list = reposOf(inst)
          .map((id) => repos.get(id)!)
          .filter(Boolean);
        const perPage = Number(url.searchParams.get("per_page") ?? 30);
        const page = Number(url.searchParams.get("page") ?? 1);
        return json({ total_count: list.length, repositories: list.slice((page - 1) * perPage, page * perPage).map(repoJson) });
      }
      if ((m = path.match(/^\/repos\/([^/]+)\/([^/]+)$/)) && req.method === "GET") {
        const inst = installationOfToken(req);
        if (!inst) return json({ message: "Bad credentials" }, 401);
        const r = [...repos.values()].find((x) => x.fullName === `${m![1]}/${m![2]}`);
        return r && reposOf(inst).includes(r.id) ? json(repoJson(r)) : notFound();
      }
      if ((m = path.match(/^\/orgs\/([^/]+)\/repos$/)) && req.method === "POST") {
        const inst = installationOfToken(req);
        if (!inst) return json({ message: "Bad credentials" }, 401);
        if (inst.type !== "Organization" || inst.login !== m[1] || !stand.administrationWrite)
          return json({ message: "Resource not accessible by integration" }, 403);
        const body = (await req.json()) as { name?: string; private?: boolean };
        if (!body.name || !/^[A-Za-z0-9._-]+$/.test(body.name)) return json({ message: "Validation Failed" }, 422);
        if ([...repos.values()].some((r) => r.fullName === `${inst.login}/${body.name}`))
          return json({ message: "Repository creation failed.", errors: [{ message: "name already exists on this account" }] }, 422);
        const r = stand.createRepo(inst.login, body.name);
        r.private = body.private ?? false;
        inst.repos.add(r.id);
        return json(repoJson(r), 201);
      }
      if (path === "/user/repos" && req.method === "POST") {
        if (installationOfToken(req)) return json({ message: "Resource not accessible by integration" }, 403);
        const login = userOf(req);
        if (!login) return json({ message: "Bad credentials" }, 401);
        if (!stand.administrationWrite) return json({ message: "Resource not accessible by integration" }, 403);
        const body = (await req.json()) as { name?: string; private?: boolean };
        if (!body.name || !/^[A-Za-z0-9._-]+$/.test(body.name)) return json({ message: "Validation Failed" }, 422);
        if ([...repos.values()].some((r) => r.fullName.toLowerCase() === `${login}/${body.name}`.toLowerCase()))
          return json({ message: "Repository creation failed.", errors: [{ message: "name already exists on this account" }] }, 422);
        // Created by the user: a "selected repositories" installation does not get it by itself.
        const r = makeRepo(login, body.name);
        r.private = body.private ?? false;
        return json(repoJson(r), 201);
      }
      if ((m = path.match(/^\/user\/installations\/(\d+)\/repositories$/)) && req.method === "GET") {
        // The installation's repositories this user can access.
        const login = userOf(req);
        if (!login) return json({ message: "Bad credentials" }, 401);
        const inst = installations.get(Number(m[1]));
        if (!inst || inst.state === "deleted" || !inst.users.has(login)) return notFound();
        const list = reposOf(inst)
          .map((id) => repos.get(id)!)
          .filter((r) => r && (!r.visibleTo || r.visibleTo.has(login)));
        const perPage = Number(url.searchParams.get("per_page") ?? 30);
        const page = Number(url.searchParams.get("page") ?? 1);
        return json({ total_count: list.length, repositories: list.slice((page - 1) * perPage, page * perPage).map(repoJson) });
      }
      if ((m = path.match(/^\/user\/installations\/(\d+)\/repositories\/(\d+)$/)) && req.method === "PUT") {
        const login = userOf(req);
        if (!login) return json({ message: "Bad credentials" }, 401);
        if (stand.refuseAddingRepositories) return json({ message: "Resource not accessible by integration" }, 403);
        const inst = installations.get(Number(m[1]));
        const r = repos.get(Number(m[2]));
        if (!inst || inst.state === "deleted" || !inst.users.has(login) || !r) return notFound();
        // The user must administer the repository: here, own it.
        if (r.owner !== login) return json({ message: "Must have admin rights to Repository." }, 403);
        inst.repos.add(r.id);
        return new Response(null, { status: 204 });
      }
      if (path === "/user" && req.method === "GET") {
        const login = userOf(req);
        if (!login) return json({ message: "Bad credentials" }, 401);
        return json({ id: stand.accountId(login), login, type: "User" });
      }

      // --- the GitHub user (OAuth) ---
      if (path === "/user/installations" && req.method === "GET") {
        const login = userOf(req);
        if (!login) return json({ message: "Bad credentials" }, 401);
        const list = [...installations.values()].filter((i) => i.state !== "deleted" && i.users.has(login));
        return json({ total_count: list.length, installations: list.map(installationJson) });
      }
      if (path === "/login/oauth/access_token" && req.method === "POST") {
        const type = req.headers.get("content-type") ?? "";
        const form = type.includes("json") ? new URLSearchParams((await req.json()) as Record<string, string>) : new URLSearchParams(await req.text());
        if (form.get("client_id") !== app.clientId || form.get("client_secret") !== app.clientSecret)
          return json({ error: "incorrect_client_credentials", error_description: "The client_id and/or client_secret passed are incorrect." });
        // GitHub answers refused grants with 200 and an `error` member.
        if (form.get("grant_type") === "refresh_token") {
          const presented = form.get("refresh_token") ?? "";
          const r = refreshTokens.get(presented);
          refreshTokens.delete(presented);
          if (!r || r.expires < clock.now()) {
            counters.refusedRefreshes++;
            return json({ error: "bad_refresh_token", error_description: "The refresh token passed is incorrect or expired." });
          }
          // Rotation: the used refresh token and the access token issued with it stop working.
          userTokens.delete(r.access);
          counters.refreshes++;
          return userTokenResponse(r.login);
        }
        const login = codes.get(form.get("code") ?? "");
        codes.delete(form.get("code") ?? "");
        if (!login || form.get("grant_type") !== "authorization_code")
          return json({ error: "bad_verification_code", error_description: "The code passed is incorrect or expired." });
        return userTokenResponse(login);
      }

      // --- web pages (the signed-in GitHub user is the x-github-user header) ---
      const webUser = req.headers.get("x-github-user");
      if ((m = path.match(/^\/apps\/([^/]+)\/installations\/new$/)) && req.method === "GET") {
        if (m[1] !== app.slug || !webUser) return notFound();
        const target = url.searchParams.get("target") ?? webUser;
        const acct = accounts.get(target);
        if (!acct || (target !== webUser && !acct.members.has(webUser))) return json({ message: "cannot install there" }, 403);
        let inst = stand.installationOn(target);
        if (!inst) {
          inst = {
            id: nextId++,
            login: target,
            type: acct.type,
            users: new Set([webUser, ...acct.members]),
            repos: new Set(),
            state: "active",
            selection: "selected",
          };
          installations.set(inst.id, inst);
        }
        inst.state = "active";
        for (const r of repos.values()) if (r.owner === target) inst.repos.add(r.id);
        // "Request user authorization (OAuth) during installation": back to the callback URL with a code.
        return back(stand.callbackUrl, {
          code: issueCode(webUser),
          installation_id: String(inst.id),
          setup_action: "install",
          ...(url.searchParams.get("state") ? { state: url.searchParams.get("state")! } : {}),
        });
      }
      if (path === "/login/oauth/authorize" && req.method === "GET") {
        if (url.searchParams.get("client_id") !== app.clientId || !webUser) return notFound();
        return back(url.searchParams.get("redirect_uri") ?? stand.callbackUrl, { code: issueCode(webUser), state: url.searchParams.get("state") ?? "" });
      }
      return notFound();
    },
  });

  const url = `http://127.0.0.1:${server.port}`;
  const stand: GithubStandIn = {
    url,
    git,
    app,
    callbackUrl: "",
    config: {
      githubAppId: app.id,
      githubAppPrivateKeyFile: privateKeyFile,
      githubAppWebhookSecret: app.webhookSecret,
      githubAppSlug: app.slug,
      githubAppClientId: app.clientId,
      githubAppClientSecret: app.clientSecret,
      githubApiUrl: url,
      githubUrl: url,
      gitAllowHttp: "on",
      gitAllowPrivateNetwork: "on",
    },
    get minted() {
      return counters.minted;
    },
    get badJwts() {
      return counters.badJwts;
    },
    expiringUserTokens: true,
    administrationWrite: true,
    refuseAddingRepositories: false,
    get refreshes() {
      return counters.refreshes;
    },
    get refusedRefreshes() {
      return counters.refusedRefreshes;
    },
    issuedRefreshTokens,
    issuedUserTokens,
    revokeUserAuthorization(login) {
      for (const [k, v] of userTokens) if (v.login === login) userTokens.delete(k);
      for (const [k, v] of refreshTokens) if (v.login === login) refreshTokens.delete(k);
    },
    accountId(login) {
      const a = accounts.get(login);
      if (!a) throw new Error(`no stand-in account ${login}`);
      return a.id;
    },
    useClock(now) {
      clock.now = now;
    },
    adminUrl: (r) => `${git.url.replace("http://", `http://admin:${adminPassword}@`)}/${r.fullName}.git`,
    account(login, type, members = []) {
      accounts.set(login, { id: nextId++, type, members: new Set(members) });
    },
    createRepo(owner, name) {
      const r = makeRepo(owner, name);
      const inst = stand.installationOn(owner);
      if (inst) inst.repos.add(r.id);
      return r;
    },
    repoByName: (fullName) => [...repos.values()].find((r) => r.fullName === fullName),
    installationOn: (login) => [...installations.values()].find((i) => i.login === login && i.state !== "deleted"),
    async deliver(pierUrl, event, payload, secret = app.webhookSecret) {
      const body = JSON.stringify(payload);
      return fetch(`${pierUrl}/api/v1/git_sync/github/webhook`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "GitHub-Hookshot/stand-in",
          "x-github-event": event,
          "x-github-delivery": crypto.randomUUID(),
          "x-github-hook-installation-target-type": "integration",
          "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
        },
        body,
      });
    },
    async stop() {
      server.stop(true);
      await git.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return stand;
}
