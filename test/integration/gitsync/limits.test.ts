// What one sync may unpack, on a real git server: `--git-max-repository-mb` bounds the bytes a
// remote sends, and also what a small pack inflates to (a blob of zeros compresses a thousand
// times). A repository over a limit stops the sync with a stable code; the bucket gets nothing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { saveRepository } from "../../../src/features/gitsync";
import { git, startGitServer, workClone, type GitServer, type WorkClone } from "../../helpers/git-server";
import { apiKeyActorOf, startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { syncOf } from "../../helpers/gitsync";
import { directUpload, newBucket } from "../../helpers/uploads";

let t: TestPier;
let server: GitServer;
let user: TestUser;
const clones: WorkClone[] = [];
const MiB = 1048576;

beforeAll(async () => {
  server = startGitServer();
  t = await startTestPier({ gitAllowHttp: "on", gitAllowPrivateNetwork: "on", gitMaxRepositoryMb: 1, gitMaxFiles: 500 });
  user = await t.user({ plan: "pro" });
});
afterAll(async () => {
  for (const c of clones) c.cleanup();
  await t?.stop();
  await server?.stop();
});

const sync = (b: string) => syncOf(t, user.key, b);
const fileCount = (b: string) => (t.pier.deps.sqlite.query("select count(*) n from files where bucket_id = ?").get(b) as { n: number }).n;

let n = 0;
/** A repository holding `files`, imported into a new bucket; the sync has run. */
async function imported(files: Record<string, string | Uint8Array>): Promise<string> {
  const url = server.createRepo(`limits${++n}`);
  const other = await workClone(url);
  clones.push(other);
  for (const [p, x] of Object.entries(files)) other.write(p, x);
  await other.commitAndPush("content");
  const b = await newBucket(t, user.key, `limits ${n}`);
  saveRepository(t.pier.deps, apiKeyActorOf(user), b, { repository_url: url, branch: "main" });
  expect((await t.api("POST", `/api/v1/buckets/${b}/github_sync`, { key: user.key, body: { direction: "import" } })).status).toBe(202);
  await t.pier.runner.drain();
  return b;
}

const zeros = (mib: number, mark: number) => {
  const bytes = new Uint8Array(mib * MiB);
  bytes[0] = mark; // distinct blobs
  return bytes;
};

test("a 20 MiB file in a pack of a few KB stops the import with file_too_large (repository cap 1 MiB); nothing is written", async () => {
  const b = await imported({ "index.html": "hi\n", "zeros.txt": zeros(20, 1) });
  const s = await sync(b);
  expect(s.state).toBe("error");
  expect(s.error.code).toBe("file_too_large");
  expect(s.error.details.max_bytes).toBe(MiB);
  expect(fileCount(b)).toBe(0);
});

test("files each under the cap that unpack to more than the repository cap stop with repository_too_large", async () => {
  const b = await imported({ "a.txt": zeros(0.4, 1), "b.txt": zeros(0.4, 2), "c.txt": zeros(0.4, 3) });
  const s = await sync(b);
  expect(s.state).toBe("error");
  expect(s.error.code).toBe("repository_too_large");
  expect(fileCount(b)).toBe(0);
});

test("a repository within the limits imports as before", async () => {
  const b = await imported({ "a.txt": zeros(0.3, 1), "b.txt": zeros(0.3, 2) });
  expect((await sync(b)).state).toBe("in_sync");
  expect(fileCount(b)).toBe(2);
});

async function gitIn(dir: string, input: string, ...args: string[]): Promise<string> {
  const p = Bun.spawn(["git", ...args], { cwd: dir, stdin: new TextEncoder().encode(input), stdout: "pipe", stderr: "pipe" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  return out.trim();
}

/** A repository whose tree names one subtree 16 times per level: 16^(levels + 1) files from a pack of a few KB. */
async function treeBomb(name: string, levels: number): Promise<string> {
  const url = server.createRepo(name);
  const w = await workClone(url);
  clones.push(w);
  w.write("x.txt", "x\n");
  const blob = await git(w.dir, "hash-object", "-w", "x.txt");
  let tree = await gitIn(w.dir, `${Array.from({ length: 16 }, (_, i) => `100644 blob ${blob}\tf${i}.txt`).join("\n")}\n`, "mktree");
  for (let d = 0; d < levels; d++) tree = await gitIn(w.dir, `${Array.from({ length: 16 }, (_, i) => `040000 tree ${tree}\td${i}`).join("\n")}\n`, "mktree");
  const commit = await gitIn(w.dir, "", "commit-tree", tree, "-m", "bomb");
  await git(w.dir, "push", "--quiet", "origin", `${commit}:refs/heads/main`);
  return url;
}

async function importInto(pier: TestPier, u: TestUser, url: string) {
  const b = await newBucket(pier, u.key, "treebomb");
  saveRepository(pier.pier.deps, apiKeyActorOf(u), b, { repository_url: url, branch: "main" });
  await pier.api("POST", `/api/v1/buckets/${b}/github_sync`, { key: u.key, body: { direction: "import" } });
  await pier.pier.runner.drain();
  const s = (await pier.api("GET", `/api/v1/buckets/${b}/github_sync`, { key: u.key })).body.data.github_sync;
  const n = (pier.pier.deps.sqlite.query("select count(*) n from files where bucket_id = ?").get(b) as { n: number }).n;
  return { s, n };
}

test("a tree naming one subtree 16 times per level (4,096 paths from a pack of a few KB) stops with too_many_files; nothing is written", async () => {
  const { s, n } = await importInto(t, user, await treeBomb("treebomb", 2));
  expect(s.state).toBe("error");
  expect(s.error.code).toBe("too_many_files");
  expect(s.error.details.max_paths).toBe(500);
  expect(n).toBe(0);
});

test("with the default limits, 65,536 paths from 2.3 KB of pack stop within seconds, before a blob is read", async () => {
  const defaults = await startTestPier({ gitAllowHttp: "on", gitAllowPrivateNetwork: "on" });
  try {
    const started = performance.now();
    const { s, n } = await importInto(defaults, await defaults.user({ plan: "pro" }), await treeBomb("treebomb-default", 3));
    expect(s.error?.code).toBe("too_many_files");
    expect(s.error.details.max_paths).toBe(50_000);
    expect(n).toBe(0);
    expect(performance.now() - started).toBeLessThan(10_000);
  } finally {
    await defaults.stop();
  }
});

/** A bucket holding `files`, exported to a new empty repository; the sync has run. */
async function exported(name: string, files: Record<string, Uint8Array>): Promise<{ b: string; url: string }> {
  const url = server.createRepo(name);
  const b = await newBucket(t, user.key, name);
  for (const [path, bytes] of Object.entries(files))
    expect((await directUpload(t, user.key, b, { path, bytes, contentType: "text/plain" })).status).toBeLessThan(300);
  saveRepository(t.pier.deps, apiKeyActorOf(user), b, { repository_url: url, branch: "main" });
  expect((await t.api("POST", `/api/v1/buckets/${b}/github_sync`, { key: user.key, body: { direction: "export" } })).status).toBe(202);
  await t.pier.runner.drain();
  return { b, url };
}
const branchOf = async (url: string) => (await git("/tmp", "ls-remote", url, "refs/heads/main")).trim();

test("a bucket file over the file cap stops the export with file_too_large listing it; nothing is pushed", async () => {
  const { b, url } = await exported("pushbig", { "small.txt": zeros(0.1, 1), "data.txt": zeros(2, 2) });
  const s = await sync(b);
  expect(s.state).toBe("error");
  expect(s.error.code).toBe("file_too_large");
  expect(s.error.details.paths).toEqual([{ path: "data.txt", size: 2 * MiB }]);
  expect(await branchOf(url)).toBe("");
});

test("bucket changes that add up to more than the repository cap stop with push_too_large; nothing is pushed", async () => {
  const { b, url } = await exported("pushmany", { "a.txt": zeros(0.4, 1), "b.txt": zeros(0.4, 2), "c.txt": zeros(0.4, 3) });
  const s = await sync(b);
  expect(s.state).toBe("error");
  expect(s.error.code).toBe("push_too_large");
  expect(await branchOf(url)).toBe("");
});

test("a pack holding deltas (two copies of a large text that differ a little) passes the check (a delta counts its result's size)", async () => {
  const lines = Array.from({ length: 4000 }, (_, i) => `line ${i} of a text that git stores as a delta of its near copy\n`).join("");
  const b = await imported({ "big.txt": lines, "copy.txt": lines.replace("line 7 ", "line 7 (changed) ") });
  const s = await sync(b);
  expect(s.error).toBeNull();
  expect(s.state).toBe("in_sync");
  expect(fileCount(b)).toBe(2);
});

test("an oversized bucket file the repository changed too is a conflict to choose, not a dead end; the repository's side brings the repository's file", async () => {
  const { b, url } = await exported("bigconflict", { "data.txt": zeros(0.1, 1) });
  expect((await sync(b)).state).toBe("in_sync");
  // The repository changes data.txt, and the bucket gets a version over the 1 MiB cap.
  const other = await workClone(url);
  clones.push(other);
  other.write("data.txt", "small, from the repository\n");
  await other.commitAndPush("repository edit");
  expect((await directUpload(t, user.key, b, { path: "data.txt", bytes: zeros(2, 2), contentType: "text/plain" })).status).toBeLessThan(300);
  const now = async (body: Record<string, unknown> = {}) => {
    expect((await t.api("POST", `/api/v1/buckets/${b}/github_sync/sync`, { key: user.key, body })).status).toBe(202);
    await t.pier.runner.drain();
    return sync(b);
  };
  const first = await now();
  expect([first.state, first.conflicts]).toEqual(["conflict", ["data.txt"]]);
  // Choosing the bucket's side would push the oversized file: refused as such.
  const bucketSide = await now({ resolutions: { "data.txt": "bucket" } });
  expect(bucketSide.error?.code).toBe("file_too_large");
  const repositorySide = await now({ resolutions: { "data.txt": "repository" } });
  expect(repositorySide.state).toBe("in_sync");
  const r = await t.api("GET", `/api/v1/buckets/${b}/files/by_path?path=data.txt`, { key: user.key });
  expect(await (await fetch(r.headers.get("location")!)).text()).toBe("small, from the repository\n");
});

test("a file of 0.3 MiB changed 12 times between two syncs (4 MiB of versions, repository cap 1 MiB) syncs: only the branch's newest state is fetched, as a thin pack", async () => {
  // Text that compresses poorly, as a real data file does: each version is a different object.
  let seed = 7;
  const words = Array.from({ length: 48000 }, () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed.toString(36);
  });
  const version = (i: number) => `version ${i}\n${words.join(" ")}\n`;
  const url = server.createRepo("manychanges");
  const other = await workClone(url);
  clones.push(other);
  other.write("data.txt", version(0));
  other.write("same.txt", `unchanged\n${[...words].reverse().join(" ")}\n`);
  await other.commitAndPush("first");
  const b = await newBucket(t, user.key, "many changes");
  saveRepository(t.pier.deps, apiKeyActorOf(user), b, { repository_url: url, branch: "main" });
  expect((await t.api("POST", `/api/v1/buckets/${b}/github_sync`, { key: user.key, body: { direction: "import" } })).status).toBe(202);
  await t.pier.runner.drain();
  expect((await sync(b)).state).toBe("in_sync");
  expect(version(0).length).toBeGreaterThan(0.3 * MiB);

  for (let i = 1; i <= 12; i++) {
    words[i * 1000] = `changed-${i}`;
    other.write("data.txt", version(i));
    await other.commitAndPush(`change ${i}`);
  }
  const sentBefore = server.traffic.sent;
  expect((await t.api("POST", `/api/v1/buckets/${b}/github_sync/sync`, { key: user.key, body: {} })).status).toBe(202);
  await t.pier.runner.drain();
  const s = await sync(b);
  expect(s.error).toBeNull();
  expect(s.state).toBe("in_sync");
  const r = await t.api("GET", `/api/v1/buckets/${b}/files/by_path?path=data.txt`, { key: user.key });
  expect(await (await fetch(r.headers.get("location")!)).text()).toBe(version(12));
  // Neither the versions in between nor the unchanged file came again: the newest version, as a
  // delta against the one already here.
  expect(server.traffic.sent - sentBefore).toBeLessThan(64 * 1024);
});
