import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiskBlobStore } from "../../src/blobs/disk";
import { BlobMismatchError, SMALL_BLOB_BYTES } from "../../src/blobs/store";

let dir: string;
let store: DiskBlobStore;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "pier-blobs-"));
  store = new DiskBlobStore(dir);
  await store.init();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const enc = new TextEncoder();
async function* chunks(...parts: (string | Uint8Array)[]): AsyncIterable<Uint8Array> {
  for (const p of parts) yield typeof p === "string" ? enc.encode(p) : p;
}
const sha256 = (s: string | Uint8Array) => createHash("sha256").update(s).digest("hex");
const md5 = (s: string | Uint8Array) => createHash("md5").update(s).digest("base64");
const tmpFiles = () => readdirSync(join(dir, "tmp"));
const storedCount = async () => {
  let n = 0;
  for await (const _ of store.list()) n++;
  return n;
};

async function mismatch(p: Promise<unknown>): Promise<BlobMismatchError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(BlobMismatchError);
    return e as BlobMismatchError;
  }
  throw new Error("expected a BlobMismatchError");
}

describe("DiskBlobStore", () => {
  test("a streamed put hashes sha256 and md5 across chunks and stores under sha256/ab/cd/<hex>", async () => {
    const info = await store.put(chunks("hello ", "blob ", "world"));
    const whole = "hello blob world";
    expect(info).toEqual({ sha256: sha256(whole), md5: md5(whole), size: whole.length });
    const path = join(dir, "sha256", info.sha256.slice(0, 2), info.sha256.slice(2, 4), info.sha256);
    expect(store.pathOf(info.sha256)).toBe(path);
    expect(await Bun.file(path).text()).toBe(whole);
    expect(await store.file(info.sha256).text()).toBe(whole);
    expect(await store.size(info.sha256)).toBe(whole.length);
    expect(tmpFiles()).toEqual([]);
  });

  test("a large body in many chunks (1 MiB) round-trips byte for byte", async () => {
    const chunk = new Uint8Array(64 * 1024).map((_, i) => (i * 31) & 255);
    const parts = Array.from({ length: 16 }, () => chunk);
    const info = await store.put(chunks(...parts));
    const all = Buffer.concat(parts);
    expect(info.size).toBe(all.length);
    expect(info.sha256).toBe(sha256(all));
    expect(Buffer.from(await store.file(info.sha256).arrayBuffer()).equals(all)).toBe(true);
  });

  test("the same bytes are stored once", async () => {
    const a = await store.putBytes("same bytes");
    const b = await store.put(chunks("same ", "bytes"), { size: 10, md5: md5("same bytes"), sha256: sha256("same bytes") });
    expect(b).toEqual(a);
    expect(await storedCount()).toBe(1);
    expect(tmpFiles()).toEqual([]);
  });

  test("an empty body is a valid blob", async () => {
    const info = await store.putBytes("");
    expect(info).toEqual({ sha256: sha256(""), md5: md5(""), size: 0 });
    expect(await store.has(info.sha256)).toBe(true);
  });

  const refused: Array<[string, () => Promise<unknown>, string]> = [
    ["shorter than promised", () => store.put(chunks("abc"), { size: 4 }), "size"],
    ["longer than promised (stops reading early)", () => store.put(chunks("abc", "def"), { size: 4 }), "size"],
    ["md5 mismatch", () => store.put(chunks("abc"), { md5: md5("abd") }), "md5"],
    ["sha256 mismatch", () => store.put(chunks("abc"), { sha256: sha256("abd") }), "sha256"],
    ["over maxBytes", () => store.put(chunks("abcdef"), { maxBytes: 5 }), "too_large"],
  ];
  for (const [name, put, kind] of refused) {
    test(`${name}: refused with kind ${kind}, nothing stored, no temp file left`, async () => {
      const e = await mismatch(put());
      expect(e.kind).toBe(kind as never);
      expect(await storedCount()).toBe(0);
      expect(tmpFiles()).toEqual([]);
    });
  }

  test("an upper-case expected sha256 is accepted", async () => {
    const info = await store.put(chunks("abc"), { sha256: sha256("abc").toUpperCase() });
    expect(info.sha256).toBe(sha256("abc"));
  });

  test("a body that fails mid-stream stores nothing and leaves no temp file", async () => {
    async function* broken(): AsyncIterable<Uint8Array> {
      yield enc.encode("partial");
      throw new Error("client went away");
    }
    await expect(store.put(broken())).rejects.toThrow("client went away");
    expect(await storedCount()).toBe(0);
    expect(tmpFiles()).toEqual([]);
  });

  test("init clears temp files left by a crash but keeps stored blobs", async () => {
    const info = await store.putBytes("keep me");
    writeFileSync(join(dir, "tmp", "123-crashed-upload"), "half a file");
    mkdirSync(join(dir, "tmp", "stray-dir"));
    await new DiskBlobStore(dir).init();
    expect(tmpFiles()).toEqual([]);
    expect(await store.has(info.sha256)).toBe(true);
  });

  test("removeIfIdle removes an idle blob once and keeps a renewed one; list ignores foreign files", async () => {
    const info = await store.putBytes("to delete");
    writeFileSync(join(dir, "sha256", "README"), "not a blob");
    expect(await storedCount()).toBe(1);
    expect(await store.removeIfIdle(info.sha256, Date.now() - 60_000)).toBeNull(); // written since
    expect(await store.has(info.sha256)).toBe(true);
    expect(await store.removeIfIdle(info.sha256, Date.now() + 60_000)).toBe("to delete".length);
    expect(await store.removeIfIdle(info.sha256, Date.now() + 60_000)).toBeNull();
    expect(await store.has(info.sha256)).toBe(false);
    expect(await storedCount()).toBe(0);
  });

  test("a blob the collector had moved aside when the process died is back after init", async () => {
    const info = await store.putBytes("aside at the crash");
    renameSync(store.pathOf(info.sha256), join(dir, "tmp", `gc-aside-${info.sha256}`));
    await new DiskBlobStore(dir).init();
    expect(await store.has(info.sha256)).toBe(true);
    expect(tmpFiles()).toEqual([]);
  });

  test("paths are only ever built from a sha256 (no traversal through the key)", () => {
    expect(() => store.pathOf("../../etc/passwd")).toThrow();
    expect(() => store.pathOf("A".repeat(64))).toThrow();
    expect(existsSync(join(dir, "sha256"))).toBe(true);
  });

  test("list reports modification times (used by the GC grace period)", async () => {
    const info = await store.putBytes("old");
    const old = new Date(Date.now() - 48 * 3600_000);
    utimesSync(store.pathOf(info.sha256), old, old);
    const listed = [];
    for await (const b of store.list()) listed.push(b);
    expect(listed).toHaveLength(1);
    expect(Math.abs(listed[0]!.mtimeMs - old.getTime())).toBeLessThan(2000);
  });

  test("small bytes: one write, stored once; storing them again leaves the file alone but makes it young for the GC", async () => {
    const first = await store.putBytes("small blob");
    expect(first).toEqual({ sha256: sha256("small blob"), md5: md5("small blob"), size: 10 });
    const path = store.pathOf(first.sha256);
    const old = new Date(Date.now() - 48 * 3600_000);
    utimesSync(path, old, old);
    const inode = statSync(path).ino;
    const again = await store.putBytes("small blob");
    expect(again).toEqual(first);
    expect(statSync(path).ino).toBe(inode); // not rewritten
    expect(Date.now() - statSync(path).mtimeMs).toBeLessThan(60_000);
    expect(tmpFiles()).toEqual([]);
    expect(await storedCount()).toBe(1);
  });

  test("bytes past the small-blob size stream like put() and round-trip", async () => {
    const big = new Uint8Array(SMALL_BLOB_BYTES + 1).map((_, i) => (i * 7) & 255);
    const info = await store.putBytes(big);
    expect(info.sha256).toBe(sha256(big));
    expect(Buffer.from(await store.file(info.sha256).arrayBuffer()).equals(Buffer.from(big))).toBe(true);
    expect(tmpFiles()).toEqual([]);
  });
});
