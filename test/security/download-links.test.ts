// Issue 10, low: signed download links worked up to 5 minutes after the file was deleted. The
// link names the file (id) and its content (sha256); both are checked on every use.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { directUpload, newBucket, syncFiles, textFile } from "../helpers/uploads";

let t: TestPier;
let u: TestUser;

beforeAll(async () => {
  t = await startTestPier({ uploadRateLimitPerMinute: 10_000, bucketDeleteSyncLimit: 60 });
  u = await t.user();
});
afterAll(() => t.stop());

async function link(bucket: string, path: string): Promise<string> {
  const r = await t.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=${encodeURIComponent(path)}`, { key: u.key });
  expect(r.status).toBe(302);
  return r.headers.get("location")!;
}

async function expectGone(url: string) {
  const r = await fetch(url);
  expect(r.status).toBe(404);
  expect(((await r.json()) as any).error.code).toBe("FILE_NOT_FOUND");
}

describe("signed download links die with the file", () => {
  test("deleted: the link made a moment before no longer serves the bytes", async () => {
    const bucket = await newBucket(t, u.key);
    const f = (await directUpload(t, u.key, bucket, textFile("leak.txt", "shared by mistake"))).body.data.file;
    const url = await link(bucket, "leak.txt");
    expect(await (await fetch(url)).text()).toBe("shared by mistake");
    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${f.id}`, { key: u.key })).status).toBe(200);
    await expectGone(url);
    expect((await fetch(url, { method: "HEAD" })).status).toBe(404);
  });

  test("replaced: the old link does not serve the old content; a rename keeps the link", async () => {
    const bucket = await newBucket(t, u.key);
    await directUpload(t, u.key, bucket, textFile("report.txt", "draft with a mistake"));
    const old = await link(bucket, "report.txt");
    await directUpload(t, u.key, bucket, textFile("report.txt", "final"));
    await expectGone(old);
    const current = await link(bucket, "report.txt");
    const id = (await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files[0].id;
    expect((await t.api("POST", `/api/v1/buckets/${bucket}/files/${id}/rename`, { key: u.key, body: { path: "final.txt" } })).status).toBe(200);
    expect(await (await fetch(current)).text()).toBe("final");
  });

  test("bucket deleted: its links stop at once", async () => {
    const bucket = await newBucket(t, u.key);
    await directUpload(t, u.key, bucket, textFile("a.txt", "a"));
    const url = await link(bucket, "a.txt");
    const b = (await t.api("GET", `/api/v1/buckets/${bucket}`, { key: u.key })).body.data.bucket;
    const del = await t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: { confirmation: b.delete.confirmation } });
    expect(del.status).toBeLessThan(300);
    await t.pier.runner.drain();
    await expectGone(url);
  });

  test("bucket being deleted in the background: its links stop when the delete begins, not when it ends", async () => {
    // Review item 13: the link was checked against the files table only, which a background
    // delete empties over minutes; meanwhile every link of the "deleted" bucket kept working.
    const bucket = await newBucket(t, u.key);
    await syncFiles(
      t,
      u.key,
      bucket,
      Array.from({ length: 40 }, (_, i) => textFile(`f${i}.txt`, `file ${i}`)),
    );
    const url = await link(bucket, "f1.txt");
    expect(await (await fetch(url)).text()).toBe("file 1");
    const b = (await t.api("GET", `/api/v1/buckets/${bucket}`, { key: u.key })).body.data.bucket;
    const del = await t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: { confirmation: b.delete.confirmation } });
    expect(del.status).toBe(202);
    await expectGone(url);
    expect((await fetch(url, { method: "HEAD" })).status).toBe(404);
    await t.pier.runner.drain();
    await expectGone(url);
  });
});
