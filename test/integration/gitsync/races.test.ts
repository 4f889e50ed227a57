// Git sync against a bucket that keeps changing: a sync compares the bucket, then awaits git
// (reads, pushes); a user's upload in between must never be overwritten unseen.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { saveRepository } from "../../../src/features/gitsync";
import { bucketText, syncNowAndWait, syncOf } from "../../helpers/gitsync";
import { startGitServer, workClone, type GitServer, type WorkClone } from "../../helpers/git-server";
import { apiKeyActorOf, startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
let server: GitServer;
let user: TestUser;
const clones: WorkClone[] = [];
const cred = { user: "deploy", password: "s3cret-token" };
const authed = (url: string) => url.replace("http://", "http://admin:x@");
/** Repositories Pier's token may read but not push to (the other side pushes as admin). */
const readOnly = new Set<string>();

beforeAll(async () => {
  server = startGitServer({
    authorize: (u, p, path) =>
      (u === "admin" && p === "x") || (u === cred.user && p === cred.password && !(readOnly.has(path.split("/")[1]!) && path.includes("receive-pack"))),
  });
  t = await startTestPier({ gitAllowHttp: "on", gitAllowPrivateNetwork: "on" });
  user = await t.user({ plan: "pro" });
});
afterAll(async () => {
  for (const c of clones) c.cleanup();
  await t?.stop();
  await server?.stop();
});

const sync = (b: string) => syncOf(t, user.key, b);
const syncNow = (b: string) => syncNowAndWait(t, user.key, b);

async function connected(name: string, files: Record<string, string>) {
  const url = server.createRepo(name);
  const other = await workClone(authed(url));
  clones.push(other);
  for (const [p, x] of Object.entries(files)) other.write(p, x);
  await other.commitAndPush("init");
  const b = await newBucket(t, user.key, name);
  saveRepository(t.pier.deps, apiKeyActorOf(user), b, { repository_url: url, branch: "main", username: cred.user, password: cred.password });
  expect((await t.api("POST", `/api/v1/buckets/${b}/github_sync`, { key: user.key, body: { direction: "import" } })).status).toBe(202);
  await t.pier.runner.drain();
  expect((await sync(b)).state).toBe("in_sync");
  return { b, other };
}

/** Run `during` once, the first time the sync stores a blob it took from the repository (between its comparison and its commit). */
function duringPull(during: () => Promise<void>): () => void {
  const blobs = t.pier.deps.blobs as unknown as { putBytes: (bytes: Uint8Array) => Promise<unknown> };
  const original = blobs.putBytes;
  let pending = true;
  blobs.putBytes = async (bytes) => {
    if (pending) {
      pending = false;
      await during();
    }
    return original.call(t.pier.deps.blobs, bytes);
  };
  return () => {
    blobs.putBytes = original;
  };
}

test("a user's upload while a sync takes in the repository's change to that path is kept; the next sync shows a conflict", async () => {
  const { b, other } = await connected("race", { "page.html": "v1\n", "other.html": "o1\n" });
  other.write("page.html", "from repository\n");
  other.write("other.html", "o2\n");
  await other.commitAndPush("repo edit");
  const restore = duringPull(async () => {
    expect((await directUpload(t, user.key, b, textFile("page.html", "user's edit\n"))).status).toBeLessThan(300);
  });
  let s: Awaited<ReturnType<typeof sync>>;
  try {
    s = await syncNow(b);
  } finally {
    restore();
  }
  expect(s.state).toBe("error");
  expect(s.error.code).toBe("bucket_changed");
  expect(s.error.details.paths).toEqual(["page.html"]);
  expect(await bucketText(t, user.key, b, "page.html")).toBe("user's edit\n");
  expect(await bucketText(t, user.key, b, "other.html")).toBe("o1\n"); // nothing of that sync was taken in

  const s2 = await syncNow(b);
  expect(s2.state).toBe("conflict");
  expect(s2.conflicts).toEqual(["page.html"]);
  expect(await bucketText(t, user.key, b, "page.html")).toBe("user's edit\n");
});

test("a sync whose push is refused writes nothing to the bucket; the repository's change comes in once the push goes through", async () => {
  const { b, other } = await connected("ro-push", { "a.txt": "a1\n" });
  readOnly.add("ro-push.git");
  await directUpload(t, user.key, b, textFile("b.txt", "bucket side\n"));
  other.write("a.txt", "a2 from repository\n");
  await other.commitAndPush("repo edit");
  const versions = () => t.pier.deps.sqlite.query("select count(*) n from bucket_versions where bucket_id = ?").get(b) as { n: number };
  const before = versions().n;
  const s = await syncNow(b);
  expect(s.state).toBe("error");
  expect(s.error.code).toBe("auth_failed");
  expect(versions().n).toBe(before);
  expect(await bucketText(t, user.key, b, "a.txt")).toBe("a1\n");

  // The token may push again: both sides' changes go through in one sync.
  readOnly.delete("ro-push.git");
  expect((await syncNow(b)).state).toBe("in_sync");
  expect(await bucketText(t, user.key, b, "a.txt")).toBe("a2 from repository\n");
  expect(versions().n).toBe(before + 1);
  await other.pull();
  expect(other.read("b.txt")).toBe("bucket side\n");
});
