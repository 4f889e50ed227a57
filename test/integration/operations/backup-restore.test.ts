// Online backups: a backup taken while uploads and publishes keep coming restores into a data dir
// that passes the doctor and serves every file and site acknowledged before the backup started.
// Incremental runs copy only new blobs; a damaged backup is named by verify and refused by restore.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { checkDataDir, createBackup, restoreBackup, verifyBackup } from "../../../src/features/operations";
import { activateDeploy, writeDeploy } from "../../../src/features/publish/deploys";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { publishSite, siteFetch } from "../../helpers/sites";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

const SECRET = "test-secret-key-test-secret-key-test-secret-key";
let t: TestPier;
let u: TestUser;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "pier-backup-test-"));
  t = await startTestPier({ secretKey: SECRET });
  u = await t.user();
});

afterAll(async () => {
  await t?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

async function download(p: TestPier, key: string, bucket: string, path: string): Promise<string | null> {
  const dl = await p.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=${encodeURIComponent(path)}`, { key });
  if (dl.status !== 302 && dl.status !== 307) return null;
  const res = await fetch(dl.headers.get("location")!);
  return res.status === 200 ? res.text() : null;
}

/** Every file under `dir` (hidden ones too) with its sha256: equal trees hold the same bytes. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) {
      const path = join(e.parentPath, e.name);
      out[relative(dir, path)] = new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");
    }
  return out;
}

function fileCount(dataDir: string, path: string): number {
  const db = new Database(join(dataDir, "pier.db"), { readonly: true });
  try {
    return (db.query("SELECT count(*) AS n FROM files WHERE path = ?").get(path) as { n: number }).n;
  } finally {
    db.close();
  }
}

describe("pier backup under load, then restore", () => {
  test("everything acknowledged before the backup started is in the restored server, which passes check", async () => {
    const bucket = await newBucket(t, u.key, "Backed up");
    const acked = new Map<string, string>();
    for (let i = 0; i < 15; i++) {
      const text = `file ${i} ${"x".repeat(i * 100)}`;
      const r = await directUpload(t, u.key, bucket, textFile(`docs/f${i}.txt`, text));
      expect(r.status).toBe(201);
      acked.set(`docs/f${i}.txt`, text);
    }
    const site = await publishSite(t, { user: u, files: [{ path: "index.html", bytes: "<h1>version one</h1>" }] });

    // Load: uploads into another bucket and new deploys of the site go on while the backup runs.
    const busy = await newBucket(t, u.key, "Busy");
    let stop = false;
    let loadUploads = 0;
    let loadDeploys = 0;
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        const r = await directUpload(t, u.key, busy, textFile(`load/${i}.txt`, `load ${i} ${Math.random()}`));
        if (r.status === 201) loadUploads++;
        const d = await writeDeploy(t.pier.deps, site.pub.id, [{ path: "index.html", bytes: `<h1>load deploy ${i}</h1>` }]);
        activateDeploy(t.pier.deps, site.pub.id, d.deployId);
        loadDeploys++;
      }
    })();
    // Let the load get going, then back up in the middle of it.
    const deadline = Date.now() + 20_000;
    while (loadUploads < 3 && Date.now() < deadline) await Bun.sleep(10);
    const folder = join(scratch, "backup-1");
    const r = await createBackup({ dataDir: t.dataDir, to: folder, includeSecretKey: true, secretKey: SECRET });
    stop = true;
    await load;
    expect(loadUploads).toBeGreaterThan(0);
    expect(loadDeploys).toBeGreaterThan(0);
    expect(r.problems).toEqual([]);
    expect(r.manifest.counts.files).toBeGreaterThanOrEqual(15);
    expect(r.manifest.secret_key_included).toBe(true);
    expect(readFileSync(join(folder, "secret.key"), "utf8").trim()).toBe(SECRET);
    expect(statSync(join(folder, "secret.key")).mode & 0o077).toBe(0);

    const verified = await verifyBackup(folder);
    expect(verified.problems).toEqual([]);
    expect(verified.blobs_checked).toBe(r.manifest.blobs.count);

    const restoredDir = join(scratch, "restored");
    const restored = await restoreBackup({ from: folder, dataDir: restoredDir, force: false });
    expect(restored.secret_key_restored).toBe(true);
    // The restored server uses the key from the data dir (no PIER_SECRET_KEY).
    const t2 = await startTestPier({ dataDir: restoredDir, secretKey: null });
    try {
      for (const [path, text] of acked) expect(await download(t2, u.key, bucket, path)).toBe(text);
      // The site serves one whole deploy: the first, or one of the load's, never a mix or a 404.
      const page = await (await siteFetch(t2, site.host, "/")).text();
      expect(page).toMatch(/^<h1>(version one|load deploy \d+)<\/h1>$/);
      const report = await checkDataDir({ sqlite: t2.pier.deps.sqlite, blobs: t2.pier.deps.blobs, clock: t2.pier.deps.clock, dataDir: restoredDir });
      expect(report.findings).toEqual([]);
      expect(report.checked.file_refs).toBeGreaterThanOrEqual(15);
    } finally {
      await t2.stop();
    }
  }, 120_000);

  test("a second backup into the same folder copies only the new blobs", async () => {
    const bucket = await newBucket(t, u.key, "Incremental");
    for (let i = 0; i < 5; i++) await directUpload(t, u.key, bucket, textFile(`a${i}.txt`, `first round ${i}`));
    const folder = join(scratch, "incremental");
    const first = await createBackup({ dataDir: t.dataDir, to: folder, includeSecretKey: false });
    expect(first.manifest.blobs.copied).toBe(first.manifest.blobs.count);
    for (let i = 0; i < 3; i++) await directUpload(t, u.key, bucket, textFile(`b${i}.txt`, `second round ${i}`));
    const second = await createBackup({ dataDir: t.dataDir, to: folder, includeSecretKey: false });
    expect(second.manifest.blobs.copied).toBe(3);
    expect(second.manifest.blobs.count).toBe(first.manifest.blobs.count + 3);
    expect(existsSync(join(folder, "secret.key"))).toBe(false);
    expect((await verifyBackup(folder)).problems).toEqual([]);
  }, 60_000);

  test("verify names a damaged blob and a damaged database; restore refuses the backup and writes no database", async () => {
    const bucket = await newBucket(t, u.key, "Damaged");
    await directUpload(t, u.key, bucket, textFile("precious.txt", "precious bytes"));
    const folder = join(scratch, "damaged");
    await createBackup({ dataDir: t.dataDir, to: folder, includeSecretKey: false });
    const sha = new Bun.CryptoHasher("sha256").update("precious bytes").digest("hex");
    const blob = join(folder, "blobs", "sha256", sha.slice(0, 2), sha.slice(2, 4), sha);
    writeFileSync(blob, "precious bytez");
    const v = await verifyBackup(folder);
    expect(v.problems.some((p) => p.includes(sha) && p.includes("damaged"))).toBe(true);
    const target = join(scratch, "from-damaged");
    await expect(restoreBackup({ from: folder, dataDir: target, force: false })).rejects.toMatchObject({ code: "BACKUP_INVALID" });
    expect(existsSync(join(target, "pier.db"))).toBe(false);

    writeFileSync(blob, "precious bytes");
    const db = join(folder, "pier.db");
    const bytes = readFileSync(db);
    const at = bytes.length - 100;
    bytes.writeUInt8(bytes[at]! ^ 0xff, at);
    writeFileSync(db, bytes);
    expect((await verifyBackup(folder)).problems.some((p) => p.includes("database does not match"))).toBe(true);
    await expect(restoreBackup({ from: folder, dataDir: target, force: false })).rejects.toMatchObject({ code: "BACKUP_INVALID" });
  }, 60_000);

  test("restore refuses a data dir that is not empty without --force, and replaces it with --force", async () => {
    const folder = join(scratch, "for-force");
    await createBackup({ dataDir: t.dataDir, to: folder, includeSecretKey: false });
    const target = join(scratch, "occupied");
    await restoreBackup({ from: folder, dataDir: target, force: false });
    writeFileSync(join(target, "notes.txt"), "the operator's own file");
    await expect(restoreBackup({ from: folder, dataDir: target, force: false })).rejects.toMatchObject({ code: "RESTORE_TARGET_NOT_EMPTY" });
    const again = await restoreBackup({ from: folder, dataDir: target, force: true });
    expect(again.blobs).toBeGreaterThan(0);
    expect(readFileSync(join(target, "notes.txt"), "utf8")).toBe("the operator's own file");
    await expect(restoreBackup({ from: folder, dataDir: target, force: true, runningPid: 1 })).rejects.toMatchObject({ code: "RESTORE_TARGET_NOT_EMPTY" });
  }, 60_000);

  test("--force with a damaged backup leaves the data dir exactly as it was; a good backup then replaces it", async () => {
    const bucket = await newBucket(t, u.key, "Forced");
    await directUpload(t, u.key, bucket, textFile("old.txt", "the data dir's own bytes"));
    const first = join(scratch, "force-first");
    await createBackup({ dataDir: t.dataDir, to: first, includeSecretKey: false });
    // The operator's working data dir, with files a restore does not replace.
    const live = join(scratch, "force-live");
    await restoreBackup({ from: first, dataDir: live, force: false });
    writeFileSync(join(live, "notes.txt"), "the operator's own file");
    await Bun.write(join(live, "https-tls", "cert.pem"), "a certificate");
    writeFileSync(join(live, "secret.key"), "the data dir's key");

    await directUpload(t, u.key, bucket, textFile("new.txt", "the backup's own bytes"));
    const second = join(scratch, "force-second");
    await createBackup({ dataDir: t.dataDir, to: second, includeSecretKey: true, secretKey: SECRET });
    const sha = new Bun.CryptoHasher("sha256").update("the backup's own bytes").digest("hex");
    const blob = join(second, "blobs", "sha256", sha.slice(0, 2), sha.slice(2, 4), sha);
    writeFileSync(blob, "the backup's own bytez");

    const before = tree(live);
    expect(Object.keys(before)).toContain("pier.db");
    await expect(restoreBackup({ from: second, dataDir: live, force: true })).rejects.toMatchObject({ code: "BACKUP_INVALID" });
    expect(tree(live)).toEqual(before);
    expect(fileCount(live, "new.txt")).toBe(0);

    writeFileSync(blob, "the backup's own bytes");
    const r = await restoreBackup({ from: second, dataDir: live, force: true });
    expect(r.dataDir).toBe(live);
    expect(r.secret_key_restored).toBe(true);
    expect(fileCount(live, "new.txt")).toBe(1);
    expect(existsSync(join(live, "blobs", "sha256", sha.slice(0, 2), sha.slice(2, 4), sha))).toBe(true);
    expect(readFileSync(join(live, "secret.key"), "utf8").trim()).toBe(SECRET);
    expect(readFileSync(join(live, "notes.txt"), "utf8")).toBe("the operator's own file");
    expect(readFileSync(join(live, "https-tls", "cert.pem"), "utf8")).toBe("a certificate");
    expect(readdirSync(live).filter((n) => n.startsWith("."))).toEqual([]);
  }, 60_000);

  test("a folder without a manifest (an interrupted backup) is not a backup", async () => {
    const folder = join(scratch, "interrupted");
    await createBackup({ dataDir: t.dataDir, to: folder, includeSecretKey: false });
    rmSync(join(folder, "manifest.json"));
    await expect(verifyBackup(folder)).rejects.toMatchObject({ code: "BACKUP_INVALID" });
    await expect(restoreBackup({ from: folder, dataDir: join(scratch, "nope"), force: false })).rejects.toMatchObject({ code: "BACKUP_INVALID" });
  });

  test("a manifest naming a database outside the backup is refused before anything is read or written", async () => {
    const folder = join(scratch, "crafted");
    await createBackup({ dataDir: t.dataDir, to: folder, includeSecretKey: false });
    const manifestFile = join(folder, "manifest.json");
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
    writeFileSync(manifestFile, JSON.stringify({ ...manifest, database: { ...manifest.database, file: "../elsewhere/pier.db" } }));
    const target = join(scratch, "crafted-target");
    await expect(verifyBackup(folder)).rejects.toMatchObject({ code: "BACKUP_INVALID" });
    await expect(restoreBackup({ from: folder, dataDir: target, force: false })).rejects.toMatchObject({ code: "BACKUP_INVALID" });
    expect(existsSync(join(target, "pier.db"))).toBe(false);
  });

  test("a target that is not writable fails with a clear message and leaves no manifest", async () => {
    if (process.getuid?.() === 0) {
      // root writes anywhere: a file in the way of the folder gives the same kind of failure.
      const blocker = join(scratch, "blocker");
      writeFileSync(blocker, "");
      await expect(createBackup({ dataDir: t.dataDir, to: join(blocker, "sub"), includeSecretKey: false })).rejects.toMatchObject({ code: "BACKUP_FAILED" });
      return;
    }
    const locked = join(scratch, "locked");
    await Bun.write(join(locked, ".keep"), "");
    rmSync(join(locked, ".keep"));
    (await import("node:fs")).chmodSync(locked, 0o500);
    try {
      const e = await createBackup({ dataDir: t.dataDir, to: join(locked, "b"), includeSecretKey: false }).catch((x) => x);
      expect(e.code).toBe("BACKUP_FAILED");
      expect(e.message).toContain("permission denied");
      expect(readdirSync(locked)).toEqual([]);
    } finally {
      (await import("node:fs")).chmodSync(locked, 0o700);
    }
  });

  test("a folder holding other files is refused instead of mixed into", async () => {
    const other = join(scratch, "someones-folder");
    await Bun.write(join(other, "thesis.odt"), "years of work");
    await expect(createBackup({ dataDir: t.dataDir, to: other, includeSecretKey: false })).rejects.toMatchObject({ code: "BACKUP_FAILED" });
    expect(readdirSync(other)).toEqual(["thesis.odt"]);
  });
});
