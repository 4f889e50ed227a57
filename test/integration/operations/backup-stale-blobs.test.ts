// A backup folder holds the blobs its own database references, no more. Scheduled backups link
// the previous folder's blobs before copying new ones, and a folder backed up into again keeps
// what it had: without a sweep, the bytes of every file ever deleted stayed in every later backup,
// so --backup-keep bounded neither the space nor how long deleted data lived on in backups.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBackup, readManifest, verifyBackup } from "../../../src/features/operations";
import { backupBlobPath, runBackupJob } from "../../helpers/backups";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
let backupDir: string;
let scratch: string;
const HOUR = 3600_000;

beforeAll(async () => {
  backupDir = mkdtempSync(join(tmpdir(), "pier-stale-scheduled-"));
  scratch = mkdtempSync(join(tmpdir(), "pier-stale-folder-"));
  t = await startTestPier({ backupDir, backupEvery: 6 * HOUR, backupKeep: 2 });
  u = await t.user();
});

afterAll(async () => {
  await t?.stop();
  for (const d of [backupDir, scratch]) if (d) rmSync(d, { recursive: true, force: true });
});

const blobFiles = (folder: string) => readdirSync(join(folder, "blobs"), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;

async function deleteBucket(id: string): Promise<void> {
  expect((await t.api("DELETE", `/api/v1/buckets/${id}`, { key: u.key, body: { confirmation: `delete ${id}` } })).status).toBe(200);
  await t.pier.runner.drain();
}

describe("a backup folder holds only the blobs its database references", () => {
  test("scheduled: a deleted bucket's bytes leave the backups once the backups that had it are pruned", async () => {
    await directUpload(t, u.key, await newBucket(t, u.key, "Kept"), textFile("kept.txt", "kept for good"));
    const gone = await newBucket(t, u.key, "Gone");
    await directUpload(t, u.key, gone, textFile("secret.txt", "deleted by its owner"));
    const first = (await runBackupJob(t)).folder as string;
    expect(existsSync(backupBlobPath(first, "deleted by its owner"))).toBe(true);

    await deleteBucket(gone);
    t.clock.advance(6 * HOUR + 1000);
    const second = (await runBackupJob(t)).folder as string;
    t.clock.advance(6 * HOUR + 1000);
    const third = await runBackupJob(t);
    expect(third.pruned).toEqual([first.split("/").pop()]);

    for (const folder of [second, third.folder as string]) {
      expect(existsSync(backupBlobPath(folder, "deleted by its owner"))).toBe(false);
      expect(existsSync(backupBlobPath(folder, "kept for good"))).toBe(true);
      expect(blobFiles(folder)).toBe(readManifest(folder).blobs.count);
      expect((await verifyBackup(folder)).problems).toEqual([]);
    }
  }, 60_000);

  test("by hand into the same folder: the second backup drops the blobs the first had and it does not need", async () => {
    const bucket = await newBucket(t, u.key, "Gone too");
    await directUpload(t, u.key, bucket, textFile("old.txt", "in the first backup only"));
    const folder = join(scratch, "again");
    await createBackup({ dataDir: t.dataDir, to: folder, includeSecretKey: false });
    expect(existsSync(backupBlobPath(folder, "in the first backup only"))).toBe(true);

    await deleteBucket(bucket);
    await createBackup({ dataDir: t.dataDir, to: folder, includeSecretKey: false });
    expect(existsSync(backupBlobPath(folder, "in the first backup only"))).toBe(false);
    expect(blobFiles(folder)).toBe(readManifest(folder).blobs.count);
    expect((await verifyBackup(folder)).problems).toEqual([]);
  }, 60_000);
});
