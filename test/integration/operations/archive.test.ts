// Backups as one archive file (`pier backup --to FILE.tar|.tar.gz|.tgz`): written under a temp
// name and renamed when complete, read back by verify and restore (streaming), refused when cut
// short or damaged, and always full (a folder is the incremental form).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { Header, create as createTar } from "tar";
import { checkDataDir, createBackup, restoreBackup, verifyBackup } from "../../../src/features/operations";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { publishSite, siteFetch } from "../../helpers/sites";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

const SECRET = "archive-secret-key-archive-secret-key-archive-secret";
let t: TestPier;
let u: TestUser;
let scratch: string;
let bucket: string;
const files = new Map<string, string>();

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "pier-archive-test-"));
  t = await startTestPier({ secretKey: SECRET });
  u = await t.user();
  bucket = await newBucket(t, u.key, "Archived");
  for (let i = 0; i < 12; i++) {
    const text = `archived file ${i} ${"y".repeat(i * 300)}`;
    const r = await directUpload(t, u.key, bucket, textFile(`docs/a${i}.txt`, text));
    if (r.status !== 201) throw new Error(`upload: ${r.status} ${r.text}`);
    files.set(`docs/a${i}.txt`, text);
  }
});

afterAll(async () => {
  await t?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

async function download(p: TestPier, path: string): Promise<string | null> {
  const dl = await p.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=${encodeURIComponent(path)}`, { key: u.key });
  if (dl.status !== 302 && dl.status !== 307) return null;
  const res = await fetch(dl.headers.get("location")!);
  return res.status === 200 ? res.text() : null;
}

const sha = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");

describe("pier backup --to FILE", () => {
  for (const name of ["full.tar.gz", "full.tgz", "full.tar"]) {
    test(`${name}: one file, verified, restored into a server that serves everything and passes check`, async () => {
      const site = await publishSite(t, { user: u, files: [{ path: "index.html", bytes: `<h1>archived ${name}</h1>` }] });
      const dir = join(scratch, name.replace(/\W/g, "-"));
      mkdirSync(dir);
      const file = join(dir, name);
      const r = await createBackup({ dataDir: t.dataDir, to: file, includeSecretKey: true, secretKey: SECRET });
      expect(r.problems).toEqual([]);
      expect(r.folder).toBe(file);
      // One file, nothing else left beside it (no temp name, no staging folder).
      expect(readdirSync(dir)).toEqual([name]);
      const head = readFileSync(file).subarray(0, 2);
      expect(head[0] === 0x1f && head[1] === 0x8b).toBe(name !== "full.tar");
      expect(r.manifest.blobs.copied).toBe(r.manifest.blobs.count);

      const v = await verifyBackup(file);
      expect(v.problems).toEqual([]);
      expect(v.blobs_checked).toBe(r.manifest.blobs.count);
      expect(readdirSync(dir)).toEqual([name]);

      const restoredDir = join(dir, "restored");
      const restored = await restoreBackup({ from: file, dataDir: restoredDir, force: false });
      expect(restored.secret_key_restored).toBe(true);
      expect(restored.blobs).toBe(r.manifest.blobs.count);
      expect(readdirSync(dir).sort()).toEqual([name, "restored"].sort());
      const t2 = await startTestPier({ dataDir: restoredDir, secretKey: null });
      try {
        for (const [path, text] of files) expect(await download(t2, path)).toBe(text);
        expect(await (await siteFetch(t2, site.host, "/")).text()).toBe(`<h1>archived ${name}</h1>`);
        const report = await checkDataDir({ sqlite: t2.pier.deps.sqlite, blobs: t2.pier.deps.blobs, clock: t2.pier.deps.clock, dataDir: restoredDir });
        expect(report.findings).toEqual([]);
      } finally {
        await t2.stop();
      }
    }, 60_000);
  }

  test("an archive is always full: a second backup to the same name holds every blob again", async () => {
    const file = join(scratch, "again.tar");
    const first = await createBackup({ dataDir: t.dataDir, to: file, includeSecretKey: false });
    await directUpload(t, u.key, bucket, textFile("later.txt", "added after the first archive"));
    const second = await createBackup({ dataDir: t.dataDir, to: file, includeSecretKey: false });
    expect(second.manifest.blobs.count).toBe(first.manifest.blobs.count + 1);
    expect(second.manifest.blobs.copied).toBe(second.manifest.blobs.count);
    expect(second.manifest.secret_key_included).toBe(false);
    const v = await verifyBackup(file);
    expect(v.problems).toEqual([]);
    expect(v.blobs_checked).toBe(second.manifest.blobs.count);
  }, 60_000);

  test("an archive cut short (no manifest at its end) is not a backup: verify and restore refuse it, nothing is restored", async () => {
    for (const [name, cut] of [
      ["cut.tar", 0.2],
      ["cut2.tar", 0.6],
      ["cut3.tar", 0.97],
      ["cut.tar.gz", 0.3],
      ["cut2.tar.gz", 0.8],
    ] as const) {
      const file = join(scratch, name);
      await createBackup({ dataDir: t.dataDir, to: file, includeSecretKey: false });
      truncateSync(file, Math.floor(readFileSync(file).length * cut));
      await expect(verifyBackup(file)).rejects.toMatchObject({ code: "BACKUP_INVALID" });
      const target = join(scratch, `from-${name}`);
      await expect(restoreBackup({ from: file, dataDir: target, force: false })).rejects.toMatchObject({ code: "BACKUP_INVALID" });
      expect(existsSync(join(target, "pier.db"))).toBe(false);
      // The unpacked copy beside the data dir is gone too.
      expect(readdirSync(scratch).filter((n) => n.includes(".unpack-"))).toEqual([]);
    }
  }, 60_000);

  test("a crafted archive with a 2 GiB manifest.json or an oversized secret.key is refused at the entry's header, quickly, and nothing is restored", async () => {
    // The header claims 2 GiB; 16 MiB follow (enough to see whether they are read into memory).
    const header = new Header({ path: "manifest.json", type: "File", mode: 0o600, size: 2 * 1024 ** 3, mtime: new Date() });
    const block = Buffer.alloc(512);
    header.encode(block, 0);
    const huge = join(scratch, "huge-manifest.tar.gz");
    writeFileSync(huge, gzipSync(Buffer.concat([block, Buffer.alloc(16 * 1024 * 1024, "x")]), { level: 1 }));
    // An otherwise well-formed archive whose secret.key is 64 KiB.
    const keyDir = join(scratch, "big-key-src");
    mkdirSync(keyDir);
    writeFileSync(join(keyDir, "secret.key"), "k".repeat(64 * 1024));
    writeFileSync(join(keyDir, "manifest.json"), "{}");
    const bigKey = join(scratch, "big-key.tar");
    createTar({ cwd: keyDir, file: bigKey, sync: true, portable: true }, ["secret.key", "manifest.json"]);

    for (const [file, entry] of [
      [huge, "manifest.json"],
      [bigKey, "secret.key"],
    ] as const) {
      const started = performance.now();
      await expect(verifyBackup(file)).rejects.toMatchObject({ code: "BACKUP_ENTRY_TOO_LARGE", details: { entry } });
      const target = join(scratch, `from-${entry}`);
      await expect(restoreBackup({ from: file, dataDir: target, force: false })).rejects.toMatchObject({ code: "BACKUP_ENTRY_TOO_LARGE" });
      // Refused at the header: far quicker than reading (let alone keeping) what follows it.
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(existsSync(join(target, "pier.db"))).toBe(false);
      expect(readdirSync(scratch).filter((n) => n.includes(".unpack-") || n.includes(".verify-"))).toEqual([]);
    }
  }, 60_000);

  test("a damaged blob in an archive is named by verify and stops a restore before any database is written", async () => {
    const text = "bytes that will be damaged in the archive";
    await directUpload(t, u.key, bucket, textFile("fragile.txt", text));
    const file = join(scratch, "damaged.tar");
    await createBackup({ dataDir: t.dataDir, to: file, includeSecretKey: false });
    const bytes = readFileSync(file);
    const at = bytes.indexOf(Buffer.from(text));
    expect(at).toBeGreaterThan(0);
    bytes[at] = bytes[at]! ^ 0x20;
    writeFileSync(file, bytes);
    const v = await verifyBackup(file);
    expect(v.problems.some((p) => p.includes(sha(text)) && p.includes("damaged"))).toBe(true);
    const target = join(scratch, "from-damaged-archive");
    await expect(restoreBackup({ from: file, dataDir: target, force: false })).rejects.toMatchObject({ code: "BACKUP_INVALID" });
    expect(existsSync(join(target, "pier.db"))).toBe(false);
  }, 60_000);

  test("a target the backup cannot write leaves no file at its name; a folder with an archive's name is refused", async () => {
    const blocker = join(scratch, "not-a-folder");
    writeFileSync(blocker, "");
    await expect(createBackup({ dataDir: t.dataDir, to: join(blocker, "b.tar.gz"), includeSecretKey: false })).rejects.toMatchObject({ code: "BACKUP_FAILED" });
    expect(existsSync(join(blocker, "b.tar.gz"))).toBe(false);
    const folderNamedTar = join(scratch, "looks-like.tar");
    mkdirSync(folderNamedTar);
    writeFileSync(join(folderNamedTar, "keep.txt"), "mine");
    await expect(createBackup({ dataDir: t.dataDir, to: folderNamedTar, includeSecretKey: false })).rejects.toMatchObject({ code: "BACKUP_FAILED" });
    expect(readdirSync(folderNamedTar)).toEqual(["keep.txt"]);
  }, 60_000);

  test("restore from an archive refuses a data dir that is not empty, before unpacking anything", async () => {
    const file = join(scratch, "for-target.tar");
    await createBackup({ dataDir: t.dataDir, to: file, includeSecretKey: false });
    const occupied = join(scratch, "occupied-by-archive");
    mkdirSync(occupied);
    writeFileSync(join(occupied, "notes.txt"), "the operator's own file");
    await expect(restoreBackup({ from: file, dataDir: occupied, force: false })).rejects.toMatchObject({ code: "RESTORE_TARGET_NOT_EMPTY" });
    expect(readdirSync(occupied)).toEqual(["notes.txt"]);
    const again = await restoreBackup({ from: file, dataDir: occupied, force: true });
    expect(again.blobs).toBeGreaterThan(0);
    expect(readFileSync(join(occupied, "notes.txt"), "utf8")).toBe("the operator's own file");
  }, 60_000);
});
