// The Files tab locks ticked files and folders together, as the REST lock of up to 1,000 paths
// does: a folder stands for every file in it, the lock is the session's (other writers are
// refused), a missing reason is said next to its field with the ticks kept, and a file another
// credential holds refuses the whole lock.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { formTokenOf, signedIn, unescapeHtml } from "../../helpers/browser";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t?.stop());

test("ticked files and folders are locked together; other writers are refused; refusals change nothing", async () => {
  const u = await t.user();
  const bucket = await createBucket(t, u, { title: "Locked together" });
  await syncFiles(t, u.key, bucket.id, [textFile("docs/a.txt", "a"), textFile("docs/b.txt", "b"), textFile("top.txt", "t"), textFile("free.txt", "f")]);
  const b = await signedIn(t.url, u);
  const lock = async (entry: string[], message: string, duration = "3600") =>
    b.post(`/dashboard/buckets/${bucket.id}/files/entries`, {
      csrf: formTokenOf((await b.get(`/dashboard/buckets/${bucket.id}/files`)).text),
      prefix: "",
      op: "lock",
      entry,
      message,
      duration_seconds: duration,
    });
  const locks = async () =>
    Object.fromEntries(
      ((await t.api("GET", `/api/v1/buckets/${bucket.id}/files`, { key: u.key })).body.data.files as { path: string; lock: { message: string } | null }[]).map(
        (f) => [f.path, f.lock?.message ?? null],
      ),
    );

  // No reason: said next to the field, the ticks kept, nothing locked.
  const unexplained = await lock(["docs/", "top.txt"], " ", "3600");
  expect(unexplained.status).toBe(422);
  expect(unexplained.text).toContain('id="entries-message-error"');
  expect(unexplained.text).toMatch(/value="docs\/" aria-label="Select docs\/" checked/);
  expect(Object.values(await locks()).every((m) => m === null)).toBe(true);

  const locked = await lock(["docs/", "top.txt"], "release prep", "3600");
  expect([locked.status, locked.location]).toEqual([303, expect.stringContaining("done=entries-locked")]);
  expect(await locks()).toEqual({ "docs/a.txt": "release prep", "docs/b.txt": "release prep", "free.txt": null, "top.txt": "release prep" });
  const agent = t.key(u, { scope: "bucket_write" });
  expect((await t.api("POST", `/api/v1/buckets/${bucket.id}/files/append_text`, { key: agent, body: { path: "docs/a.txt", text: "!" } })).status).toBe(423);

  // A file another credential holds refuses the whole lock: nothing of it is taken or renewed.
  expect((await t.api("POST", `/api/v1/buckets/${bucket.id}/files/lock`, { key: agent, body: { paths: ["free.txt"], message: "agent at work" } })).status).toBe(
    200,
  );
  const refused = await lock(["free.txt", "top.txt"], "again", "900");
  expect(refused.status).toBe(423);
  expect(unescapeHtml(refused.text)).toContain("free.txt is locked by another credential: agent at work");
  expect(await locks()).toMatchObject({ "free.txt": "agent at work", "top.txt": "release prep" });
});

test("a move or rename onto a file already there is refused in the form's words, naming the box that replaces it", async () => {
  const u = await t.user();
  const bucket = await createBucket(t, u, { title: "Taken names" });
  await syncFiles(t, u.key, bucket.id, [textFile("a.txt", "new"), textFile("archive/a.txt", "old")]);
  const b = await signedIn(t.url, u);
  const files = `/dashboard/buckets/${bucket.id}/files`;
  const moved = await b.post(`${files}/entries`, { csrf: formTokenOf((await b.get(files)).text), prefix: "", op: "move", entry: ["a.txt"], to: "archive" });
  expect(moved.status).toBe(409);
  const said = unescapeHtml(moved.text);
  expect(said).toContain("A file exists at archive/a.txt. Nothing was changed. Tick “Replace files already there” to replace it.");
  expect(said).not.toContain("operations[0]");

  const fileId = (await t.api("GET", `/api/v1/buckets/${bucket.id}/files`, { key: u.key })).body.data.files.find(
    (f: { path: string }) => f.path === "a.txt",
  ).id;
  const page = `${files}/${fileId}`;
  const renamed = await b.post(`${page}/rename`, { csrf: formTokenOf((await b.get(page)).text), path: "archive/a.txt" });
  expect(renamed.status).toBe(409);
  expect(unescapeHtml(renamed.text)).toContain("Tick “Replace a file already at that path” to replace it.");
  const paths = (await t.api("GET", `/api/v1/buckets/${bucket.id}/files`, { key: u.key })).body.data.files.map((f: { path: string }) => f.path);
  expect(paths.sort()).toEqual(["a.txt", "archive/a.txt"]);
});
