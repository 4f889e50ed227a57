// Issue 10, low: `evil.exe.` and `evil.exe ` were accepted and served (Windows drops trailing
// dots and spaces, so they ARE evil.exe there), and the content check read only the first
// 4 KiB, so a PE whose header sits after a longer DOS stub went through as "innocent.txt".
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { declared, newBucket, putBytes } from "../helpers/uploads";

let t: TestPier;
let u: TestUser;
let bucket: string;

beforeAll(async () => {
  t = await startTestPier({ uploadRateLimitPerMinute: 10_000 });
  u = await t.user({ plan: "pro" });
  bucket = await newBucket(t, u.key, "Downloads");
});
afterAll(() => t.stop());

const declare = (path: string, bytes: Uint8Array, contentType = "application/octet-stream") =>
  t.api("POST", "/api/v1/direct_uploads", { key: u.key, body: { bucket_id: bucket, path, blob: declared({ path, bytes, contentType }) } });

async function bucketPaths(): Promise<string[]> {
  return (await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files.map((f: { path: string }) => f.path);
}

const blobStored = async (bytes: Uint8Array) => (await t.pier.deps.blobs.size(createHash("sha256").update(bytes).digest("hex"))) !== null;

describe("names Windows would turn into forbidden ones", () => {
  test("trailing dots and spaces are refused (not stripped) everywhere a path comes in", async () => {
    const bytes = new TextEncoder().encode("not really");
    for (const path of ["evil.exe.", "evil.exe ", "evil.exe. .", "tools/evil.bat...", ".git./config", "folder. /a.txt"]) {
      const r = await declare(path, bytes);
      expect([path, r.status, r.body.error.code, r.body.error.details.reason]).toEqual([path, 422, "INVALID_PATH", "trailing_dot_or_space"]);
    }
    const s = await t.api("POST", "/api/v1/publish_sessions", {
      key: u.key,
      body: { bucket_id: bucket, files: [{ ...declared({ path: "setup.exe.", bytes, contentType: "text/plain" }) }] },
    });
    expect([s.status, s.body.error.code]).toEqual([422, "INVALID_PATH"]);
    expect(await bucketPaths()).toEqual([]);
  });

  test("an NTFS stream suffix does not hide the extension", async () => {
    const r = await declare("evil.exe::$DATA", new TextEncoder().encode("x"));
    expect([r.status, r.body.error.code]).toEqual([422, "FORBIDDEN_FILE_TYPE"]);
  });
});

describe("executables recognised wherever their signature is", () => {
  /** A PE whose header sits `at` bytes in (after a long DOS stub), padded to `size`. */
  function pe(at: number, size = at + 1024): Uint8Array {
    const b = new Uint8Array(size);
    b.set([0x4d, 0x5a]);
    new DataView(b.buffer).setUint32(0x3c, at, true);
    b.set([0x50, 0x45, 0, 0], at);
    return b;
  }

  async function refusedAtPut(path: string, bytes: Uint8Array) {
    const d = await declare(path, bytes);
    expect(d.status).toBe(201);
    const res = await putBytes(d.body.data.upload, bytes);
    expect(res.status).toBe(422);
    expect(((await res.json()) as any).error).toMatchObject({ code: "FORBIDDEN_FILE_TYPE", details: { reason: "executable_content" } });
    expect(await blobStored(bytes)).toBe(false);
    const attach = await t.api("POST", `/api/v1/buckets/${bucket}/files`, { key: u.key, body: { signed_blob_id: d.body.data.signed_blob_id } });
    expect(attach.status).toBe(409);
  }

  test("a PE header after an 8 KiB or 1 MiB DOS stub (past the old 4 KiB window)", async () => {
    await refusedAtPut("innocent.txt", pe(8192));
    await refusedAtPut("photo.jpg", pe(1024 * 1024 + 3));
  });

  test("an Apple disk image, recognised by its trailer at the end", async () => {
    const dmg = randomBytes(64 * 1024);
    dmg.set(new TextEncoder().encode("koly"), dmg.byteLength - 512);
    await refusedAtPut("archive.zip", new Uint8Array(dmg));
  });

  test("text that merely starts with MZ, or names a far offset with no PE there, is fine", async () => {
    const text = new TextEncoder().encode(`MZ is a fine start for a text file. ${"x".repeat(9000)}`);
    const d = await declare("mz.txt", text, "text/plain");
    expect((await putBytes(d.body.data.upload, text)).status).toBe(200);
    const fake = pe(8192);
    fake.set([0x50, 0x45, 0x4c, 0x4c], 8192); // "PELL", not "PE\0\0"
    const d2 = await declare("fake.bin", fake);
    expect((await putBytes(d2.body.data.upload, fake)).status).toBe(200);
  });
});

describe("executables written as text", () => {
  // Review item 10: the content sniff ran only on bytes PUT to the storage endpoint; text
  // writes (MCP bucket_file_write) and append_text stored an ELF spelled out in UTF-8.
  const elfText = "\u007fELF\u0002\u0001\u0001 looks like notes";

  test("MCP bucket_file_write with ELF content is refused and nothing is stored", async () => {
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(t.pier.deps.urls.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${u.key}` } } }),
    );
    try {
      const r = await client.callTool({ name: "bucket_file_write", arguments: { bucket_id: bucket, path: "notes/run.txt", content: elfText } });
      expect((r.structuredContent as any)?.error?.code).toBe("FORBIDDEN_FILE_TYPE");
      const ok = await client.callTool({ name: "bucket_file_write", arguments: { bucket_id: bucket, path: "notes/plain.txt", content: "just notes" } });
      expect((ok.structuredContent as any)?.error).toBeUndefined();
    } finally {
      await client.close();
    }
    expect(await bucketPaths()).not.toContain("notes/run.txt");
    expect(await bucketPaths()).toContain("notes/plain.txt");
    expect(await blobStored(new TextEncoder().encode(elfText))).toBe(false);
  });

  test("append_text that completes an ELF signature is refused and the file keeps its content", async () => {
    const append = (text: string, create = false) =>
      t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: u.key, body: { path: "log.txt", text, create } });
    expect((await append("\u007fE", true)).status).toBe(200);
    const r = await append("LF\u0002\u0001\u0001 rest");
    expect([r.status, r.body.error?.code]).toEqual([422, "FORBIDDEN_FILE_TYPE"]);
    const fresh = await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: u.key, body: { path: "new.log", text: elfText, create: true } });
    expect([fresh.status, fresh.body.error?.code]).toEqual([422, "FORBIDDEN_FILE_TYPE"]);
    expect(await bucketPaths()).not.toContain("new.log");
    const dl = await t.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=log.txt`, { key: u.key });
    expect(await (await fetch(dl.headers.get("location")!)).text()).toBe("\u007fE");
  });
});
