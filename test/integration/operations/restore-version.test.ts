// A backup written by a newer Pier cannot run on this one (its database names migrations this
// binary does not know, and the server refuses it with DATA_DIR_TOO_NEW): restore refuses it
// before anything is written, so a --force restore never swaps a working data dir for one that
// will not start.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBackup, restoreBackup } from "../../../src/features/operations";
import { fromNewerPier } from "../../helpers/backups";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "pier-restore-version-"));
  t = await startTestPier();
  u = await t.user();
});

afterAll(async () => {
  await t?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const journal = (dataDir: string): string[] => {
  const db = new Database(join(dataDir, "pier.db"), { readonly: true });
  try {
    return db
      .query<{ name: string }, []>("SELECT name FROM __pier_migrations")
      .all()
      .map((r) => r.name);
  } finally {
    db.close();
  }
};

describe("restore of a backup from a newer Pier", () => {
  test("is refused before anything is written: a new data dir stays empty, --force leaves the working one as it was", async () => {
    await directUpload(t, u.key, await newBucket(t, u.key, "Versions"), textFile("a.txt", "the working data"));
    const folder = join(scratch, "newer");
    await createBackup({ dataDir: t.dataDir, to: folder, includeSecretKey: false });
    const live = join(scratch, "live");
    await restoreBackup({ from: folder, dataDir: live, force: false });
    const before = readFileSync(join(live, "pier.db"));

    fromNewerPier(folder);
    const fresh = join(scratch, "fresh");
    const e = await restoreBackup({ from: folder, dataDir: fresh, force: false }).catch((x) => x);
    expect(e.code).toBe("BACKUP_TOO_NEW");
    expect(e.message).toContain("9999_from_a_newer_pier");
    expect(e.message).toContain("99.0.0");
    expect(existsSync(join(fresh, "pier.db"))).toBe(false);

    await expect(restoreBackup({ from: folder, dataDir: live, force: true })).rejects.toMatchObject({ code: "BACKUP_TOO_NEW" });
    expect(readFileSync(join(live, "pier.db")).equals(before)).toBe(true);
    expect(journal(live)).not.toContain("9999_from_a_newer_pier");
    expect(readdirSync(live).filter((n) => n.startsWith("."))).toEqual([]);
  }, 60_000);
});
