// Scheduled backups (--backup-dir, --backup-every, --backup-keep) as a job on the queue: a backup
// when the newest is older than the period, blobs shared with the previous backup by hard link,
// only --backup-keep kept; the state shows on `pier admin backups` and the admin health page.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { admin } from "../../../src/cli/admin";
import { BACKUP_JOB, backupStatus, listScheduledBackups, verifyBackup } from "../../../src/features/operations";
import { sessionCookie } from "../../helpers/oauth";
import { backupBlobPath, runBackupJob } from "../../helpers/backups";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
let backupDir: string;
const HOUR = 3600_000;

beforeAll(async () => {
  backupDir = mkdtempSync(join(tmpdir(), "pier-scheduled-"));
  t = await startTestPier({ backupDir, backupEvery: 6 * HOUR, backupKeep: 2 });
  u = await t.user();
});

afterAll(async () => {
  await t?.stop();
  if (backupDir) rmSync(backupDir, { recursive: true, force: true });
});

describe("scheduled backups", () => {
  test("a backup when due, none when not, blobs hard-linked to the previous one, the oldest pruned past --backup-keep", async () => {
    const bucket = await newBucket(t, u.key, "Scheduled");
    await directUpload(t, u.key, bucket, textFile("one.txt", "first file"));
    const first = await runBackupJob(t);
    expect(first.folder).toBeString();
    expect((await verifyBackup(first.folder as string)).problems).toEqual([]);

    expect(await runBackupJob(t)).toMatchObject({ skipped: "not due" });

    t.clock.advance(6 * HOUR + 1000);
    expect((await directUpload(t, u.key, bucket, textFile("two.txt", "second file"))).status).toBe(201);
    const second = await runBackupJob(t);
    expect(second.copied).toBe(1);
    // The unchanged blob is the same file on disk (a hard link), not a second copy.
    expect(statSync(backupBlobPath(second.folder as string, "first file")).ino).toBe(statSync(backupBlobPath(first.folder as string, "first file")).ino);

    t.clock.advance(6 * HOUR + 1000);
    const third = await runBackupJob(t);
    expect(third.pruned).toEqual([(first.folder as string).split("/").pop()]);
    const left = listScheduledBackups(backupDir);
    expect(left.map((b) => b.path)).toEqual([third.folder as string, second.folder as string]);
    expect(left.every((b) => b.complete)).toBe(true);
    // Deleting the oldest did not hurt the others (hard links keep the bytes).
    expect((await verifyBackup(second.folder as string)).problems).toEqual([]);
  }, 60_000);

  test("pier admin backups shows the state; the admin health page too", async () => {
    const out: string[] = [];
    const code = await admin(
      [
        "backups",
        "--json",
        "--data-dir",
        t.dataDir,
        "--backup-dir",
        backupDir,
        "--backup-every",
        "6h",
        "--backup-keep",
        "2",
        "--secret-key",
        "test-secret-key-test-secret-key-test-secret-key",
      ],
      {
        out: (l) => out.push(l),
        err: () => {},
      },
    );
    expect(code).toBe(0);
    const state = JSON.parse(out[0]!);
    expect(state).toMatchObject({ enabled: true, dir: backupDir, keep: 2, every_ms: 6 * HOUR, last_error: null });
    expect(state.backups).toHaveLength(2);

    t.pier.deps.sqlite.query("UPDATE users SET is_instance_admin = 1 WHERE id = ?").run(u.userId);
    const res = await fetch(`${t.url}/dashboard/admin/health`, { headers: { cookie: sessionCookie(t, u), host: new URL(t.pier.deps.urls.baseUrl).host } });
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(html).toContain('id="backups-h">Backups</h2>');
    expect(html).toContain(state.backups[0].name);
    expect(html).toContain("keeping 2");
  });

  test("a backup dir that cannot be written fails the job with a clear error, shown as the last failure", async () => {
    const blocked = join(backupDir, "a-file");
    await Bun.write(blocked, "not a folder");
    const saved = t.pier.deps.config.backupDir;
    (t.pier.deps.config as { backupDir: string | null }).backupDir = join(blocked, "sub");
    try {
      const id = t.pier.deps.jobs.enqueue(BACKUP_JOB, {}, { uniqueKey: "test-backup-fail" });
      await t.pier.runner.drain();
      const job = t.pier.deps.jobs.get(id)!;
      expect(job.status).toBe("failed");
      expect(job.lastError).toMatch(/ENOTDIR|not a folder|a file/);
      expect(backupStatus(t.pier.deps).last_error?.message).toBe(job.lastError!);
    } finally {
      (t.pier.deps.config as { backupDir: string | null }).backupDir = saved;
      rmSync(blocked);
    }
  });
});
