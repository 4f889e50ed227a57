// Git sync end to end over real sockets: a real git server (git http-backend on loopback, basic
// auth), the system git CLI as the other side, Pier's REST API and its job worker driven by the
// test. Both directions, one bucket version per push, batched bucket commits, conflicts and
// their resolution, force pushes, revoked credentials, disconnect, webhooks.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { saveRepository } from "../../../src/features/gitsync";
import { csrfOf } from "../../helpers/browser";
import { bucketText as readBucketText, signedInBrowser, versionCount as countVersions } from "../../helpers/gitsync";
import { git, startGitServer, workClone, type GitServer, type WorkClone } from "../../helpers/git-server";
import { apiKeyActorOf, startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { directUpload, newBucket, syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
let server: GitServer;
let user: TestUser;
const cred = { user: "deploy", password: "s3cret-token" };
const authed = (url: string, c = cred) => url.replace("http://", `http://${c.user}:${c.password}@`);
const clones: WorkClone[] = [];

beforeAll(async () => {
  server = startGitServer({ credential: cred });
  t = await startTestPier({ gitAllowHttp: "on", gitAllowPrivateNetwork: "on" });
  user = await t.user({ plan: "pro" });
});
afterAll(async () => {
  for (const c of clones) c.cleanup();
  await t?.stop();
  await server?.stop();
});

let n = 0;
async function repoWith(files: Record<string, string>): Promise<{ url: string; other: WorkClone }> {
  const url = server.createRepo(`repo${++n}`);
  const other = await workClone(authed(url));
  clones.push(other);
  for (const [p, text] of Object.entries(files)) other.write(p, text);
  if (Object.keys(files).length) await other.commitAndPush("initial content");
  return { url, other };
}

const sync = async (bucketId: string) => (await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key })).body.data.github_sync;
const drain = () => t.pier.runner.drain();
async function bucketPaths(bucketId: string): Promise<string[]> {
  const r = await t.api("GET", `/api/v1/buckets/${bucketId}/files?limit=1000`, { key: user.key });
  return r.body.data.files.map((f: any) => f.path).sort();
}
const bucketText = (bucketId: string, path: string) => readBucketText(t, user.key, bucketId, path);
const versionCount = (bucketId: string) => countVersions(t, user.key, bucketId);
function signed(secret: string, body: string) {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}
/** The connection's webhook secret, as the dashboard page shows it to the owner. */
function webhookSecret(bucketId: string): string {
  const { webhookSecretOf } = require("../../../src/features/gitsync");
  const row = t.pier.deps.sqlite.query("select * from git_sync_connections where bucket_id = ?").get(bucketId) as any;
  return webhookSecretOf(t.pier.deps, { id: row.id, webhookSecretSealed: row.webhook_secret_sealed });
}
/** What the bucket's Git page does when the owner saves the repository and its token. */
function saveOnPage(bucketId: string, url: string, c = cred) {
  saveRepository(t.pier.deps, apiKeyActorOf(user), bucketId, { repository_url: url, branch: "main", username: c.user, password: c.password });
}
async function connected(files: Record<string, string>, direction: "import" | "export" = "import") {
  const repo = await repoWith(files);
  const bucketId = await newBucket(t, user.key, `git ${n}`);
  saveOnPage(bucketId, repo.url);
  const r = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key, body: { direction } });
  expect(r.status).toBe(202);
  await drain();
  return { ...repo, bucketId };
}

describe("git sync: import, then both directions", () => {
  test("import brings every file of the branch into the empty bucket as one version; state in_sync; no secret in any answer", async () => {
    const { bucketId, url } = await connected({ "index.html": "<h1>hi</h1>\n", "docs/guide.md": "# Guide\n", "docs/deep/x.txt": "x\n" });
    expect(await bucketPaths(bucketId)).toEqual(["docs/deep/x.txt", "docs/guide.md", "index.html"]);
    expect(await bucketText(bucketId, "docs/guide.md")).toBe("# Guide\n");
    expect(await versionCount(bucketId)).toBe(1);
    const s = await sync(bucketId);
    expect(s).toMatchObject({ state: "in_sync", repository_url: url, branch: "main", error: null, conflicts: [], credential_saved: true });
    expect(s.last_commit).toMatch(/^[0-9a-f]{40}$/);
    const bucket = await t.api("GET", `/api/v1/buckets/${bucketId}`, { key: user.key });
    expect(bucket.body.data.bucket.github_sync.state).toBe("in_sync");
    expect(bucket.body.data.bucket.github_sync_setup).toMatchObject({
      eligible: true,
      settings_url: expect.stringMatching(new RegExp(`^http://[^/]+/dashboard/buckets/${bucketId}/git$`)),
    });
    expect(bucket.text).not.toContain(cred.password);
    expect(bucket.text).not.toContain(webhookSecret(bucketId));
  });

  test("bucket changes are batched into one commit with a readable message and author, and pushed", async () => {
    const { bucketId, other } = await connected({ "index.html": "v1\n", "old.txt": "old\n" });
    expect((await directUpload(t, user.key, bucketId, textFile("index.html", "v2 from bucket\n"))).status).toBeLessThan(300);
    expect((await directUpload(t, user.key, bucketId, textFile("notes/new.txt", "new\n"))).status).toBeLessThan(300);
    const head = await git(other.dir, "ls-remote", "origin", "main");
    // Not yet: bucket changes wait for a quiet moment so several become one commit.
    await t.pier.runner.schedulePeriodic();
    await drain();
    expect(await git(other.dir, "ls-remote", "origin", "main")).toBe(head);
    t.clock.advance(61_000);
    await drain();
    await other.pull();
    expect(other.read("index.html")).toBe("v2 from bucket\n");
    expect(other.read("notes/new.txt")).toBe("new\n");
    expect(other.read("old.txt")).toBe("old\n");
    expect(await git(other.dir, "log", "-1", "--format=%an <%ae>|%s")).toMatch(/^Pier <git-sync@.+>\|Update 2 file\(s\)/);
    expect(await git(other.dir, "rev-list", "--count", "HEAD")).toBe("2");
    expect((await sync(bucketId)).state).toBe("in_sync");
  });

  test("a push to the branch, announced by a signed webhook, becomes ONE bucket version", async () => {
    const { bucketId, other } = await connected({ "a.txt": "a1\n", "b.txt": "b1\n" });
    const before = await versionCount(bucketId);
    other.write("a.txt", "a2\n");
    other.remove("b.txt");
    other.write("c/d.txt", "d\n");
    await other.commitAndPush("three changes");
    const s = await sync(bucketId);
    const body = JSON.stringify({ ref: "refs/heads/main" });
    const hook = await t.api("POST", `/api/v1/git_sync/webhooks/${s.id}`, {
      rawBody: body,
      headers: { "x-hub-signature-256": signed(webhookSecret(bucketId), body) },
    });
    expect(hook.status).toBe(202);
    await drain();
    expect(await bucketPaths(bucketId)).toEqual(["a.txt", "c/d.txt"]);
    expect(await bucketText(bucketId, "a.txt")).toBe("a2\n");
    expect(await versionCount(bucketId)).toBe(before + 1);
  });

  test("a webhook with a wrong or missing signature is refused and runs nothing", async () => {
    const { bucketId, other } = await connected({ "a.txt": "a\n" });
    other.write("a.txt", "changed\n");
    await other.commitAndPush("change");
    const s = await sync(bucketId);
    const body = JSON.stringify({ ref: "refs/heads/main" });
    const jobs = () => (t.pier.deps.sqlite.query("select count(*) n from jobs where kind = 'gitsync.sync'").get() as any).n;
    const before = jobs();
    const wrong = await t.api("POST", `/api/v1/git_sync/webhooks/${s.id}`, {
      rawBody: body,
      headers: { "x-hub-signature-256": signed("not-the-secret", body) },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe("GIT_WEBHOOK_SIGNATURE_INVALID");
    const missing = await t.api("POST", `/api/v1/git_sync/webhooks/${s.id}`, { rawBody: body });
    expect(missing.status).toBe(401);
    // Signed for another body (a replayed signature on altered content).
    const altered = await t.api("POST", `/api/v1/git_sync/webhooks/${s.id}`, {
      rawBody: body.replace("main", "evil"),
      headers: { "x-hub-signature-256": signed(webhookSecret(bucketId), body) },
    });
    expect(altered.status).toBe(401);
    const unknown = await t.api("POST", `/api/v1/git_sync/webhooks/gsc_doesnotexist`, { rawBody: body, headers: { "x-hub-signature-256": signed("x", body) } });
    expect(unknown.status).toBe(401);
    expect(jobs()).toBe(before);
    await drain();
    expect(await bucketText(bucketId, "a.txt")).toBe("a\n");
  });
});

describe("git sync: conflicts, force pushes, failures, disconnect", () => {
  test("a path changed on both sides is a conflict: nothing overwritten; resolve_all picks one side for every path", async () => {
    const { bucketId, other } = await connected({ "page.md": "base\n", "other.md": "o\n" });
    await directUpload(t, user.key, bucketId, textFile("page.md", "bucket edit\n"));
    other.write("page.md", "repo edit\n");
    other.write("other.md", "o2\n");
    const remoteHead = await other.commitAndPush("repo edit");
    const q = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} });
    expect(q.status).toBe(202);
    await drain();
    const s = await sync(bucketId);
    expect(s.state).toBe("conflict");
    expect(s.conflicts).toEqual(["page.md"]);
    expect(await bucketText(bucketId, "page.md")).toBe("bucket edit\n");
    expect(await git(other.dir, "ls-remote", "origin", "main")).toStartWith(remoteHead);

    const incomplete = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: { resolutions: { "other.md": "bucket" } } });
    expect(incomplete.status).toBe(422);
    expect(incomplete.body.error.code).toBe("GIT_SYNC_CONFLICT_CHOICE");

    // A few thousand long paths fit the body (more than the default 64 KiB); unknown ones are named.
    const many = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`${"deep/".repeat(10)}${i}.md`, "bucket"]));
    const large = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, {
      key: user.key,
      body: { resolutions: { ...many, "page.md": "bucket" } },
    });
    expect(large.status).toBe(422);
    expect(large.body.error.details.unknown).toHaveLength(100);
    const both = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, {
      key: user.key,
      body: { resolutions: { "page.md": "bucket" }, resolve_all: "bucket" },
    });
    expect(both.status).toBe(422);
    expect(both.body.error.code).toBe("VALIDATION_FAILED");

    // One side for every conflicting path, without naming them.
    const resolve = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: { resolve_all: "bucket" } });
    expect(resolve.status).toBe(202);
    await drain();
    expect((await sync(bucketId)).state).toBe("in_sync");
    expect(await bucketText(bucketId, "other.md")).toBe("o2\n");
    await other.pull();
    expect(other.read("page.md")).toBe("bucket edit\n");
  });

  test("paths named like Object.prototype members (constructor, toString, hasOwnProperty) are conflicts like any other", async () => {
    const names = ["constructor", "hasOwnProperty", "toString"];
    const { bucketId, other } = await connected(Object.fromEntries(names.map((p) => [p, "base\n"])));
    for (const p of names) {
      await directUpload(t, user.key, bucketId, textFile(p, "bucket edit\n"));
      other.write(p, "repository edit\n");
    }
    await other.commitAndPush("repository edits");
    expect((await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} })).status).toBe(202);
    await drain();
    const s = await sync(bucketId);
    expect(s.state).toBe("conflict");
    expect(s.conflicts).toEqual([...names].sort());
    for (const p of names) expect(await bucketText(bucketId, p)).toBe("bucket edit\n");
    // A choice is an own key naming a side: missing ones are not filled in from the prototype.
    const partial = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: { resolutions: { hasOwnProperty: "bucket" } } });
    expect(partial.status).toBe(422);
    expect(partial.body.error.details.missing.sort()).toEqual(["constructor", "toString"]);
    const resolutions = { constructor: "repository", toString: "bucket", hasOwnProperty: "bucket" };
    const resolve = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: { resolutions } });
    expect(resolve.status).toBe(202);
    await drain();
    expect((await sync(bucketId)).state).toBe("in_sync");
    expect(await bucketText(bucketId, "constructor")).toBe("repository edit\n");
    expect(await bucketText(bucketId, "toString")).toBe("bucket edit\n");
  });

  // The Git page lists 1,000 conflicts one by one; it used to post only the first 1,000 choices
  // of more (so the 1,001st was always "missing") and the paths themselves (over the 64 KiB form
  // body with long ones). Above 1,000 it now names the count and offers one side for all (D299).
  test("1,001 conflicts: the Git page gives the count and resolves them all to one side; a choice from a stale page is refused", async () => {
    const names = Array.from({ length: 1001 }, (_, i) => `c/${String(i).padStart(4, "0")}.txt`);
    const { bucketId, other } = await connected(Object.fromEntries(names.map((p) => [p, "base\n"])));
    // The bucket deletes them all (one upload session), the repository changes them all.
    await syncFiles(t, user.key, bucketId, [textFile("keep.txt", "k\n")], { deleteMissing: true });
    for (const p of names) other.write(p, "repository edit\n");
    await other.commitAndPush("repository edits");
    await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} });
    await drain();
    expect((await sync(bucketId)).conflicts.length).toBe(1001);
    const b = await signedInBrowser(t, user);
    const gitPage = `/dashboard/buckets/${bucketId}/git`;
    const page = (await b.get(gitPage)).text;
    expect(page.includes("<strong>1,001 paths</strong> are in conflict")).toBe(true);
    const digest = /name="conflicts" value="([^"]+)"/.exec(page)![1]!;
    const stale = await b.post(`${gitPage}/resolve`, { csrf: csrfOf(page), conflicts: "another list", all: "bucket" });
    expect(stale.status).toBe(422);
    expect(stale.text).toContain("The conflicts changed since this page was shown");
    const chosen = await b.post(`${gitPage}/resolve`, { csrf: csrfOf(page), conflicts: digest, all: "bucket" });
    expect(chosen.status).toBe(303);
    await drain();
    expect((await sync(bucketId)).state).toBe("in_sync");
    await other.pull();
    expect(await git(other.dir, "ls-files")).toBe("keep.txt");
  });

  test("a force push (history rewritten) re-syncs the bucket to the new tree without losing bucket versions", async () => {
    const { bucketId, other } = await connected({ "keep.txt": "k\n", "gone.txt": "g\n" });
    const before = await versionCount(bucketId);
    await other.orphan();
    other.remove("gone.txt");
    other.write("keep.txt", "rewritten\n");
    await other.commitAndPush("history rewritten", true);
    await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} });
    await drain();
    expect((await sync(bucketId)).state).toBe("in_sync");
    expect(await bucketPaths(bucketId)).toEqual(["keep.txt"]);
    expect(await bucketText(bucketId, "keep.txt")).toBe("rewritten\n");
    expect(await versionCount(bucketId)).toBe(before + 1);
    // The old content is still in the bucket's history.
    const versions = (await t.api("GET", `/api/v1/buckets/${bucketId}/versions?limit=10`, { key: user.key })).body.data.versions;
    expect(versions.length).toBe(before + 1);
  });

  test("a revoked credential stops the sync with auth_failed and loses nothing; a new token saved on the page recovers", async () => {
    const { bucketId, other } = await connected({ "a.txt": "a\n" });
    other.write("a.txt", "a2\n");
    await other.commitAndPush("change");
    server.setCredential({ user: "deploy", password: "rotated" });
    try {
      await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} });
      await drain();
      const s = await sync(bucketId);
      expect(s.state).toBe("error");
      expect(s.error).toMatchObject({ code: "auth_failed" });
      expect(await bucketText(bucketId, "a.txt")).toBe("a\n");
      saveOnPage(bucketId, (await sync(bucketId)).repository_url, { user: "deploy", password: "rotated" });
      await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} });
      await drain();
      expect((await sync(bucketId)).state).toBe("in_sync");
      expect(await bucketText(bucketId, "a.txt")).toBe("a2\n");
    } finally {
      server.setCredential(cred);
    }
  });

  test("a deleted repository stops the sync with repository_not_found and loses nothing", async () => {
    const { bucketId, url } = await connected({ "a.txt": "a\n" });
    const versions = await versionCount(bucketId);
    rmSync(join(server.root, new URL(url).pathname.split("/").pop()!), { recursive: true, force: true });
    await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} });
    await drain();
    const s = await sync(bucketId);
    expect(s.state).toBe("error");
    expect(s.error).toMatchObject({ code: "repository_not_found" });
    expect(await bucketText(bucketId, "a.txt")).toBe("a\n");
    expect(await versionCount(bucketId)).toBe(versions);
  });

  test("files a bucket refuses (forbidden types, secrets) stop the import with refused_files; the bucket stays empty", async () => {
    const { bucketId } = await connected({ "ok.txt": "fine\n", ".env": "SECRET=1\n", "tools/run.exe": "MZ" });
    const s = await sync(bucketId);
    expect(s.state).toBe("error");
    expect(s.error.code).toBe("refused_files");
    expect(s.error.details.paths.map((p: any) => p.path).sort()).toEqual([".env", "tools/run.exe"]);
    expect(await bucketPaths(bucketId)).toEqual([]);
  });

  test("paths a bucket cannot hold (not in NFC; a backslash) stop the import with refused_files; the bucket stays empty", async () => {
    const decomposed = "cafe\u0301.txt";
    const first = await connected({ "ok.txt": "fine\n", [decomposed]: "y\n" });
    const s = await sync(first.bucketId);
    expect(s.state).toBe("error");
    expect(s.error.code).toBe("refused_files");
    expect(s.error.details.paths.map((p: any) => p.path)).toEqual([decomposed]);
    expect(await bucketPaths(first.bucketId)).toEqual([]);

    const second = await connected({ "ok.txt": "fine\n", "docs/dir\\evil.txt": "x\n" });
    const s2 = await sync(second.bucketId);
    expect(s2.state).toBe("error");
    expect(s2.error.code).toBe("refused_files");
    expect(s2.error.details.paths.map((p: any) => p.path)).toEqual(["docs/dir\\evil.txt"]);
    expect(await bucketPaths(second.bucketId)).toEqual([]);
  });

  test("disconnect deletes nothing on either side; github_sync becomes null; the Git page's needs its box ticked", async () => {
    const { bucketId, other } = await connected({ "a.txt": "a\n" });
    // The page's Disconnect deletes the saved token and webhook secret: not without its box (D297).
    const b = await signedInBrowser(t, user);
    const gitPage = `/dashboard/buckets/${bucketId}/git`;
    const bare = await b.post(`${gitPage}/disconnect`, { csrf: csrfOf((await b.get(gitPage)).text) });
    expect(await sync(bucketId)).not.toBeNull();
    expect(bare.status).toBe(422);
    expect(
      /aria-describedby="disconnect-confirm-error">[^<]*<\/label>\s*<span class="field-error" id="disconnect-confirm-error">Tick the box to confirm/.test(
        bare.text,
      ),
    ).toBe(true);
    const d = await t.api("DELETE", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key });
    expect(d.status).toBe(200);
    expect(d.body.data).toMatchObject({ disconnected: true, github_sync: null });
    expect(await sync(bucketId)).toBeNull();
    expect(await bucketPaths(bucketId)).toEqual(["a.txt"]);
    await other.pull();
    expect(other.read("a.txt")).toBe("a\n");
    // Nothing runs for it any more.
    await directUpload(t, user.key, bucketId, textFile("b.txt", "b\n"));
    t.clock.advance(700_000);
    await drain();
    await other.pull();
    expect(await git(other.dir, "ls-files")).toBe("a.txt");
  });

  test("import needs an empty bucket; export pushes the bucket into an empty repository", async () => {
    const repo = await repoWith({});
    const bucketId = await newBucket(t, user.key, "export me");
    await directUpload(t, user.key, bucketId, textFile("site/index.html", "<p>exported</p>\n"));
    saveOnPage(bucketId, repo.url);
    const refused = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key, body: { direction: "import" } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("GIT_SYNC_BUCKET_NOT_EMPTY");
    const ok = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key, body: { direction: "export" } });
    expect(ok.status).toBe(202);
    await drain();
    expect((await sync(bucketId)).state).toBe("in_sync");
    await repo.other.pull();
    expect(repo.other.read("site/index.html")).toBe("<p>exported</p>\n");
  });
});

describe("git sync: automatic republish", () => {
  test("with auto_publish on, a push that changes the bucket republishes its live site (deploy trigger git_sync); off, it does not", async () => {
    const { bucketId, other } = await connected({ "index.html": "<h1>v1</h1>\n" });
    const pub = await t.api("POST", `/api/v1/buckets/${bucketId}/publication`, { key: user.key, body: {} });
    expect(pub.status).toBe(202);
    const pubId = pub.body.data.publication.id;
    await drain();
    const deploys = async () => (await t.api("GET", `/api/v1/publications/${pubId}/deploys`, { key: user.key })).body.data.deploys;
    expect((await deploys()).length).toBe(1);

    other.write("index.html", "<h1>v2</h1>\n");
    await other.commitAndPush("v2, not republished");
    await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} });
    await drain();
    expect(await bucketText(bucketId, "index.html")).toBe("<h1>v2</h1>\n");
    expect((await deploys()).length).toBe(1);

    const patch = await t.api("PATCH", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key, body: { auto_publish: true } });
    expect(patch.status).toBe(200);
    expect(patch.body.data.github_sync.auto_publish).toBe(true);
    other.write("index.html", "<h1>v3</h1>\n");
    await other.commitAndPush("v3, republished");
    await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} });
    await drain();
    await drain();
    const after = await deploys();
    expect(after.length).toBe(2);
    expect(after[0].trigger).toBe("git_sync");
    expect(after[0].live).toBe(true);
  });
});

describe("git sync: polling without a webhook", () => {
  test("the branch is checked every 60 s, doubling while nothing changes; a change is picked up and resets the interval", async () => {
    const { bucketId, other } = await connected({ "a.txt": "a\n" });
    await t.pier.runner.schedulePeriodic();
    const gap = (s: any) => Date.parse(s.next_check_at) - Date.parse(s.last_check_at);
    expect(gap(await sync(bucketId))).toBe(60_000);
    t.clock.advance(61_000);
    await drain();
    expect(gap(await sync(bucketId))).toBe(120_000);
    t.clock.advance(121_000);
    await drain();
    expect(gap(await sync(bucketId))).toBe(240_000);

    other.write("a.txt", "polled\n");
    await other.commitAndPush("no webhook");
    t.clock.advance(241_000);
    await drain();
    expect(await bucketText(bucketId, "a.txt")).toBe("polled\n");
    expect(gap(await sync(bucketId))).toBe(60_000);
  });
});
