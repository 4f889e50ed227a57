// Every 423 BUCKET_LOCKED / FILE_LOCKED and 409 DATABASE_BUSY_RETRY tells the client when to
// retry: the Retry-After header, and the same number in error.details.retry_after.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ApiError } from "../../../src/core/errors";
import { startTestPier, type ApiResult, type TestPier, type TestUser } from "../../helpers/pier";
import { newBucket, syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
});
afterAll(() => t.stop());

function expectRetry(r: ApiResult, status: number, code: string, near?: number) {
  expect([r.status, r.body?.error?.code]).toEqual([status, code]);
  const header = Number(r.headers.get("retry-after"));
  expect(header).toBeGreaterThan(0);
  expect(r.body.error.details.retry_after).toBe(header);
  // About the time left on the lock (a second or two of test time may pass).
  if (near !== undefined) expect(Math.abs(header - near)).toBeLessThanOrEqual(2);
}

describe("Retry-After on lock and busy answers", () => {
  test("another key's bucket lock: 423 BUCKET_LOCKED with the lock's remaining seconds on bucket and file routes", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [textFile("a.txt", "a")]);
    const holder = t.key(u, { scope: "bucket_write" });
    expect((await t.api("POST", `/api/v1/buckets/${bucket}/lock`, { key: holder, body: { message: "agent at work", duration_seconds: 300 } })).status).toBe(
      200,
    );
    const fileId = (await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files[0].id;
    const calls: [string, string, unknown][] = [
      ["PATCH", `/api/v1/buckets/${bucket}`, { bucket: { title: "x" } }],
      ["PATCH", `/api/v1/buckets/${bucket}/variables`, { variables: { A: "1" } }],
      ["POST", `/api/v1/buckets/${bucket}/archive`, {}],
      ["POST", `/api/v1/buckets/${bucket}/files/append_text`, { path: "a.txt", text: "b" }],
      ["POST", `/api/v1/buckets/${bucket}/files/${fileId}/rename`, { path: "b.txt" }],
      ["DELETE", `/api/v1/buckets/${bucket}/files/${fileId}`, undefined],
      ["POST", `/api/v1/buckets/${bucket}/files/lock`, { paths: ["a.txt"], message: "m" }],
      ["POST", `/api/v1/buckets/${bucket}/upload_sessions`, { delete_missing: false, expected_file_count: 1 }],
      [
        "POST",
        "/api/v1/direct_uploads",
        {
          bucket_id: bucket,
          path: "n.txt",
          blob: {
            byte_size: 1,
            checksum: "DMF1ucDxtqgxw5niaXcmYQ==",
            sha256: "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
            content_type: "text/plain",
          },
        },
      ],
    ];
    for (const [method, path, body] of calls) {
      const r = await t.api(method, path, { key: u.key, body });
      expectRetry(r, 423, "BUCKET_LOCKED", 300);
      expect(r.body.error.details.lock).toMatchObject({ kind: "bucket_lock", message: "agent at work" });
    }
  });

  test("another key's file lock: 423 FILE_LOCKED with the lock's remaining seconds", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [textFile("doc.txt", "v1")]);
    const holder = t.key(u, { scope: "bucket_write" });
    expect(
      (await t.api("POST", `/api/v1/buckets/${bucket}/files/lock`, { key: holder, body: { paths: ["doc.txt"], message: "editing", duration_seconds: 600 } }))
        .status,
    ).toBe(200);
    const fileId = (await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files[0].id;
    const calls: [string, string, unknown][] = [
      ["POST", `/api/v1/buckets/${bucket}/files/append_text`, { path: "doc.txt", text: "x" }],
      ["POST", `/api/v1/buckets/${bucket}/files/${fileId}/rename`, { path: "doc2.txt" }],
      ["DELETE", `/api/v1/buckets/${bucket}/files/${fileId}`, undefined],
      ["POST", `/api/v1/buckets/${bucket}/files/reorganize`, { operations: [{ op: "delete", from: "doc.txt" }] }],
      ["POST", `/api/v1/buckets/${bucket}/files/lock`, { paths: ["doc.txt"], message: "mine now" }],
      ["DELETE", `/api/v1/buckets/${bucket}/files/${fileId}/lock`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const r = await t.api(method, path, { key: u.key, body });
      expectRetry(r, 423, "FILE_LOCKED", 600);
      expect(r.body.error.details).toMatchObject({ path: "doc.txt", lock: { message: "editing" } });
    }
  });

  test("the bucket lock is checked before file locks", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [textFile("doc.txt", "v1")]);
    const fileHolder = t.key(u, { scope: "bucket_write" });
    const bucketHolder = t.key(u, { scope: "bucket_write" });
    await t.api("POST", `/api/v1/buckets/${bucket}/files/lock`, { key: fileHolder, body: { paths: ["doc.txt"], message: "file", duration_seconds: 600 } });
    await t.api("POST", `/api/v1/buckets/${bucket}/lock`, { key: bucketHolder, body: { message: "bucket", duration_seconds: 120 } });
    const r = await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: u.key, body: { path: "doc.txt", text: "x" } });
    expectRetry(r, 423, "BUCKET_LOCKED", 120);
    // The bucket-lock holder itself then meets the file lock.
    expectRetry(
      await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: bucketHolder, body: { path: "doc.txt", text: "x" } }),
      423,
      "FILE_LOCKED",
      600,
    );
  });

  test("SQLite busy past its timeout (another process holds the write lock) is 409 DATABASE_BUSY_RETRY on any route", async () => {
    const bucket = await newBucket(t, u.key);
    const sqlite = t.pier.deps.sqlite;
    sqlite.exec("PRAGMA busy_timeout = 50");
    const other = new Database(join(t.dataDir, "pier.db"));
    try {
      other.exec("BEGIN IMMEDIATE");
      const patch = await t.api("PATCH", `/api/v1/buckets/${bucket}`, { key: u.key, body: { bucket: { title: "busy" } } });
      expectRetry(patch, 409, "DATABASE_BUSY_RETRY");
      const append = await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: u.key, body: { path: "x.txt", text: "x", create: true } });
      expectRetry(append, 409, "DATABASE_BUSY_RETRY");
      other.exec("ROLLBACK");
    } finally {
      other.close();
      sqlite.exec("PRAGMA busy_timeout = 5000");
    }
    const ok = await t.api("PATCH", `/api/v1/buckets/${bucket}`, { key: u.key, body: { bucket: { title: "free again" } } });
    expect([ok.status, ok.body.data.bucket.title]).toEqual([200, "free again"]);
  });

  test("a lock or busy error thrown without a wait still carries one (catalogue default), mirrored in details", () => {
    for (const code of ["BUCKET_LOCKED", "FILE_LOCKED", "DATABASE_BUSY_RETRY"] as const) {
      const e = new ApiError(code, "x", { path: "p" });
      expect(e.retryAfter).toBeGreaterThan(0);
      expect(e.details).toEqual({ path: "p", retry_after: e.retryAfter });
      const given = new ApiError(code, "x", { retry_after: 7 });
      expect([given.retryAfter, given.details?.retry_after]).toEqual([7, 7]);
    }
    expect(new ApiError("NOT_FOUND").retryAfter).toBeUndefined();
  });
});
