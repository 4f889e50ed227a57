// A blob the data dir has lost (or `pier admin check --repair` moved to quarantine) is reported by
// `pier backup`, which backs up the rest: that backup must restore, with the one file broken as it
// was at backup time, instead of being refused whole. A blob missing from the backup that the
// backup did not record as missing is still damage, and still refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkDataDir, createBackup, restoreBackup, verifyBackup } from "../../../src/features/operations";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "pier-missing-blob-"));
  t = await startTestPier();
  u = await t.user();
});

afterAll(async () => {
  await t?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const sha = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");
const blobPath = (root: string, s: string) => join(root, "blobs", "sha256", s.slice(0, 2), s.slice(2, 4), s);

describe("a backup of a data dir that lost a blob", () => {
  test("restores everything else (folder and archive), and names the blob that was already missing", async () => {
    const bucket = await newBucket(t, u.key, "Partly damaged");
    await directUpload(t, u.key, bucket, textFile("good.txt", "still whole"));
    await directUpload(t, u.key, bucket, textFile("bad.txt", "about to rot"));
    const lost = sha("about to rot");
    // Bit rot, then the doctor's repair: the damaged blob goes to quarantine, its file is now missing.
    writeFileSync(blobPath(t.dataDir, lost), "about to r0t");
    const { blobs, clock, sqlite } = t.pier.deps;
    await checkDataDir({ sqlite, blobs, clock, dataDir: t.dataDir }, { repair: true });
    expect(existsSync(blobPath(t.dataDir, lost))).toBe(false);

    for (const to of [join(scratch, "folder"), join(scratch, "archive.tar.gz")]) {
      const b = await createBackup({ dataDir: t.dataDir, to, includeSecretKey: false });
      expect(b.problems).toEqual([`blob ${lost} is missing from the data dir`]);
      const v = await verifyBackup(to);
      expect(v.problems.length).toBe(1);
      expect(v.problems[0]).toContain(`blob ${lost} is missing`);
      expect(v.problems[0]).toContain("when the backup was taken");

      const target = join(scratch, `restored-${to.endsWith(".gz") ? "archive" : "folder"}`);
      const r = await restoreBackup({ from: to, dataDir: target, force: false });
      expect(r.blobs_missing).toEqual([lost]);
      expect(existsSync(blobPath(target, sha("still whole")))).toBe(true);
      expect(existsSync(join(target, "pier.db"))).toBe(true);
    }
  }, 60_000);

  test("a blob missing from the backup that the backup did not record as missing is refused as before", async () => {
    const folder = join(scratch, "folder");
    rmSync(blobPath(folder, sha("still whole")));
    const target = join(scratch, "refused");
    await expect(restoreBackup({ from: folder, dataDir: target, force: false })).rejects.toMatchObject({ code: "BACKUP_INVALID" });
    expect(existsSync(join(target, "pier.db"))).toBe(false);
  });
});
