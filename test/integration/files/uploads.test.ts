// Uploads over the API: a direct upload and an upload session end to end, then the session
// edges: large finalize (202), expiry, foreign sessions, incomplete finalize, finalize_batch,
// concurrency answers.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { uploadSessions } from "../../../src/db/schema";
import { attachBlob } from "../../../src/features/files/uploads/direct";
import { expireUploads } from "../../../src/features/files/uploads/expiry";
import { cancelSession, uploadLimits } from "../../../src/features/files/uploads/sessions";
import { apiKeyActorOf, startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { declared, directUpload, newBucket, putBytes, syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
});
afterAll(() => t.stop());
const defaultChunk = uploadLimits.finalizeChunk;
afterEach(() => {
  uploadLimits.finalizeChunk = defaultChunk;
});

const base = (bucket: string) => `/api/v1/buckets/${bucket}/upload_sessions`;
async function open(bucket: string, body: Record<string, unknown> = {}, key = u.key) {
  const r = await t.api("POST", base(bucket), { key, body: { delete_missing: false, expected_file_count: 0, ...body } });
  expect(r.status).toBe(201);
  return r.body.data.upload_session.id as string;
}
async function declareAndPut(bucket: string, sid: string, files: ReturnType<typeof textFile>[], put = true) {
  const r = await t.api("POST", `${base(bucket)}/${sid}/uploads`, { key: u.key, body: { files: files.map(declared) } });
  expect(r.status).toBe(200);
  if (put) for (const up of r.body.data.uploads) expect((await putBytes(up.upload, files.find((f) => f.path === up.path)!.bytes)).status).toBe(200);
  return r.body.data;
}
const lockOf = async (bucket: string) => (await t.api("GET", `/api/v1/buckets/${bucket}`, { key: u.key })).body.data.bucket.lock;

describe("upload session edges", () => {
  test("a large finalize answers 202 finalize_pending with Retry-After until done", async () => {
    uploadLimits.finalizeChunk = 5;
    const bucket = await newBucket(t, u.key);
    const sid = await open(bucket, { expected_file_count: 12 });
    await declareAndPut(
      bucket,
      sid,
      Array.from({ length: 12 }, (_, i) => textFile(`f${i}.txt`, `file ${i}`)),
    );
    const first = await t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } });
    expect(first.status).toBe(202);
    expect(first.headers.get("retry-after")).toBe("1");
    expect(first.body.data).toMatchObject({ finalize_pending: true, remaining_files_count: 7 });
    // While it is committing, another commit to the bucket (same key) is told to retry.
    const direct = await t.api("POST", "/api/v1/direct_uploads", {
      key: u.key,
      body: { bucket_id: bucket, path: "x.txt", blob: declared(textFile("x.txt", "x")) },
    });
    expect(direct.status).toBe(201); // declaring is fine; committing is what waits
    await putBytes(direct.body.data.upload, "x");
    const busy = await t.api("POST", `/api/v1/buckets/${bucket}/files`, { key: u.key, body: { signed_blob_id: direct.body.data.signed_blob_id } });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe("DATABASE_BUSY_RETRY");
    expect(busy.headers.get("retry-after")).toBe("2");
    const second = await t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } });
    expect(second.body.data.remaining_files_count).toBe(2);
    const last = await t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } });
    expect(last.status).toBe(200);
    expect(last.body.data.finalize_pending).toBe(false);
    expect(last.body.data.upload_session).toMatchObject({ status: "completed", committed_files_count: 12 });
    const repeat = await t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } });
    expect(repeat.status).toBe(200);
    // A client repeating finalize after a timeout gets the answer it missed, version_id included.
    expect(repeat.body.data).toEqual(last.body.data);
    expect(await lockOf(bucket)).toBeUndefined();
  });

  test("finalize before all expected uploads exist is refused and commits nothing", async () => {
    const bucket = await newBucket(t, u.key);
    const sid = await open(bucket, { expected_file_count: 3 });
    await declareAndPut(bucket, sid, [textFile("a.txt", "a"), textFile("b.txt", "b")]);
    let r = await t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("UPLOAD_INCOMPLETE");
    await declareAndPut(bucket, sid, [textFile("c.txt", "c")], false);
    r = await t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } });
    expect(r.body.error.details.missing).toEqual(["c.txt"]);
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files).toHaveLength(0);
  });

  test("finalize_batch commits uploaded files only and never prunes; cancel keeps them", async () => {
    const bucket = await newBucket(t, u.key);
    const pre = await open(bucket);
    await declareAndPut(bucket, pre, [textFile("existing.txt", "e")]);
    await t.api("POST", `${base(bucket)}/${pre}/finalize`, { key: u.key, body: { complete: true } });
    const sid = await open(bucket, { delete_missing: true });
    await declareAndPut(bucket, sid, [textFile("a.txt", "a"), textFile("b.txt", "b")]);
    await declareAndPut(bucket, sid, [textFile("waiting.txt", "w")], false);
    const batch = await t.api("POST", `${base(bucket)}/${sid}/finalize_batch`, { key: u.key, body: { limit: 12 } });
    expect(batch.body.data).toMatchObject({ finalized_files_count: 2, remaining_files_count: 1, waiting_for_upload: ["waiting.txt"] });
    const files = async () => (await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files.map((f: any) => f.path);
    expect(await files()).toEqual(["a.txt", "b.txt", "existing.txt"]);
    const cancel = await t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: false } });
    expect(cancel.body.data.upload_session.status).toBe("cancelled");
    expect(await files()).toEqual(["a.txt", "b.txt", "existing.txt"]);
    expect(await lockOf(bucket)).toBeUndefined();
    const late = await t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } });
    expect(late.body.error.code).toBe("UPLOAD_SESSION_CLOSED");
  });

  test("an expired session releases the lock, keeps finalized batches and refuses its descriptors", async () => {
    const bucket = await newBucket(t, u.key);
    const sid = await open(bucket);
    await declareAndPut(bucket, sid, [textFile("kept.txt", "k")]);
    await t.api("POST", `${base(bucket)}/${sid}/finalize_batch`, { key: u.key, body: { limit: 12 } });
    const pending = await declareAndPut(bucket, sid, [textFile("late.txt", "l")], false);
    expect(await lockOf(bucket)).toMatchObject({ kind: "bucket_lock" });
    t.clock.advance(61 * 60_000);
    t.pier.deps.jobs.enqueue("uploads.expire");
    await t.pier.runner.drain();
    expect(await lockOf(bucket)).toBeUndefined();
    const put = await putBytes(pending.uploads[0].upload, "l");
    expect(put.status).toBeGreaterThanOrEqual(400); // the staged upload was dropped (and its URL expired)
    expect(["UPLOAD_NOT_FOUND", "STORAGE_URL_EXPIRED"]).toContain(((await put.json()) as any).error.code);
    const fin = await t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } });
    expect(fin.body.error.code).toBe("UPLOAD_SESSION_EXPIRED");
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files.map((f: any) => f.path)).toEqual(["kept.txt"]);
    t.clock.advance(-61 * 60_000);
  });

  test("a foreign session is not found: other key, other bucket, other account", async () => {
    const bucket = await newBucket(t, u.key);
    const other = await newBucket(t, u.key);
    const sid = await open(bucket);
    const otherKey = t.key(u, { scope: "bucket_write" });
    const stranger = await t.user();
    for (const [b, key, code] of [
      [bucket, otherKey, "UPLOAD_SESSION_NOT_FOUND"],
      [other, u.key, "UPLOAD_SESSION_NOT_FOUND"],
      [bucket, stranger.key, "BUCKET_NOT_FOUND"],
    ] as const) {
      const r = await t.api("POST", `${base(b)}/${sid}/finalize`, { key, body: { complete: true } });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe(code);
    }
  });

  test("two keys: the second gets BUCKET_LOCKED with Retry-After while the first uploads", async () => {
    const bucket = await newBucket(t, u.key);
    await open(bucket);
    const second = t.key(u, { scope: "bucket_write" });
    const r = await t.api("POST", base(bucket), { key: second, body: { delete_missing: false, expected_file_count: 1 } });
    expect(r.status).toBe(423);
    expect(r.body.error.code).toBe("BUCKET_LOCKED");
    expect(r.body.error.details.retry_after).toBeGreaterThan(0);
  });

  test("a delete_missing session that declared nothing is refused instead of emptying the bucket", async () => {
    const bucket = await newBucket(t, u.key);
    const pre = await open(bucket);
    await declareAndPut(bucket, pre, [textFile("precious.txt", "p")]);
    await t.api("POST", `${base(bucket)}/${pre}/finalize`, { key: u.key, body: { complete: true } });
    const sid = await open(bucket, { delete_missing: true });
    const r = await t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } });
    expect(r.body.error.code).toBe("UPLOAD_INCOMPLETE");
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files).toHaveLength(1);
  });

  test("two concurrent finalize calls of one session both answer success, one version of the files", async () => {
    const bucket = await newBucket(t, u.key);
    const sid = await open(bucket, { expected_file_count: 20 });
    await declareAndPut(
      bucket,
      sid,
      Array.from({ length: 20 }, (_, i) => textFile(`c${i}.txt`, `c${i}`)),
    );
    const [a, b] = await Promise.all([0, 1].map(() => t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } })));
    expect([a!.status, b!.status]).toEqual([200, 200]);
    const versions = (await t.api("GET", `/api/v1/buckets/${bucket}/versions`, { key: u.key })).body.data.versions;
    expect(versions.filter((v: any) => v.changed_paths_count > 0)).toHaveLength(1);
    expect(versions[versions.length - 1].file_count).toBe(20);
  });

  test("closed sessions and committed entries are pruned after the retention period; files stay", async () => {
    const bucket = await newBucket(t, u.key);
    const sid = await open(bucket);
    const d = await declareAndPut(bucket, sid, [textFile("stay.txt", "s")]);
    await t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } });
    t.clock.advance(8 * 24 * 3600_000);
    t.pier.deps.jobs.enqueue("uploads.expire");
    await t.pier.runner.drain();
    const gone = await t.api("GET", `${base(bucket)}/${sid}`, { key: u.key });
    expect(gone.body.error.code).toBe("UPLOAD_SESSION_NOT_FOUND");
    const reuse = await putBytes(d.uploads[0].upload, "s");
    expect(reuse.status).toBeGreaterThanOrEqual(400);
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files.map((f: any) => f.path)).toEqual(["stay.txt"]);
    t.clock.advance(-8 * 24 * 3600_000);
  });
});

describe("direct upload", () => {
  test("declare, PUT without the bearer, attach, list and download", async () => {
    const bucket = await newBucket(t, u.key);
    const f = textFile("notes/hello.txt", "hello, pier\n");
    const r = await directUpload(t, u.key, bucket, f);
    expect(r.status).toBe(201);
    expect(r.body.data.file).toMatchObject({
      path: "notes/hello.txt",
      byte_size: f.bytes.byteLength,
      content_type: "text/plain; charset=utf-8",
      version_count: 1,
    });
    expect(r.body.data.file.id).toMatch(/^fil_/);

    const list = await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key });
    expect(list.body.data.files.map((x: any) => x.path)).toEqual(["notes/hello.txt"]);

    const dl = await t.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=${encodeURIComponent("notes/hello.txt")}`, { key: u.key });
    expect(dl.status).toBe(302);
    const loc = dl.headers.get("location")!;
    expect(loc.startsWith(`${t.pier.deps.urls.baseUrl}/_storage/`)).toBe(true);
    const got = await fetch(loc);
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await got.text()).toBe("hello, pier\n");
    const etag = got.headers.get("etag")!;
    expect(etag).toBe(`"${declared(f).sha256}"`);
    expect((await fetch(loc, { headers: { "if-none-match": etag } })).status).toBe(304);
    const range = await fetch(loc, { headers: { range: "bytes=0-4" } });
    expect(range.status).toBe(206);
    expect(await range.text()).toBe("hello");
    const head = await fetch(loc, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(f.bytes.byteLength));
  });

  test("the second upload of a path makes a new file version and bucket version", async () => {
    const bucket = await newBucket(t, u.key);
    const a = await directUpload(t, u.key, bucket, textFile("a.txt", "one"));
    const b = await directUpload(t, u.key, bucket, textFile("a.txt", "two"));
    expect(b.body.data.file.id).toBe(a.body.data.file.id);
    expect(b.body.data.file.version_count).toBe(2);
    const hist = await t.api("GET", `/api/v1/buckets/${bucket}/files/${a.body.data.file.id}/versions`, { key: u.key });
    expect(hist.body.data.versions.map((v: any) => v.byte_size)).toEqual([3, 3]);
    expect(hist.body.data.versions[0].sha256).toBe(b.body.data.file.sha256);
    const versions = await t.api("GET", `/api/v1/buckets/${bucket}/versions`, { key: u.key });
    expect(versions.body.data.versions).toHaveLength(2);
    expect(versions.body.data.versions[0].id).toMatch(/^bktrv_/);
  });

  test("bytes the account already stores need no PUT (dedupe)", async () => {
    const bucket = await newBucket(t, u.key);
    await directUpload(t, u.key, bucket, textFile("x.txt", "same bytes"));
    const d = declared(textFile("y.txt", "same bytes"));
    const r = await t.api("POST", "/api/v1/direct_uploads", { key: u.key, body: { bucket_id: bucket, path: "y.txt", blob: { ...d, purpose: "bucket_file" } } });
    expect(r.body.data.upload_required).toBe(false);
    expect(r.body.data.upload).toBeNull();
    const attach = await t.api("POST", `/api/v1/buckets/${bucket}/files`, { key: u.key, body: { signed_blob_id: r.body.data.signed_blob_id } });
    expect(attach.status).toBe(201);
  });

  // attachBlob checks the entry, then awaits the disk, then commits: the tests below change the
  // world during that await (the service runs synchronously up to it) and expect the commit to see it.
  const declareDirect = async (bucket: string, f: ReturnType<typeof textFile>) => {
    const r = await t.api("POST", "/api/v1/direct_uploads", {
      key: u.key,
      body: { bucket_id: bucket, path: f.path, blob: { ...declared(f), purpose: "bucket_file" } },
    });
    expect(r.status).toBe(201);
    return r.body.data;
  };
  const codeOf = (p: Promise<unknown>) =>
    p.then(
      () => "attached",
      (e: { code?: string }) => e.code,
    );

  test("an upload that expires while its attach awaits the disk is not found, and nothing is attached", async () => {
    const bucket = await newBucket(t, u.key);
    const f = textFile("late.txt", "expiring");
    const d = await declareDirect(bucket, f);
    expect((await putBytes(d.upload, f.bytes)).status).toBe(200);
    const lead = new Date(d.expires_at).getTime() - t.clock.now().getTime();
    t.clock.advance(lead - 1_000);
    try {
      const attaching = codeOf(attachBlob(t.pier.deps, apiKeyActorOf(u), bucket, { signed_blob_id: d.signed_blob_id }));
      t.clock.advance(2_000);
      expect(expireUploads(t.pier.deps).direct_uploads).toBe(1);
      expect(await attaching).toBe("UPLOAD_NOT_FOUND");
    } finally {
      t.clock.advance(-(lead + 1_000));
    }
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files).toEqual([]);
  });

  test("possession proved by content that leaves the account during the attach is checked again", async () => {
    const held = await newBucket(t, u.key);
    const target = await newBucket(t, u.key);
    const f = textFile("proof.txt", "held only by a staged upload");
    // The account holds the bytes only as a staged (PUT, not finalized) entry of a session.
    const sid = await open(held);
    await declareAndPut(held, sid, [f]);
    const d = await declareDirect(target, f);
    expect(d.upload_required).toBe(false);
    const attaching = codeOf(attachBlob(t.pier.deps, apiKeyActorOf(u), target, { signed_blob_id: d.signed_blob_id }));
    const opener = t.pier.deps.db.select().from(uploadSessions).where(eq(uploadSessions.id, sid)).get()!.credentialId;
    cancelSession(t.pier.deps, { ...apiKeyActorOf(u), credentialId: opener }, held, sid);
    expect(await attaching).toBe("BLOB_NOT_UPLOADED");
    expect((await t.api("GET", `/api/v1/buckets/${target}/files`, { key: u.key })).body.data.files).toEqual([]);
  });
});

describe("upload sessions", () => {
  test("sub-batches, finalize, delete_missing once, lock held then released", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [textFile("old.txt", "old"), textFile("keep.txt", "keep")]);
    const files = Array.from({ length: 30 }, (_, i) => textFile(`site/page${i}.html`, `<p>${i}</p>`, "text/html; charset=utf-8"));
    const { finalize } = await syncFiles(t, u.key, bucket, [...files, textFile("keep.txt", "keep")], { deleteMissing: true });
    expect(finalize.status).toBe(200);
    expect(finalize.body.data.upload_session.status).toBe("completed");
    const list = await t.api("GET", `/api/v1/buckets/${bucket}/files?limit=1000`, { key: u.key });
    const paths = list.body.data.files.map((x: any) => x.path);
    expect(paths).toContain("keep.txt");
    expect(paths).not.toContain("old.txt");
    expect(paths).toHaveLength(31);
    const b = await t.api("GET", `/api/v1/buckets/${bucket}`, { key: u.key });
    expect(b.body.data.bucket.lock).toBeUndefined();
  });

  test("another key gets BUCKET_LOCKED while a session is open; cancel releases", async () => {
    const bucket = await newBucket(t, u.key);
    const other = t.key(u, { scope: "bucket_write" });
    const s = await t.api("POST", `/api/v1/buckets/${bucket}/upload_sessions`, { key: u.key, body: { delete_missing: false, expected_file_count: 1 } });
    const sid = s.body.data.upload_session.id;
    const blocked = await directUpload(t, other, bucket, textFile("z.txt", "z")).catch((e) => e.message as string);
    expect(String(blocked)).toContain("423");
    const cancel = await t.api("POST", `/api/v1/buckets/${bucket}/upload_sessions/${sid}/finalize`, { key: u.key, body: { complete: false } });
    expect(cancel.status).toBe(200);
    expect(cancel.body.data.upload_session.status).toBe("cancelled");
    expect((await directUpload(t, other, bucket, textFile("z.txt", "z"))).status).toBe(201);
  });
});
