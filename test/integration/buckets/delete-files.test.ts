// Where buckets meet files: deleting a bucket removes every file, version, change-log row,
// upload session/entry and file lock it owns (counted in the delete progress), its blobs
// become garbage for the GC, and a delete or archive never tears an upload finalize apart.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { collectGarbage } from "../../../src/blobs/gc";
import { uploadLimits } from "../../../src/features/files/uploads/sessions";
import { bucketOwnedTables } from "../../../src/features/buckets/items";
import { getTableName } from "drizzle-orm";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { declared, directUpload, newBucket, putBytes, syncFiles, textFile } from "../../helpers/uploads";

// Buckets with more than 60 rows delete in the background (202).
const SYNC_LIMIT = 60;
let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier({ bucketDeleteSyncLimit: SYNC_LIMIT });
  u = await t.user();
});
afterAll(() => t.stop());
const defaultChunk = uploadLimits.finalizeChunk;
afterEach(() => {
  uploadLimits.finalizeChunk = defaultChunk;
});

const db = () => t.pier.deps.sqlite;
const tables = ["files", "bucket_versions", "file_changes", "upload_sessions", "upload_entries", "file_locks", "bucket_locks", "bucket_variables"];
/** Rows the bucket owns, per table. */
const rowsOf = (bucket: string) =>
  Object.fromEntries(tables.map((name) => [name, (db().query(`SELECT count(*) AS n FROM ${name} WHERE bucket_id = ?`).get(bucket) as { n: number }).n]));
const nothingLeft = Object.fromEntries(tables.map((name) => [name, 0]));
const confirmation = (bucket: string) => ({ confirmation: `delete ${bucket}` });
const sessions = (bucket: string) => `/api/v1/buckets/${bucket}/upload_sessions`;

async function openSession(bucket: string, key = u.key, body: Record<string, unknown> = {}) {
  const r = await t.api("POST", sessions(bucket), { key, body: { delete_missing: false, expected_file_count: 0, ...body } });
  expect(r.status).toBe(201);
  return r.body.data.upload_session.id as string;
}
async function declareAndPut(bucket: string, sid: string, files: ReturnType<typeof textFile>[], key = u.key) {
  for (let i = 0; i < files.length; i += 50) {
    const batch = files.slice(i, i + 50);
    const r = await t.api("POST", `${sessions(bucket)}/${sid}/uploads`, { key, body: { files: batch.map(declared) } });
    expect(r.status).toBe(200);
    for (const up of r.body.data.uploads) expect((await putBytes(up.upload, batch.find((f) => f.path === up.path)!.bytes)).status).toBe(200);
  }
}
const finalize = (bucket: string, sid: string, key = u.key) => t.api("POST", `${sessions(bucket)}/${sid}/finalize`, { key, body: { complete: true } });

/** The bucket's history agrees with its current files: no half-committed version. */
function assertConsistent(bucket: string) {
  const latest = db().query("SELECT number, file_count AS fileCount FROM bucket_versions WHERE bucket_id = ? ORDER BY number DESC LIMIT 1").get(bucket) as {
    number: number;
    fileCount: number;
  } | null;
  const files = (db().query("SELECT count(*) AS n FROM files WHERE bucket_id = ?").get(bucket) as { n: number }).n;
  expect(latest?.fileCount ?? 0).toBe(files);
  const orphanChanges = (
    db()
      .query(
        "SELECT count(*) AS n FROM file_changes c WHERE bucket_id = ? AND NOT EXISTS (SELECT 1 FROM bucket_versions v WHERE v.bucket_id = c.bucket_id AND v.number = c.version)",
      )
      .get(bucket) as { n: number }
  ).n;
  expect(orphanChanges).toBe(0);
  const numbers = (db().query("SELECT number FROM bucket_versions WHERE bucket_id = ? ORDER BY number").all(bucket) as { number: number }[]).map(
    (r) => r.number,
  );
  expect(numbers).toEqual(numbers.map((_, i) => i + 1));
}

describe("bucket delete removes the files feature's rows", () => {
  test("every bucket-owned table of the files feature is listed (children before parents)", () => {
    const names = bucketOwnedTables.map((x) => getTableName(x.table));
    for (const name of tables) expect(names).toContain(name);
    expect(names.indexOf("upload_entries")).toBeLessThan(names.indexOf("upload_sessions"));
  });

  test("a small bucket with files, history, a file lock and an open session goes at once; GC then frees only its own blobs", async () => {
    const doomed = await newBucket(t, u.key, "doomed");
    const keeper = await newBucket(t, u.key, "keeper");
    const onlyHere = textFile("only-here.txt", "bytes only the doomed bucket has");
    const historic = textFile("page.html", "<p>old page, only in history</p>", "text/html; charset=utf-8");
    const shared = textFile("shared.txt", "bytes both buckets use");
    await syncFiles(t, u.key, doomed, [onlyHere, historic, shared]);
    await syncFiles(t, u.key, doomed, [textFile("page.html", "<p>new page</p>", "text/html; charset=utf-8")]);
    await syncFiles(t, u.key, keeper, [shared]);
    const lock = await t.api("POST", `/api/v1/buckets/${doomed}/files/lock`, { key: u.key, body: { paths: ["shared.txt"], message: "editing" } });
    expect(lock.status).toBe(200);
    // This key's own session is open, with a declared upload whose bytes are already PUT.
    const sid = await openSession(doomed);
    const staged = textFile("staged.txt", "staged but never finalized");
    const d = await t.api("POST", `${sessions(doomed)}/${sid}/uploads`, { key: u.key, body: { files: [declared(staged)] } });
    expect((await putBytes(d.body.data.uploads[0].upload, staged.bytes)).status).toBe(200);
    const before = rowsOf(doomed);
    for (const name of ["files", "bucket_versions", "file_changes", "upload_sessions", "upload_entries", "file_locks", "bucket_locks"])
      expect(before[name]).toBeGreaterThan(0);

    const r = await t.api("DELETE", `/api/v1/buckets/${doomed}`, { key: u.key, body: confirmation(doomed) });
    expect(r.status).toBe(200);
    expect(r.body.data.deleted).toBe(true);
    expect(rowsOf(doomed)).toEqual(nothingLeft);
    const files = await t.api("GET", `/api/v1/buckets/${doomed}/files`, { key: u.key });
    expect([files.status, files.body.error.code, files.body.error.details.deleted]).toEqual([404, "BUCKET_NOT_FOUND", true]);
    // The staged descriptor is dead, and finalizing the deleted bucket's session fails cleanly.
    expect((await putBytes(d.body.data.uploads[0].upload, staged.bytes)).status).toBeGreaterThanOrEqual(400);
    expect((await finalize(doomed, sid)).body.error.code).toBe("BUCKET_NOT_FOUND");

    // Grace 0: everything unreferenced goes now. The shared blob is still the keeper's.
    await collectGarbage(t.pier.deps, 0);
    const blobs = t.pier.deps.blobs;
    expect(await blobs.has(declared(onlyHere).sha256)).toBe(false);
    expect(await blobs.has(declared(historic).sha256)).toBe(false);
    expect(await blobs.has(declared(staged).sha256)).toBe(false);
    expect(await blobs.has(declared(shared).sha256)).toBe(true);
    const dl = await t.api("GET", `/api/v1/buckets/${keeper}/files/by_path?path=shared.txt`, { key: u.key });
    expect(await (await fetch(dl.headers.get("location")!)).text()).toBe("bytes both buckets use");
  });

  test("a bucket with many files deletes in the background with real file and version counts", async () => {
    const bucket = await newBucket(t, u.key, "many files");
    await syncFiles(
      t,
      u.key,
      bucket,
      Array.from({ length: 30 }, (_, i) => textFile(`f${i}.txt`, `file ${i} of the big bucket`)),
    );
    await syncFiles(t, u.key, bucket, [textFile("f0.txt", "changed")]);
    const rows = rowsOf(bucket);
    const total = Object.values(rows).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(SYNC_LIMIT);

    const r = await t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: confirmation(bucket) });
    expect(r.status).toBe(202);
    expect(r.body.data.delete_progress).toMatchObject({ phase: "queued", total_files: 30, total_versions: 2, total_items: total, deleted_items: 0 });
    expect(r.body.data.bucket.lock).toMatchObject({ kind: "bucket_delete", total_files: 30, total_versions: 2, total_items: total });

    // Reads still work while it empties; every file write is 423 with Retry-After.
    const list = await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key });
    expect(list.body.data.pagination.total_count).toBe(30);
    const writes = [
      t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: u.key, body: { path: "f1.txt", text: "more" } }),
      t.api("POST", sessions(bucket), { key: u.key, body: { delete_missing: false, expected_file_count: 1 } }),
      t.api("POST", "/api/v1/direct_uploads", { key: u.key, body: { bucket_id: bucket, path: "new.txt", blob: declared(textFile("new.txt", "n")) } }),
      t.api("POST", `/api/v1/buckets/${bucket}/files/lock`, { key: u.key, body: { paths: ["f1.txt"], message: "m" } }),
    ];
    for (const w of await Promise.all(writes)) {
      expect([w.status, w.body.error.code, w.body.error.details.lock.kind]).toEqual([423, "BUCKET_LOCKED", "bucket_delete"]);
      expect(w.headers.get("retry-after")).toBe(String(w.body.error.details.retry_after));
    }
    // Pier's own writers (inbound mail) are refused the same way.
    const { writeFiles } = await import("../../../src/features/files/write");
    await expect(writeFiles(t.pier.deps, { kind: "system", name: "inbound-mail" }, bucket, [{ path: "mail.eml", bytes: "x" }])).rejects.toMatchObject({
      code: "BUCKET_LOCKED",
      retryAfter: 30,
    });

    expect(await t.pier.runner.drain()).toBe(1);
    expect(rowsOf(bucket)).toEqual(nothingLeft);
    expect((await t.api("GET", `/api/v1/buckets/${bucket}`, { key: u.key })).status).toBe(404);
    const note = db().query("SELECT data FROM notifications WHERE kind = 'bucket_deleted' AND data LIKE ?").get(`%${bucket}%`) as { data: string };
    expect(JSON.parse(note.data).total_items).toBe(total);
  });
});

describe("background delete of files survives a crash", () => {
  test("a delete interrupted mid-files resumes after restart and removes everything", async () => {
    const bucket = await newBucket(t, u.key, "crashy");
    await syncFiles(
      t,
      u.key,
      bucket,
      Array.from({ length: 40 }, (_, i) => textFile(`k${i}.txt`, `crash ${i}`)),
    );
    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: confirmation(bucket) })).status).toBe(202);
    // As if the worker died after committing its first batches: entries and some files gone,
    // the job left "running" with an expired lease.
    db().run("DELETE FROM upload_entries WHERE bucket_id = ?", [bucket]);
    db().run("DELETE FROM files WHERE rowid IN (SELECT rowid FROM files WHERE bucket_id = ? LIMIT 15)", [bucket]);
    db().run("UPDATE jobs SET status = 'running', lease_until = '2000-01-01T00:00:00.000Z', attempts = 1 WHERE kind = 'buckets.delete' AND status = 'queued'");
    expect(t.pier.runner.sweep()).toBe(1);
    expect(await t.pier.runner.drain()).toBe(1);
    expect(rowsOf(bucket)).toEqual(nothingLeft);
    expect((await t.api("GET", `/api/v1/buckets/${bucket}`, { key: u.key })).body.error.details.deleted).toBe(true);
  });
});

describe("delete and archive wait for a finalize that is committing", () => {
  test("409 DATABASE_BUSY_RETRY with Retry-After between finalize chunks; both go once it is done", async () => {
    uploadLimits.finalizeChunk = 4;
    const bucket = await newBucket(t, u.key);
    const sid = await openSession(bucket, u.key, { expected_file_count: 10 });
    await declareAndPut(
      bucket,
      sid,
      Array.from({ length: 10 }, (_, i) => textFile(`c${i}.txt`, `chunked ${i}`)),
    );
    const first = await finalize(bucket, sid);
    expect(first.status).toBe(202);

    const refused = [
      await t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: confirmation(bucket) }),
      await t.api("POST", `/api/v1/buckets/${bucket}/archive`, { key: u.key, body: {} }),
    ];
    for (const r of refused) {
      expect([r.status, r.body.error.code]).toEqual([409, "DATABASE_BUSY_RETRY"]);
      expect(r.body.error.details).toMatchObject({ upload_session_id: sid, retry_after: 2 });
      expect(r.headers.get("retry-after")).toBe("2");
    }
    const bulk = await t.api("POST", "/api/v1/buckets/bulk", { key: u.key, body: { operation: "archive", bucket_ids: [bucket] } });
    expect(bulk.body.data.results[0]).toMatchObject({ ok: false, error: { code: "DATABASE_BUSY_RETRY" } });
    const got = await t.api("GET", `/api/v1/buckets/${bucket}`, { key: u.key });
    expect(got.body.data.bucket.archived).toBe(false);

    let r = first;
    while (r.status === 202) r = await finalize(bucket, sid);
    expect(r.status).toBe(200);
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.pagination.total_count).toBe(10);
    assertConsistent(bucket);
    expect((await t.api("POST", `/api/v1/buckets/${bucket}/archive`, { key: u.key, body: {} })).status).toBe(200);
    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: confirmation(bucket) })).status).toBe(200);
    expect(rowsOf(bucket)).toEqual(nothingLeft);
  });

  test("an abandoned finalize stops blocking once its session expires", async () => {
    uploadLimits.finalizeChunk = 2;
    const bucket = await newBucket(t, u.key);
    const sid = await openSession(bucket, u.key, { expected_file_count: 5 });
    await declareAndPut(
      bucket,
      sid,
      Array.from({ length: 5 }, (_, i) => textFile(`a${i}.txt`, `abandoned ${i}`)),
    );
    expect((await finalize(bucket, sid)).status).toBe(202);
    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: confirmation(bucket) })).status).toBe(409);
    t.clock.advance(uploadLimits.sessionTtlMs + 60_000);
    try {
      const r = await t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: confirmation(bucket) });
      expect(r.status).toBe(200);
      expect(rowsOf(bucket)).toEqual(nothingLeft);
    } finally {
      t.clock.advance(-(uploadLimits.sessionTtlMs + 60_000));
    }
  });

  test("a finalize racing a delete: the bucket is gone with every row, or the finalize committed whole first", async () => {
    for (let round = 0; round < 12; round++) {
      // Even rounds: one-transaction finalize. Odd rounds: chunked finalize (the delete may land between chunks).
      uploadLimits.finalizeChunk = round % 2 === 0 ? defaultChunk : 5;
      const bucket = await newBucket(t, u.key, `race ${round}`);
      const sid = await openSession(bucket, u.key, { expected_file_count: 12 });
      await declareAndPut(
        bucket,
        sid,
        Array.from({ length: 12 }, (_, i) => textFile(`r${i}.txt`, `race ${round} file ${i}`)),
      );
      // The delete is sent 0..5 ms after the finalize, so it lands before, during or after it.
      const fin = finalize(bucket, sid);
      const del = Bun.sleep(Math.floor(round / 2)).then(() => t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: confirmation(bucket) }));
      const [d, f] = await Promise.all([del, fin]);
      if (d.status === 200) {
        // Deleted: nothing of the bucket survives, whatever the finalize answered.
        expect(rowsOf(bucket)).toEqual(nothingLeft);
        if (f.status !== 200 && f.status !== 202) expect(["BUCKET_NOT_FOUND", "UPLOAD_SESSION_NOT_FOUND"]).toContain(f.body.error.code);
        continue;
      }
      // Refused: only while a chunked finalize was committing, and the bucket is intact.
      expect([d.status, d.body.error.code]).toEqual([409, "DATABASE_BUSY_RETRY"]);
      expect(d.headers.get("retry-after")).toBeTruthy();
      assertConsistent(bucket);
      let r = f;
      while (r.status === 202) r = await finalize(bucket, sid);
      expect(r.status).toBe(200);
      expect(rowsOf(bucket).files).toBe(12);
      assertConsistent(bucket);
      expect((await t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: confirmation(bucket) })).status).toBe(200);
      expect(rowsOf(bucket)).toEqual(nothingLeft);
    }
    // No round left files without a bucket: the deleted_buckets tombstones own no rows anywhere.
    const strays = tables.map(
      (name) => (db().query(`SELECT count(*) AS n FROM ${name} WHERE bucket_id NOT IN (SELECT id FROM buckets)`).get() as { n: number }).n,
    );
    expect(strays).toEqual(tables.map(() => 0));
  });

  test("a finalize racing a background delete: refused with BUCKET_LOCKED or committed before; never half", async () => {
    for (let round = 0; round < 4; round++) {
      const bucket = await newBucket(t, u.key, `bg race ${round}`);
      // Enough earlier files that the delete goes to the background.
      await syncFiles(
        t,
        u.key,
        bucket,
        Array.from({ length: 25 }, (_, i) => textFile(`old${i}.txt`, `bg ${round} old ${i}`)),
      );
      const sid = await openSession(bucket, u.key, { expected_file_count: 3 });
      await declareAndPut(
        bucket,
        sid,
        Array.from({ length: 3 }, (_, i) => textFile(`new${i}.txt`, `bg ${round} new ${i}`)),
      );
      const fin = finalize(bucket, sid);
      const del = Bun.sleep(round).then(() => t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: confirmation(bucket) }));
      const [d, f] = await Promise.all([del, fin]);
      expect(d.status).toBe(202);
      if (f.status !== 200) {
        expect([f.status, f.body.error.code]).toEqual([423, "BUCKET_LOCKED"]);
        expect(f.headers.get("retry-after")).toBe("30");
        expect(rowsOf(bucket).files).toBe(25);
      } else {
        expect(rowsOf(bucket).files).toBe(28);
      }
      assertConsistent(bucket);
      await t.pier.runner.drain();
      expect(rowsOf(bucket)).toEqual(nothingLeft);
    }
  });
});

describe("two keys, one bucket", () => {
  test("an open session's lock blocks the other key (423 + Retry-After) until it closes; then both keys' files are there", async () => {
    const bucket = await newBucket(t, u.key);
    const other = t.key(u, { scope: "bucket_admin" });
    const sid = await openSession(bucket);
    await declareAndPut(bucket, sid, [textFile("first.txt", "from the first key")]);
    const direct = await t.api("POST", "/api/v1/direct_uploads", {
      key: other,
      body: { bucket_id: bucket, path: "second.txt", blob: declared(textFile("second.txt", "from the second key")) },
    });
    const blocked = [
      direct,
      await t.api("POST", sessions(bucket), { key: other, body: { delete_missing: false, expected_file_count: 1 } }),
      await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: other, body: { path: "x.txt", text: "x", create: true } }),
      await t.api("POST", `/api/v1/buckets/${bucket}/archive`, { key: other, body: {} }),
      await t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: other, body: confirmation(bucket) }),
      await t.api("POST", `/api/v1/buckets/${bucket}/lock`, { key: other, body: { message: "me too" } }),
    ];
    for (const r of blocked) {
      expect([r.status, r.body.error.code]).toEqual([423, "BUCKET_LOCKED"]);
      const retry = Number(r.headers.get("retry-after"));
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(uploadLimits.sessionTtlMs / 1000);
      expect(r.body.error.details.retry_after).toBe(retry);
      expect(r.body.error.details.lock).toMatchObject({ kind: "bucket_lock", holder_kind: "upload_session" });
    }
    expect((await finalize(bucket, sid)).status).toBe(200);
    expect((await directUpload(t, other, bucket, textFile("second.txt", "from the second key"))).status).toBe(201);
    const paths = (await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files.map((f: any) => f.path);
    expect(paths).toEqual(["first.txt", "second.txt"]);
    assertConsistent(bucket);
  });

  test("two keys writing at once without sessions: every file lands, versions stay sequential", async () => {
    const bucket = await newBucket(t, u.key);
    const a = t.key(u, { scope: "bucket_write" });
    const b = t.key(u, { scope: "bucket_write" });
    const uploads = Array.from({ length: 8 }, (_, i) => [
      directUpload(t, a, bucket, textFile(`a/${i}.txt`, `key a ${i}`)),
      directUpload(t, b, bucket, textFile(`b/${i}.txt`, `key b ${i}`)),
      t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: i % 2 ? a : b, body: { path: "shared-log.txt", text: `line ${i}\n`, create: true } }),
    ]).flat();
    const results = await Promise.all(uploads);
    // append_text may be told to retry when the other key changed the log meanwhile; nothing else fails.
    for (const r of results) {
      if (r.status === 409) {
        expect(r.body.error.code).toBe("DATABASE_BUSY_RETRY");
        expect(r.headers.get("retry-after")).toBe("1");
      } else expect([200, 201]).toContain(r.status);
    }
    const files = (await t.api("GET", `/api/v1/buckets/${bucket}/files?limit=100`, { key: u.key })).body.data.files;
    expect(files.filter((f: any) => f.path !== "shared-log.txt")).toHaveLength(16);
    const appended = results.filter((r) => r.body?.data?.version_id !== undefined && r.status === 200).length;
    const log = files.find((f: any) => f.path === "shared-log.txt");
    expect(log.version_count).toBe(appended);
    assertConsistent(bucket);
  });
});
