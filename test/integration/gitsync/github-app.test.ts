// Git sync through the GitHub App, end to end over real sockets: a loopback GitHub stand-in
// (REST API with JWT checks, installation tokens, OAuth code exchange; repositories served by
// git http-backend), Pier's dashboard pages as a signed-in user for the browser-only install,
// its REST API for connect/export, and the app's signed webhook for pushes and uninstalls.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { setReadOnly } from "../../../src/features/accounts/service";
import { Browser } from "../../helpers/browser";
import { bucketText as readBucketText, versionCount as countVersions, signedInBrowser } from "../../helpers/gitsync";
import { git, workClone, type WorkClone } from "../../helpers/git-server";
import { startGithubStandIn, type GithubStandIn, type StandInRepo } from "../../helpers/github-stand-in";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let gh: GithubStandIn;
let t: TestPier;
let user: TestUser;
let browser: Browser;
const clones: WorkClone[] = [];

beforeAll(async () => {
  gh = startGithubStandIn();
  t = await startTestPier(gh.config);
  gh.useClock(() => t.clock.now().getTime());
  gh.callbackUrl = `${t.url}/dashboard/git/github/callback`;
  gh.account("alice", "User");
  gh.account("acme", "Organization", ["alice"]);
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
const bucketText = (bucketId: string, path: string) => readBucketText(t, user.key, bucketId, path);
const versionCount = (bucketId: string) => countVersions(t, user.key, bucketId);

async function repoWith(owner: string, name: string, files: Record<string, string>): Promise<{ repo: StandInRepo; other: WorkClone }> {
  const repo = gh.createRepo(owner, name);
  const other = await workClone(gh.adminUrl(repo));
  clones.push(other);
  for (const [p, text] of Object.entries(files)) other.write(p, text);
  if (Object.keys(files).length) await other.commitAndPush("initial content");
  return { repo, other };
}

/**
 * "Link an existing installation" as `githubUser`: Pier learns again which of the installation's
 * repositories that GitHub user can see (a repository granted after the last link needs this).
 */
async function linkAgain(bucketId: string, githubUser = "alice") {
  const start = await browser.get(`/dashboard/buckets/${bucketId}/git/github/authorize`);
  expect(start.status).toBe(303);
  const onGithub = await fetch(start.location!, { headers: { "x-github-user": githubUser }, redirect: "manual" });
  expect(onGithub.status).toBe(302);
  const callback = new URL(onGithub.headers.get("location")!);
  const back = await browser.get(callback.pathname + callback.search);
  expect(back.status).toBe(303);
  expect(back.location).toBe(`/dashboard/buckets/${bucketId}/git?done=github_linked`);
}

/** "Install on GitHub" on the bucket's Git page, GitHub's page (as `githubUser`), and the way back. */
async function installThroughPages(bucketId: string, target: string, githubUser = "alice") {
  const page = await browser.get(`/dashboard/buckets/${bucketId}/git`);
  expect(page.status).toBe(200);
  expect(page.text).toContain(`/dashboard/buckets/${bucketId}/git/github/install`);
  const start = await browser.get(`/dashboard/buckets/${bucketId}/git/github/install`);
  expect(start.status).toBe(303);
  expect(start.location!).toStartWith(`${gh.url}/apps/${gh.app.slug}/installations/new?state=`);
  const onGithub = await fetch(`${start.location}&target=${target}`, { headers: { "x-github-user": githubUser }, redirect: "manual" });
  expect(onGithub.status).toBe(302);
  const callback = new URL(onGithub.headers.get("location")!);
  expect(callback.searchParams.get("installation_id")).toMatch(/^\d+$/);
  return browser.get(callback.pathname + callback.search);
}

describe("GitHub App: install, connect, both directions", () => {
  test("install through the dashboard, connect an existing repository, import; push webhook and bucket changes flow both ways; tokens are cached and renewed", async () => {
    const { repo, other } = await repoWith("acme", "site", { "index.html": "<h1>acme</h1>\n", "docs/a.md": "# A\n" });
    const bucketId = await newBucket(t, user.key, "acme site");
    const back = await installThroughPages(bucketId, "acme");
    expect(back.status).toBe(303);
    expect(back.location).toBe(`/dashboard/buckets/${bucketId}/git?done=github_linked`);

    const setup = await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync/setup`, { key: user.key });
    expect(setup.status).toBe(200);
    const s = setup.body.data.github_sync_setup;
    expect(s.providers).toEqual(["git", "github"]);
    expect(s.installations).toEqual([expect.objectContaining({ account_login: "acme", account_type: "Organization", state: "active" })]);
    expect(s.repositories).toEqual([expect.objectContaining({ full_name: "acme/site", default_branch: "main", private: true })]);
    // The page lists the repository to pick.
    expect((await browser.get(`/dashboard/buckets/${bucketId}/git`)).text).toContain("acme/site");

    const connect = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key, body: { direction: "import", repository: "acme/site" } });
    expect(connect.status).toBe(202);
    await drain();
    const conn = await sync(bucketId);
    expect(conn).toMatchObject({ provider: "github", state: "in_sync", branch: "main", error: null, webhook_url: null, github: { repository: "acme/site" } });
    expect(await bucketText(bucketId, "docs/a.md")).toBe("# A\n");
    expect(await versionCount(bucketId)).toBe(1);
    // No token, key or secret in any answer.
    const read = await t.api("GET", `/api/v1/buckets/${bucketId}`, { key: user.key });
    for (const secret of [gh.app.clientSecret, gh.app.webhookSecret, "ghs_", "BEGIN RSA"]) {
      expect(read.text).not.toContain(secret);
      expect(setup.text).not.toContain(secret);
    }

    // A push on GitHub, announced by the app's signed webhook: one bucket version.
    other.write("index.html", "<h1>acme v2</h1>\n");
    other.write("new.txt", "new\n");
    await other.commitAndPush("v2");
    const hook = await gh.deliver(t.url, "push", {
      ref: "refs/heads/main",
      repository: { id: repo.id, full_name: repo.fullName },
      installation: { id: gh.installationOn("acme")!.id },
    });
    expect(hook.status).toBe(202);
    expect(((await hook.json()) as any).data.connections).toBe(1);
    await drain();
    expect(await bucketText(bucketId, "index.html")).toBe("<h1>acme v2</h1>\n");
    expect(await versionCount(bucketId)).toBe(2);

    // A bucket change becomes a commit pushed with the installation token.
    await directUpload(t, user.key, bucketId, textFile("from-pier.txt", "hello github\n"));
    await t.pier.runner.schedulePeriodic();
    await drain();
    t.clock.advance(61_000);
    await drain();
    await other.pull();
    expect(other.read("from-pier.txt")).toBe("hello github\n");
    expect(await git(other.dir, "log", "-1", "--format=%an")).toBe("Pier");
    expect((await sync(bucketId)).state).toBe("in_sync");

    // One token served every sync so far; one past its renewal point is replaced.
    expect(gh.minted).toBe(1);
    expect(gh.badJwts).toBe(0);
    t.clock.advance(56 * 60_000);
    await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} });
    await drain();
    expect((await sync(bucketId)).state).toBe("in_sync");
    expect(gh.minted).toBe(2);
  });

  test("export creates a new private repository in the organization and pushes the bucket; in a personal account too", async () => {
    const bucketId = await newBucket(t, user.key, "Launch Page!");
    await directUpload(t, user.key, bucketId, textFile("index.html", "<p>launch</p>\n"));
    // The acme installation is already linked to this account (previous test).
    const r = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/export`, { key: user.key, body: { owner: "acme" } });
    expect(r.status).toBe(202);
    await drain();
    const created = gh.repoByName("acme/launch-page");
    expect(created?.private).toBe(true);
    expect(await sync(bucketId)).toMatchObject({ state: "in_sync", github: { repository: "acme/launch-page" } });
    const other = await workClone(gh.adminUrl(created!));
    clones.push(other);
    expect(other.read("index.html")).toBe("<p>launch</p>\n");

    // A personal installation, linked through the same pages: Pier creates the repository with
    // alice's own authorization (github-personal-export.test.ts has the details).
    const personal = await newBucket(t, user.key, "personal");
    await directUpload(t, user.key, personal, textFile("a.txt", "a\n"));
    expect((await installThroughPages(personal, "alice")).status).toBe(303);
    const mine = await t.api("POST", `/api/v1/buckets/${personal}/github_sync/export`, { key: user.key, body: { owner: "alice" } });
    expect(mine.status).toBe(202);
    await drain();
    expect(gh.repoByName("alice/personal")?.private).toBe(true);
    expect(await sync(personal)).toMatchObject({ state: "in_sync", github: { repository: "alice/personal" } });
  });

  test("an uninstalled app stops the connection with installation_revoked; the bucket keeps every file and version; disconnect removes the local store", async () => {
    const { repo } = await repoWith("acme", "docs", { "keep.md": "keep\n" });
    const bucketId = await newBucket(t, user.key, "acme docs");
    await linkAgain(bucketId);
    const c = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key, body: { direction: "import", repository: repo.fullName } });
    expect(c.status).toBe(202);
    await drain();
    expect((await sync(bucketId)).state).toBe("in_sync");
    const versions = await versionCount(bucketId);
    const store = join(t.dataDir, "git", (await sync(bucketId)).id);
    expect(existsSync(store)).toBe(true);

    const inst = gh.installationOn("acme")!;
    inst.state = "deleted";
    try {
      const hook = await gh.deliver(t.url, "installation", { action: "deleted", installation: { id: inst.id, account: { login: "acme" } } });
      expect(hook.status).toBe(202);
      const s = await sync(bucketId);
      expect(s.state).toBe("error");
      expect(s.error).toMatchObject({ code: "installation_revoked" });
      // A sync now fails the same way, without touching the bucket.
      await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} });
      await drain();
      expect((await sync(bucketId)).error.code).toBe("installation_revoked");
      expect(await bucketText(bucketId, "keep.md")).toBe("keep\n");
      expect(await versionCount(bucketId)).toBe(versions);
      const setup = await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync/setup`, { key: user.key });
      expect(setup.body.data.github_sync_setup.installations.find((i: any) => i.account_login === "acme").state).toBe("deleted");

      const d = await t.api("DELETE", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key });
      expect(d.status).toBe(200);
      expect(existsSync(store)).toBe(false);
      expect(await bucketText(bucketId, "keep.md")).toBe("keep\n");
    } finally {
      inst.state = "active";
    }
  });

  test("a repository taken away from the installation leaves repository_access_removed and loses nothing", async () => {
    // Link acme again (the previous test uninstalled it).
    const { repo, other } = await repoWith("acme", "blog", { "post.md": "one\n" });
    const bucketId = await newBucket(t, user.key, "acme blog");
    expect((await installThroughPages(bucketId, "acme")).status).toBe(303);
    expect(
      (await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key, body: { direction: "import", repository: repo.fullName } })).status,
    ).toBe(202);
    await drain();
    expect((await sync(bucketId)).state).toBe("in_sync");
    const inst = gh.installationOn("acme")!;
    inst.repos.delete(repo.id);
    const hook = await gh.deliver(t.url, "installation_repositories", {
      action: "removed",
      installation: { id: inst.id },
      repositories_removed: [{ id: repo.id, full_name: repo.fullName }],
    });
    expect(hook.status).toBe(202);
    expect((await sync(bucketId)).error.code).toBe("repository_access_removed");
    other.write("post.md", "two\n");
    await other.commitAndPush("two");
    await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} });
    await drain();
    const s = await sync(bucketId);
    expect(s.state).toBe("error");
    expect(s.error.code).toBe("repository_access_removed");
    expect(await bucketText(bucketId, "post.md")).toBe("one\n");
  });
});

describe("GitHub App: a deleted repository", () => {
  test("GitHub's repository deleted event stops the connection with repository_deleted; the next sync without it says repository_access_removed; the bucket keeps everything", async () => {
    const { repo } = await repoWith("acme", "doomed", { "page.md": "page\n" });
    const bucketId = await newBucket(t, user.key, "acme doomed");
    await linkAgain(bucketId);
    expect(
      (await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key, body: { direction: "import", repository: repo.fullName } })).status,
    ).toBe(202);
    await drain();
    expect((await sync(bucketId)).state).toBe("in_sync");
    const versions = await versionCount(bucketId);
    const inst = gh.installationOn("acme")!;
    // Deleted on GitHub: gone from the installation, and the app hears of it.
    inst.repos.delete(repo.id);
    const hook = await gh.deliver(t.url, "repository", {
      action: "deleted",
      repository: { id: repo.id, full_name: repo.fullName },
      installation: { id: inst.id },
    });
    expect(hook.status).toBe(202);
    expect(((await hook.json()) as any).data.connections).toBe(1);
    expect((await sync(bucketId)).error.code).toBe("repository_deleted");
    await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} });
    await drain();
    const s = await sync(bucketId);
    expect(s.state).toBe("error");
    expect(s.error.code).toBe("repository_access_removed");
    expect(await bucketText(bucketId, "page.md")).toBe("page\n");
    expect(await versionCount(bucketId)).toBe(versions);
  });
});

describe("GitHub App: orphaned stores", () => {
  test("deleting a bucket removes its repository store under data/git at the next poll", async () => {
    const { repo } = await repoWith("acme", "gone", { "x.txt": "x\n" });
    const bucketId = await newBucket(t, user.key, "to delete");
    await linkAgain(bucketId);
    await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key, body: { direction: "import", repository: repo.fullName } });
    await drain();
    const store = join(t.dataDir, "git", (await sync(bucketId)).id);
    expect(existsSync(store)).toBe(true);
    const bucket = await t.api("GET", `/api/v1/buckets/${bucketId}`, { key: user.key });
    const del = await t.api("DELETE", `/api/v1/buckets/${bucketId}`, { key: user.key, body: { confirmation: bucket.body.data.bucket.delete?.confirmation } });
    expect(del.status).toBeLessThan(300);
    await drain();
    // The poll runs every 10 s (its next run may already be queued by an earlier test).
    await t.pier.runner.schedulePeriodic();
    t.clock.advance(11_000);
    await drain();
    expect(existsSync(store)).toBe(false);
  });
});

describe("GitHub App: repositories hidden from the member who linked", () => {
  test("an organization member can connect only the installation's repositories they can see on GitHub; others answer as if not granted", async () => {
    const { repo: handbook } = await repoWith("acme", "handbook", { "a.md": "a\n" });
    const { repo: payroll } = await repoWith("acme", "payroll", { "salaries.csv": "secret\n" });
    payroll.visibleTo = new Set(["alice"]); // a team bob is not in
    gh.installationOn("acme")!.users.add("bob"); // bob is a member of acme
    const bucketId = await newBucket(t, user.key, "bob's bucket");
    await linkAgain(bucketId, "bob");

    const setup = (await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync/setup`, { key: user.key })).body.data.github_sync_setup;
    const names = setup.repositories.map((r: { full_name: string }) => r.full_name);
    expect(names).toContain("acme/handbook");
    expect(names).not.toContain("acme/payroll");

    const hidden = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, {
      key: user.key,
      body: { direction: "import", repository: payroll.fullName },
    });
    expect(hidden.status).toBe(409);
    expect(hidden.body.error.code).toBe("GITHUB_INSTALLATION_REQUIRED");
    const missing = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, {
      key: user.key,
      body: { direction: "import", repository: "acme/nothing-here" },
    });
    expect(missing.body.error.message).toBe(hidden.body.error.message.replace("payroll", "nothing-here"));
    expect(await sync(bucketId)).toBeNull();

    const visible = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, {
      key: user.key,
      body: { direction: "import", repository: handbook.fullName },
    });
    expect(visible.status).toBe(202);
    await drain();
    expect(await bucketText(bucketId, "a.md")).toBe("a\n");
  });

  test("a read-only account cannot start or finish linking an installation (the GETs that write)", async () => {
    const bucketId = await newBucket(t, user.key, "read-only link");
    const start = await browser.get(`/dashboard/buckets/${bucketId}/git/github/authorize`);
    expect(start.status).toBe(303);
    const onGithub = await fetch(start.location!, { headers: { "x-github-user": "alice" }, redirect: "manual" });
    const callback = new URL(onGithub.headers.get("location")!);
    setReadOnly(t.pier.deps, user.accountId, true, "test");
    try {
      const again = await browser.get(`/dashboard/buckets/${bucketId}/git/github/authorize`);
      expect(again.status).not.toBe(303);
      expect(again.text).toContain("read-only");
      const finish = await browser.get(`${callback.pathname}${callback.search}`);
      expect(finish.status).not.toBe(303);
      expect(finish.text).toContain("read-only");
    } finally {
      setReadOnly(t.pier.deps, user.accountId, false);
    }
  });
});
