// Export to a new private repository in a PERSONAL GitHub account, end to end over real sockets:
// the install round trip keeps the user's authorization (sealed), an export refreshes it (the
// refresh token rotates), creates the repository with POST /user/repos, adds it to the
// "selected repositories" installation and pushes the bucket; then changes flow both ways. A
// revoked, expired or never-given authorization is GITHUB_AUTHORIZATION_REQUIRED with nothing
// created, and re-authorizing on the Git page heals it. Tokens reach no API, MCP answer or log.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../../src/core/log";
import { Browser } from "../../helpers/browser";
import { bucketText as readBucketText, versionCount as countVersions, signedInBrowser } from "../../helpers/gitsync";
import { git, workClone, type WorkClone } from "../../helpers/git-server";
import { startGithubStandIn, type GithubStandIn } from "../../helpers/github-stand-in";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let gh: GithubStandIn;
let t: TestPier;
let user: TestUser;
let browser: Browser;
const clones: WorkClone[] = [];
const logLines: string[] = [];

beforeAll(async () => {
  gh = startGithubStandIn();
  t = await startTestPier(gh.config, { log: createLogger("debug", (l) => logLines.push(l)) });
  gh.useClock(() => t.clock.now().getTime());
  gh.callbackUrl = `${t.url}/dashboard/git/github/callback`;
  gh.account("bob", "User");
  gh.account("carol", "User");
  user = await t.user({ plan: "pro" });
  browser = await signedInBrowser(t, user);
});
afterAll(async () => {
  for (const c of clones) c.cleanup();
  await t?.stop();
  await gh?.stop();
});

const drain = () => t.pier.runner.drain();
const sync = async (bucketId: string) => (await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key })).body.data.github_sync;
const exportTo = (bucketId: string, body: Record<string, unknown>) => t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/export`, { key: user.key, body });
const bucketText = (bucketId: string, path: string) => readBucketText(t, user.key, bucketId, path);
const versionCount = (bucketId: string) => countVersions(t, user.key, bucketId);
interface AuthorizationRow {
  github_login: string;
  refresh_token_sealed: string | null;
  refresh_token_expires_at: string | null;
  access_token_sealed: string | null;
}
const authorizationRow = (login: string) =>
  t.pier.deps.sqlite.query<AuthorizationRow, [string]>("SELECT * FROM github_user_authorizations WHERE github_login = ?").get(login);
const everyDbText = () =>
  JSON.stringify(t.pier.deps.sqlite.query("SELECT * FROM github_user_authorizations").all()) +
  JSON.stringify(t.pier.deps.sqlite.query("SELECT * FROM git_sync_connections").all());

/** "Install on GitHub" on the bucket's Git page, GitHub's page as `login` on their own account, and back. */
async function installOnOwnAccount(bucketId: string, login: string) {
  const start = await browser.get(`/dashboard/buckets/${bucketId}/git/github/install`);
  expect(start.status).toBe(303);
  const onGithub = await fetch(`${start.location}&target=${login}`, { headers: { "x-github-user": login }, redirect: "manual" });
  expect(onGithub.status).toBe(302);
  const callback = new URL(onGithub.headers.get("location")!);
  const back = await browser.get(callback.pathname + callback.search);
  expect(back.status).toBe(303);
  expect(back.location).toBe(`/dashboard/buckets/${bucketId}/git?done=github_linked`);
}

/** "Link an existing installation" (GitHub's authorization page only): how a user re-authorizes. */
async function reauthorize(bucketId: string, login: string) {
  const start = await browser.get(`/dashboard/buckets/${bucketId}/git/github/authorize`);
  expect(start.status).toBe(303);
  expect(start.location!).toStartWith(`${gh.url}/login/oauth/authorize?`);
  const onGithub = await fetch(start.location!, { headers: { "x-github-user": login }, redirect: "manual" });
  expect(onGithub.status).toBe(302);
  const callback = new URL(onGithub.headers.get("location")!);
  expect((await browser.get(callback.pathname + callback.search)).status).toBe(303);
}

async function secretsNowhere(bucketId: string) {
  const secrets = [...gh.issuedRefreshTokens, ...gh.issuedUserTokens, gh.app.clientSecret];
  expect(secrets.length).toBeGreaterThan(2);
  const answers = [
    (await t.api("GET", `/api/v1/buckets/${bucketId}`, { key: user.key })).text,
    (await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key })).text,
    (await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync/setup`, { key: user.key })).text,
    (await t.api("GET", "/api/v1/buckets", { key: user.key })).text,
    (await browser.get(`/dashboard/buckets/${bucketId}/git`)).text,
  ];
  for (const name of ["bucket_get", "bucket_list"]) {
    const mcp = await fetch(t.pier.deps.urls.mcpUrl.replace(t.pier.deps.urls.baseUrl, t.url), {
      method: "POST",
      headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: name === "bucket_get" ? { bucket_id: bucketId } : {} } }),
    });
    expect(mcp.status).toBe(200);
    const text = await mcp.text();
    expect(text).toContain("github_sync");
    answers.push(text);
  }
  const stored = everyDbText();
  const logs = logLines.join("\n");
  for (const s of secrets) {
    for (const a of answers) expect(a).not.toContain(s);
    expect(stored).not.toContain(s);
    expect(logs).not.toContain(s);
  }
}

describe("GitHub App: export to a personal account", () => {
  test("creates a private repository under the user, adds it to the installation, pushes the bucket; changes then flow both ways; the refresh token rotates and is stored sealed", async () => {
    const bucketId = await newBucket(t, user.key, "Bob's Notes");
    await directUpload(t, user.key, bucketId, textFile("index.html", "<h1>notes</h1>\n"));
    await installOnOwnAccount(bucketId, "bob");
    const kept = authorizationRow("bob")!;
    expect(kept.refresh_token_sealed).toStartWith("v1.");
    expect(kept.access_token_sealed).toBeNull();
    // About six months ahead, as GitHub said (refresh_token_expires_in).
    const months = (Date.parse(kept.refresh_token_expires_at!) - t.clock.now().getTime()) / (30 * 86400_000);
    expect(months).toBeGreaterThan(5.5);
    expect(months).toBeLessThan(6.5);
    const installation = gh.installationOn("bob")!;
    expect(installation.selection).toBe("selected");

    const r = await exportTo(bucketId, { owner: "bob" });
    expect(r.status).toBe(202);
    await drain();
    const repo = gh.repoByName("bob/bob-s-notes");
    expect(repo).toBeDefined();
    expect(repo!.private).toBe(true);
    expect(installation.repos.has(repo!.id)).toBe(true);
    expect(await sync(bucketId)).toMatchObject({ provider: "github", state: "in_sync", error: null, github: { repository: "bob/bob-s-notes" } });
    const other = await workClone(gh.adminUrl(repo!));
    clones.push(other);
    expect(other.read("index.html")).toBe("<h1>notes</h1>\n");

    // One refresh grant; the rotated refresh token replaced the first one, still sealed.
    expect(gh.refreshes).toBe(1);
    const rotated = authorizationRow("bob")!;
    expect(rotated.refresh_token_sealed).toStartWith("v1.");
    expect(rotated.refresh_token_sealed).not.toBe(kept.refresh_token_sealed);

    // A push on GitHub arrives through the app's webhook as one bucket version.
    const versions = await versionCount(bucketId);
    other.write("index.html", "<h1>notes v2</h1>\n");
    await other.commitAndPush("v2");
    const hook = await gh.deliver(t.url, "push", {
      ref: "refs/heads/main",
      repository: { id: repo!.id, full_name: repo!.fullName },
      installation: { id: installation.id },
    });
    expect(hook.status).toBe(202);
    await drain();
    expect(await bucketText(bucketId, "index.html")).toBe("<h1>notes v2</h1>\n");
    expect(await versionCount(bucketId)).toBe(versions + 1);

    // A bucket change is committed and pushed with the installation token.
    await directUpload(t, user.key, bucketId, textFile("todo.md", "- ship\n"));
    await t.pier.runner.schedulePeriodic();
    await drain();
    t.clock.advance(61_000);
    await drain();
    await other.pull();
    expect(other.read("todo.md")).toBe("- ship\n");
    expect(await git(other.dir, "log", "-1", "--format=%an")).toBe("Pier");
    expect((await sync(bucketId)).state).toBe("in_sync");

    await secretsNowhere(bucketId);
  });

  test("a name taken on the user's account is refused like in an organization; the rotated token stays usable", async () => {
    gh.createRepo("bob", "taken");
    const bucketId = await newBucket(t, user.key, "taken");
    await directUpload(t, user.key, bucketId, textFile("a.txt", "a\n"));
    const before = gh.refreshes;
    const r = await exportTo(bucketId, { owner: "bob" });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("VALIDATION_FAILED");
    expect(r.body.error.details.field).toBe("name");
    expect(await sync(bucketId)).toBeNull();
    // The refresh before the refusal rotated the token; the next export uses the new one.
    const ok = await exportTo(bucketId, { owner: "bob", name: "taken-too" });
    expect(ok.status).toBe(202);
    expect(gh.refreshes).toBe(before + 2);
    expect(gh.refusedRefreshes).toBe(0);
    await drain();
    expect((await sync(bucketId)).state).toBe("in_sync");
  });

  test("two exports at once use the same authorization one after the other: both succeed and the rotation survives", async () => {
    const a = await newBucket(t, user.key, "twin one");
    const b = await newBucket(t, user.key, "twin two");
    const before = gh.refreshes;
    const [ra, rb] = await Promise.all([exportTo(a, { owner: "bob" }), exportTo(b, { owner: "bob" })]);
    expect([ra.status, rb.status], JSON.stringify([ra.body, rb.body])).toEqual([202, 202]);
    expect(gh.refreshes).toBe(before + 2);
    expect(gh.refusedRefreshes).toBe(0);
    expect(gh.repoByName("bob/twin-one")).toBeDefined();
    expect(gh.repoByName("bob/twin-two")).toBeDefined();
    expect(authorizationRow("bob")?.refresh_token_sealed).toStartWith("v1.");
    await drain();
  });

  test("a revoked authorization is GITHUB_AUTHORIZATION_REQUIRED with the settings page; nothing is created, the bucket is untouched; authorizing again on the Git page heals it", async () => {
    const bucketId = await newBucket(t, user.key, "after revoke");
    await directUpload(t, user.key, bucketId, textFile("keep.txt", "keep\n"));
    const versions = await versionCount(bucketId);
    gh.revokeUserAuthorization("bob");

    const r = await exportTo(bucketId, { owner: "bob" });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("GITHUB_AUTHORIZATION_REQUIRED");
    expect(r.body.error.details.settings_url).toBe(`${t.pier.deps.urls.baseUrl}/dashboard/buckets/${bucketId}/git`);
    expect(gh.refusedRefreshes).toBe(1);
    expect(gh.repoByName("bob/after-revoke")).toBeUndefined();
    expect(await sync(bucketId)).toBeNull();
    expect(await versionCount(bucketId)).toBe(versions);
    expect(await bucketText(bucketId, "keep.txt")).toBe("keep\n");
    // The dead authorization is forgotten: the next try does not even ask GitHub.
    expect(authorizationRow("bob")).toBeNull();
    expect((await exportTo(bucketId, { owner: "bob" })).body.error.code).toBe("GITHUB_AUTHORIZATION_REQUIRED");
    expect(gh.refusedRefreshes).toBe(1);

    await reauthorize(bucketId, "bob");
    expect(authorizationRow("bob")?.refresh_token_sealed).toStartWith("v1.");
    const ok = await exportTo(bucketId, { owner: "bob" });
    expect(ok.status).toBe(202);
    await drain();
    expect(await sync(bucketId)).toMatchObject({ state: "in_sync", github: { repository: "bob/after-revoke" } });
  });

  test("an app without expiring user tokens: the access token is kept sealed and used as it is; revoking it on GitHub, or GitHub's revoke webhook, asks for a new authorization", async () => {
    gh.expiringUserTokens = false;
    try {
      const bucketId = await newBucket(t, user.key, "carol site");
      await directUpload(t, user.key, bucketId, textFile("index.html", "carol\n"));
      await installOnOwnAccount(bucketId, "carol");
      const kept = authorizationRow("carol")!;
      expect(kept.access_token_sealed).toStartWith("v1.");
      expect(kept.refresh_token_sealed).toBeNull();
      const refreshes = gh.refreshes;
      expect((await exportTo(bucketId, { owner: "carol" })).status).toBe(202);
      await drain();
      expect(gh.refreshes).toBe(refreshes);
      expect(await sync(bucketId)).toMatchObject({ state: "in_sync", github: { repository: "carol/carol-site" } });

      const second = await newBucket(t, user.key, "carol two");
      gh.revokeUserAuthorization("carol");
      const r = await exportTo(second, { owner: "carol" });
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe("GITHUB_AUTHORIZATION_REQUIRED");
      expect(gh.repoByName("carol/carol-two")).toBeUndefined();
      expect(authorizationRow("carol")).toBeNull();

      // Authorized again, then revoked on GitHub, which tells the app's webhook: Pier forgets it.
      await reauthorize(second, "carol");
      expect(authorizationRow("carol")).not.toBeNull();
      const hook = await gh.deliver(t.url, "github_app_authorization", { action: "revoked", sender: { id: gh.accountId("carol"), login: "carol" } });
      expect(hook.status).toBe(202);
      expect(authorizationRow("carol")).toBeNull();
    } finally {
      gh.expiringUserTokens = true;
    }
  });

  test("an app without Administration: write gets GITHUB_REPOSITORY_CREATE_UNAVAILABLE and creates nothing", async () => {
    gh.administrationWrite = false;
    try {
      const bucketId = await newBucket(t, user.key, "no admin");
      const r = await exportTo(bucketId, { owner: "bob" });
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe("GITHUB_REPOSITORY_CREATE_UNAVAILABLE");
      expect(r.body.error.details.account_login).toBe("bob");
      expect(gh.repoByName("bob/no-admin")).toBeUndefined();
      expect(await sync(bucketId)).toBeNull();
    } finally {
      gh.administrationWrite = true;
    }
  });

  test("if GitHub refuses to add the new repository to the installation, the export still connects and waits with repository_access_removed; granting it on GitHub resumes the sync", async () => {
    gh.refuseAddingRepositories = true;
    try {
      const bucketId = await newBucket(t, user.key, "not granted");
      await directUpload(t, user.key, bucketId, textFile("index.html", "granted later\n"));
      expect((await exportTo(bucketId, { owner: "bob" })).status).toBe(202);
      await drain();
      const repo = gh.repoByName("bob/not-granted")!;
      expect(repo.private).toBe(true);
      const installation = gh.installationOn("bob")!;
      expect(installation.repos.has(repo.id)).toBe(false);
      const waiting = await sync(bucketId);
      expect(waiting.state).toBe("error");
      expect(waiting.error.code).toBe("repository_access_removed");

      // The user grants the repository on GitHub, which tells the app's webhook.
      installation.repos.add(repo.id);
      const hook = await gh.deliver(t.url, "installation_repositories", {
        action: "added",
        installation: { id: installation.id },
        repositories_added: [{ id: repo.id, full_name: repo.fullName }],
      });
      expect(hook.status).toBe(202);
      await drain();
      expect((await sync(bucketId)).state).toBe("in_sync");
      const other = await workClone(gh.adminUrl(repo));
      clones.push(other);
      expect(other.read("index.html")).toBe("granted later\n");
    } finally {
      gh.refuseAddingRepositories = false;
    }
  });

  test("uninstalling the app from the personal account forgets the owner's kept authorization", async () => {
    gh.account("dave", "User");
    const bucketId = await newBucket(t, user.key, "dave");
    await installOnOwnAccount(bucketId, "dave");
    expect(authorizationRow("dave")).not.toBeNull();
    const inst = gh.installationOn("dave")!;
    inst.state = "deleted";
    const hook = await gh.deliver(t.url, "installation", {
      action: "deleted",
      installation: { id: inst.id, account: { id: gh.accountId("dave"), login: "dave", type: "User" } },
    });
    expect(hook.status).toBe(202);
    expect(authorizationRow("dave")).toBeNull();
    // Other users' authorizations stay.
    expect(authorizationRow("bob")).not.toBeNull();
  });

  test("a refresh token past its six months is not even offered to GitHub", async () => {
    const bucketId = await newBucket(t, user.key, "much later");
    await reauthorize(bucketId, "bob");
    const refused = gh.refusedRefreshes;
    const refreshes = gh.refreshes;
    t.clock.advance(200 * 86400_000);
    const r = await exportTo(bucketId, { owner: "bob" });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("GITHUB_AUTHORIZATION_REQUIRED");
    expect(gh.refusedRefreshes).toBe(refused);
    expect(gh.refreshes).toBe(refreshes);
    expect(gh.repoByName("bob/much-later")).toBeUndefined();
  });
});
