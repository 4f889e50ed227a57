// `pier admin check`: a clean data dir passes; a damaged blob is named with the bucket and path it
// belongs to; stray temp files, jobs stuck past their deadline and broken foreign keys are found;
// --repair fixes what is safe and says what it did, and the check afterwards agrees.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { admin } from "../../../src/cli/admin";
import { checkDataDir, createBackup, restoreBackup } from "../../../src/features/operations";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
let bucket: string;
const sha = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
const blobPath = (dataDir: string, s: string) => join(dataDir, "blobs", "sha256", s.slice(0, 2), s.slice(2, 4), s);

async function check(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await admin(["check", ...args, "--data-dir", t.dataDir, "--secret-key", "test-secret-key-test-secret-key-test-secret-key"], {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
  bucket = await newBucket(t, u.key, "Thesis drafts");
  await directUpload(t, u.key, bucket, textFile("chapter-1.txt", "It was a dark and stormy night."));
  await directUpload(t, u.key, bucket, textFile("chapter-2.txt", "The end."));
  await publishSite(t, { user: u, slug: "check-site", files: [{ path: "index.html", bytes: "<p>home</p>" }] });
});

afterAll(async () => {
  await t?.stop();
});

describe("pier admin check", () => {
  test("a healthy data dir passes (exit 0), quick and full", async () => {
    const full = await check();
    expect({ code: full.code, out: full.out }).toEqual({ code: 0, out: "" });
    expect(full.err).toMatch(/^ok: /);
    expect((await check("--quick")).code).toBe(0);
  });

  test("a damaged blob is named with its bucket and path; --repair moves it aside so it is never served", async () => {
    const s = sha("It was a dark and stormy night.");
    writeFileSync(blobPath(t.dataDir, s), "It was a dark and stormy light.");
    const found = await check();
    expect(found.code).toBe(1);
    expect(found.out).toContain(`blob_corrupt: blob ${s} is damaged`);
    expect(found.out).toContain(`file "chapter-1.txt" in bucket "Thesis drafts" (${bucket})`);
    // The sample of --quick covers every blob of a data dir this small.
    expect((await check("--quick")).out).toContain(s);

    const repaired = await check("--repair");
    expect(repaired.out).toContain("repaired: moved the damaged blob to blobs/quarantine/");
    expect(existsSync(join(t.dataDir, "blobs", "quarantine", s))).toBe(true);
    // The file no longer serves the wrong bytes.
    const dl = await t.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=chapter-1.txt`, { key: u.key });
    const served = dl.headers.get("location") ? await fetch(dl.headers.get("location")!) : null;
    if (served) expect(await served.text()).not.toBe("It was a dark and stormy light.");
    // Now it is missing (named again), and a good copy put back heals it.
    const after = await check();
    expect(after.out).toContain(`blob_missing: blob ${s} is missing; used by file "chapter-1.txt"`);
    writeFileSync(blobPath(t.dataDir, s), "It was a dark and stormy night.");
    expect((await check()).code).toBe(0);
  });

  test("a blob of the live site that is gone is named with the site", async () => {
    const s = sha("<p>home</p>");
    const p = blobPath(t.dataDir, s);
    const saved = readFileSync(p);
    rmSync(p);
    const found = await check("--quick");
    expect(found.out).toContain(`blob ${s} is missing; used by "index.html" of the live deploy`);
    expect(found.out).toContain("of site check-site");
    writeFileSync(p, saved);
  });

  test("stray temp files older than an hour are found and removed with --repair; a young one (an upload in progress) is left alone", async () => {
    const tmp = join(t.dataDir, "blobs", "tmp");
    const old = join(tmp, "123-crashed-upload");
    const young = join(tmp, "456-upload-in-progress");
    writeFileSync(old, "half an upload");
    writeFileSync(young, "an upload going on");
    // A restore that crashed before moving its staged copy into place (no process has that pid).
    const staged = join(t.dataDir, ".restore-99999999-1764300000000");
    await Bun.write(join(staged, "blobs", "sha256", "ab", "cd", "abcd"), "a staged blob");
    const past = new Date(Date.now() - 2 * 3600_000);
    utimesSync(old, past, past);
    utimesSync(staged, past, past);
    const found = await check();
    expect(found.code).toBe(1);
    expect(found.out).toContain(`temp_file: stray temp file ${old}`);
    expect(found.out).toContain(`temp_file: stray temp file ${staged}`);
    expect(found.out).not.toContain(young);
    const repaired = await check("--repair");
    expect(repaired.out).toContain("repaired: removed");
    expect(repaired.code).toBe(0);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(staged)).toBe(false);
    expect(existsSync(young)).toBe(true);
    rmSync(young);
  });

  test("a job running past its deadline (its worker died) is found and queued again with --repair", async () => {
    const past = new Date(Date.now() - 3600_000).toISOString();
    t.pier.deps.sqlite
      .query(
        "INSERT INTO jobs (id, kind, payload, status, attempts, max_attempts, run_at, lease_until, worker_id, created_at, updated_at) VALUES ('job_stuckstuckstuck', 'blobs.gc_test', '{}', 'running', 1, 5, ?, ?, 'w_dead', ?, ?)",
      )
      .run(past, past, past, past);
    const found = await check();
    expect(found.out).toContain("job_stuck: job job_stuckstuckstuck (blobs.gc_test) is running past its deadline");
    const repaired = await check("--repair");
    expect(repaired.out).toContain("repaired: queued again");
    const row = t.pier.deps.sqlite
      .query<{ status: string; worker_id: string | null }, []>("SELECT status, worker_id FROM jobs WHERE id = 'job_stuckstuckstuck'")
      .get();
    expect(row).toEqual({ status: "queued", worker_id: null });
    t.pier.deps.sqlite.query("DELETE FROM jobs WHERE id = 'job_stuckstuckstuck'").run();
    expect((await check()).code).toBe(0);
  });

  test("rows whose parent is gone are reported as foreign key problems (not repaired: restore decides)", async () => {
    const raw = new Database(join(t.dataDir, "pier.db"));
    raw.exec("PRAGMA foreign_keys = OFF");
    raw
      .query(
        "INSERT INTO bucket_versions (id, bucket_id, number, kind, comment, author, changed_count, file_count, total_bytes, created_at) VALUES ('bktrv_orphan', 'bkt_gone', 1, 'upload', '', 'x', 0, 0, 0, '2026-01-01T00:00:00Z')",
      )
      .run();
    raw.close();
    const found = await check("--repair");
    expect(found.code).toBe(1);
    expect(found.out).toContain("foreign_key: database: 1 row(s) of bucket_versions point at missing buckets rows");
    t.pier.deps.sqlite.query("DELETE FROM bucket_versions WHERE id = 'bktrv_orphan'").run();
  });

  test("--repair leaves alone the staging folder of a restore still running after an hour", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "pier-check-restore-"));
    try {
      const text = "a blob the restore will wait for";
      await directUpload(t, u.key, bucket, textFile("slow.txt", text));
      const backup = join(scratch, "b");
      await createBackup({ dataDir: t.dataDir, to: backup, includeSecretKey: false });
      const target = join(scratch, "d");
      await restoreBackup({ from: backup, dataDir: target, force: false });
      // One blob of the backup becomes a pipe: restoring it waits until the test writes it, so the
      // restore is still running (copying a large blob, say) when the check comes.
      const pipe = blobPath(backup, sha(text));
      rmSync(pipe);
      expect(Bun.spawnSync(["mkfifo", pipe]).exitCode).toBe(0);
      const restoring = restoreBackup({ from: backup, dataDir: target, force: true });
      let staged: string | undefined;
      for (let i = 0; i < 200 && !staged; i++) {
        await Bun.sleep(10);
        staged = readdirSync(target).find((n) => n.startsWith(".restore-"));
      }
      expect(staged).toBeDefined();
      const stagedPath = join(target, staged!);
      // Its folder looks two hours old: blobs go into subfolders, which leave its own mtime alone.
      const past = new Date(Date.now() - 2 * 3600_000);
      utimesSync(stagedPath, past, past);
      const out: string[] = [];
      const code = await admin(["check", "--repair", "--data-dir", target, "--secret-key", "test-secret-key-test-secret-key-test-secret-key"], {
        out: (l) => out.push(l),
        err: () => {},
      });
      expect(out.join("\n")).not.toContain(staged!);
      expect(code).toBe(0);
      expect(existsSync(stagedPath)).toBe(true);
      // The restore then finishes with everything it had staged.
      await writeFile(pipe, text);
      const done = await restoring;
      expect(done.blobs).toBeGreaterThan(0);
      expect(readFileSync(blobPath(target, sha(text)), "utf8")).toBe(text);
      expect(readdirSync(target).filter((n) => n.startsWith(".restore-"))).toEqual([]);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  test("a damaged database page is reported, not a crash", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "pier-check-"));
    try {
      await createBackup({ dataDir: t.dataDir, to: join(scratch, "b"), includeSecretKey: false });
      await restoreBackup({ from: join(scratch, "b"), dataDir: join(scratch, "d"), force: false });
      const file = join(scratch, "d", "pier.db");
      const bytes = readFileSync(file);
      // Scribble over the middle pages (tables and indexes), leaving the header readable.
      for (let i = 4096 * 3; i < bytes.length - 4096; i += 97) bytes.writeUInt8(0xa5, i);
      writeFileSync(file, bytes);
      const db = new Database(file);
      const { DiskBlobStore } = await import("../../../src/blobs/disk");
      const blobs = new DiskBlobStore(join(scratch, "d", "blobs"));
      const report = await checkDataDir({ sqlite: db, blobs, clock: t.pier.deps.clock, dataDir: join(scratch, "d") });
      db.close();
      expect(report.ok).toBe(false);
      expect(report.findings.some((f) => f.kind === "database")).toBe(true);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
