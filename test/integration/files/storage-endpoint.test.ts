// The signed storage endpoint refuses every bad PUT with a stable code and stores nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { declared, newBucket, putBytes, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
let bucket: string;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
  bucket = await newBucket(t, u.key);
});
afterAll(() => t.stop());

function storedBlobCount(): number {
  const root = join(t.dataDir, "blobs", "sha256");
  let n = 0;
  for (const a of readdirSync(root)) for (const b of readdirSync(join(root, a))) n += readdirSync(join(root, a, b)).length;
  return n;
}

async function descriptorFor(path: string, text: string) {
  const f = textFile(path, text);
  const r = await t.api("POST", "/api/v1/direct_uploads", { key: u.key, body: { bucket_id: bucket, path, blob: { ...declared(f), purpose: "bucket_file" } } });
  expect(r.status).toBe(201);
  return { f, data: r.body.data };
}

async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as any).error.code;
}

describe("PUT /_storage/<token>", () => {
  test("wrong size, MD5, sha256 and headers are refused and nothing is stored", async () => {
    const before = storedBlobCount();
    const { data } = await descriptorFor("a.txt", "exactly this");
    let res = await putBytes(data.upload, "exactly this!");
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe("UPLOAD_SIZE_MISMATCH");
    res = await putBytes(data.upload, "exactly THIS");
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe("UPLOAD_CHECKSUM_MISMATCH");
    res = await fetch(data.upload.url, { method: "PUT", headers: { ...data.upload.headers, "Content-Type": "text/html" }, body: "exactly this" });
    expect(await errorCode(res)).toBe("UPLOAD_HEADER_MISMATCH");
    res = await fetch(data.upload.url, { method: "PUT", headers: { "Content-Type": data.upload.headers["Content-Type"] }, body: "exactly this" });
    expect(await errorCode(res)).toBe("UPLOAD_HEADER_MISMATCH");
    expect(storedBlobCount()).toBe(before);
    // Nothing was attached either.
    const attach = await t.api("POST", `/api/v1/buckets/${bucket}/files`, { key: u.key, body: { signed_blob_id: data.signed_blob_id } });
    expect(attach.status).toBe(409);
    expect(attach.body.error.code).toBe("BLOB_NOT_UPLOADED");
  });

  test("a sha256 that does not match the bytes (right MD5 and size) is refused", async () => {
    const f = textFile("b.txt", "real bytes");
    const d = { ...declared(f), sha256: "0".repeat(64) };
    const r = await t.api("POST", "/api/v1/direct_uploads", { key: u.key, body: { bucket_id: bucket, path: "b.txt", blob: d } });
    const res = await putBytes(r.body.data.upload, f.bytes);
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe("UPLOAD_CHECKSUM_MISMATCH");
  });

  test("tampered and expired tokens are refused", async () => {
    const { f, data } = await descriptorFor("c.txt", "ccc");
    const url: string = data.upload.url;
    const tampered = url.replace(/\/_storage\/(.)/, (_m, c) => `/_storage/${c === "e" ? "f" : "e"}`);
    let res = await putBytes({ url: tampered, headers: data.upload.headers }, f.bytes);
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe("STORAGE_URL_INVALID");
    // Swap in claims for a bigger size: the signature no longer matches.
    const [body, sig] = url.split("/_storage/")[1]!.split(".");
    const claims = JSON.parse(Buffer.from(body!, "base64url").toString());
    const forged = `${t.url}/_storage/${Buffer.from(JSON.stringify({ ...claims, s: 999 })).toString("base64url")}.${sig}`;
    res = await putBytes({ url: forged, headers: data.upload.headers }, f.bytes);
    expect(await errorCode(res)).toBe("STORAGE_URL_INVALID");
    t.clock.advance(2 * 3600_000);
    res = await putBytes(data.upload, f.bytes);
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe("STORAGE_URL_EXPIRED");
    t.clock.advance(-2 * 3600_000);
  });

  test("a descriptor cannot be reused after its upload was attached", async () => {
    const { f, data } = await descriptorFor("d.txt", "ddd");
    expect((await putBytes(data.upload, f.bytes)).status).toBe(200);
    expect((await t.api("POST", `/api/v1/buckets/${bucket}/files`, { key: u.key, body: { signed_blob_id: data.signed_blob_id } })).status).toBe(201);
    const again = await putBytes(data.upload, f.bytes);
    expect(again.status).toBe(409);
    expect(await errorCode(again)).toBe("UPLOAD_ALREADY_FINALIZED");
    const reattach = await t.api("POST", `/api/v1/buckets/${bucket}/files`, { key: u.key, body: { signed_blob_id: data.signed_blob_id } });
    expect(reattach.body.error.code).toBe("UPLOAD_ALREADY_FINALIZED");
    const forged = await t.api("POST", `/api/v1/buckets/${bucket}/files`, { key: u.key, body: { signed_blob_id: data.signed_blob_id.slice(0, -2) + "xx" } });
    expect(forged.body.error.code).toBe("UPLOAD_NOT_FOUND");
  });

  test("a download URL cannot be used to upload, and a PUT URL cannot download", async () => {
    const { f, data } = await descriptorFor("e.txt", "eee");
    expect((await fetch(data.upload.url)).status).toBe(403);
    await putBytes(data.upload, f.bytes);
    await t.api("POST", `/api/v1/buckets/${bucket}/files`, { key: u.key, body: { signed_blob_id: data.signed_blob_id } });
    const dl = await t.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=e.txt`, { key: u.key });
    const res = await putBytes({ url: dl.headers.get("location")!, headers: data.upload.headers }, f.bytes);
    expect(res.status).toBe(403);
  });

  test("zero-byte files upload and download", async () => {
    const { f, data } = await descriptorFor("empty.txt", "");
    expect((await putBytes(data.upload, f.bytes)).status).toBe(200);
    const a = await t.api("POST", `/api/v1/buckets/${bucket}/files`, { key: u.key, body: { signed_blob_id: data.signed_blob_id } });
    expect(a.body.data.file.byte_size).toBe(0);
    const dl = await t.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=empty.txt`, { key: u.key });
    const res = await fetch(dl.headers.get("location")!);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });

  test("uploaded HTML is served sandboxed on the API origin", async () => {
    const f = { path: "x.html", bytes: new TextEncoder().encode("<script>alert(1)</script>"), contentType: "text/html" };
    const r = await t.api("POST", "/api/v1/direct_uploads", { key: u.key, body: { bucket_id: bucket, path: f.path, blob: declared(f) } });
    await putBytes(r.body.data.upload, f.bytes);
    await t.api("POST", `/api/v1/buckets/${bucket}/files`, { key: u.key, body: { signed_blob_id: r.body.data.signed_blob_id } });
    const dl = await t.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=x.html`, { key: u.key });
    const res = await fetch(dl.headers.get("location")!);
    expect(res.headers.get("content-type")).toBe("text/html");
    expect(res.headers.get("content-security-policy")).toContain("sandbox");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  test("a download link expires", async () => {
    const dl = await t.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=empty.txt`, { key: u.key });
    t.clock.advance(10 * 60_000);
    const res = await fetch(dl.headers.get("location")!);
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe("STORAGE_URL_EXPIRED");
    t.clock.advance(-10 * 60_000);
  });
});

describe("content sniffing", () => {
  test("an ELF or PE executable renamed to .txt is refused at PUT and not stored", async () => {
    const elf = new Uint8Array(8192);
    elf.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]);
    const pe = new Uint8Array(512);
    pe.set([0x4d, 0x5a]);
    new DataView(pe.buffer).setUint32(0x3c, 0x80, true);
    pe.set([0x50, 0x45, 0, 0], 0x80);
    for (const bytes of [elf, pe]) {
      const before = storedBlobCount();
      const f = { path: "innocent.txt", bytes, contentType: "text/plain" };
      const r = await t.api("POST", "/api/v1/direct_uploads", { key: u.key, body: { bucket_id: bucket, path: f.path, blob: declared(f) } });
      const res = await putBytes(r.body.data.upload, bytes);
      expect(res.status).toBe(422);
      expect(await errorCode(res)).toBe("FORBIDDEN_FILE_TYPE");
      expect(storedBlobCount()).toBe(before);
    }
    // Text that merely starts with "MZ" is fine.
    const { f, data } = await descriptorFor("mz.txt", "MZ is a fine start for a text file");
    expect((await putBytes(data.upload, f.bytes)).status).toBe(200);
  });
});
