import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { declared, directUpload, newBucket, putBytes, syncFiles, textFile } from "../helpers/uploads";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
});
afterAll(() => t.stop());

describe("direct upload", () => {
  test("declare, PUT without the bearer, attach, list and download", async () => {
    const bucket = await newBucket(t, u.key);
    const f = textFile("notes/hello.txt", "hello, pier\n");
    const r = await directUpload(t, u.key, bucket, f);
    expect(r.status).toBe(201);
    expect(r.body.data.file).toMatchObject({ path: "notes/hello.txt", byte_size: f.bytes.byteLength, content_type: "text/plain; charset=utf-8", version_count: 1 });
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
