// The operator commands as typed: `pier backup` says loudly whether the secret key is in the
// backup, `pier backup verify` exits 1 on a damaged backup and on one this Pier cannot restore,
// `pier restore` refuses a non-empty data dir without --force, and failures are one line with a
// code (never "this looks like a bug").
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBackup, restoreBackup } from "../../../src/features/operations";
import { fromNewerPier } from "../../helpers/backups";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";
import { pierCommand } from "../../helpers/cli";

const root = join(import.meta.dir, "../../..");
let t: TestPier;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "pier-backup-cli-"));
  // The key lives in the data dir (secret.key), as on a default install.
  t = await startTestPier({ secretKey: null });
  const u = await t.user();
  await directUpload(t, u.key, await newBucket(t, u.key, "CLI"), textFile("a.txt", "some bytes"));
});

afterAll(async () => {
  await t?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

async function pier(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn([...(await pierCommand()), ...args], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, PIER_SECRET_KEY: "" },
  });
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, out, err };
}

describe("pier backup / verify / restore", () => {
  test("backup warns that the key is not included, or that it is; verify and restore work on the result", async () => {
    const without = await pier("backup", "--data-dir", t.dataDir, "--to", join(scratch, "b1"));
    expect(without.code).toBe(0);
    expect(without.err).toContain("WARNING: the secret key is NOT in this backup");
    expect(JSON.parse(without.out)).toMatchObject({ format: 1, secret_key_included: false, problems: [] });

    const withKey = await pier("backup", "--data-dir", t.dataDir, "--to", join(scratch, "b2"), "--include-secret-key");
    expect(withKey.code).toBe(0);
    expect(withKey.err).toContain("WARNING: this backup CONTAINS the secret key");

    const ok = await pier("backup", "verify", join(scratch, "b2"));
    expect(ok.code).toBe(0);
    expect(ok.err).toContain(": ok (backup of ");

    const restored = await pier("restore", join(scratch, "b2"), "--data-dir", join(scratch, "restored"));
    expect(restored.code).toBe(0);
    expect(restored.err).toContain("the secret key was restored from the backup");
    const again = await pier("restore", join(scratch, "b2"), "--data-dir", join(scratch, "restored"));
    expect(again.code).toBe(1);
    expect(again.err).toContain("is not empty");
    expect(again.err).toContain("(RESTORE_TARGET_NOT_EMPTY)");
    expect(again.err).not.toContain("bug");
  }, 60_000);

  test("verify exits 1 and names the problem; a target in the way fails with BACKUP_FAILED", async () => {
    writeFileSync(join(scratch, "b1", "pier.db"), "not a database");
    const bad = await pier("backup", "verify", join(scratch, "b1"));
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("problem: the database does not match the manifest");
    writeFileSync(join(scratch, "a-file"), "");
    const blocked = await pier("backup", "--data-dir", t.dataDir, "--to", join(scratch, "a-file"));
    expect(blocked.code).toBe(1);
    expect(blocked.err).toContain("(BACKUP_FAILED)");
    expect(blocked.err).not.toContain("bug");
  }, 60_000);

  // Restore refuses a backup a newer Pier wrote (BACKUP_TOO_NEW); verify used to call it "ok".
  test("verify fails on a backup from a newer Pier with the code and words a restore would give", async () => {
    const folder = join(scratch, "newer");
    await createBackup({ dataDir: t.dataDir, to: folder, includeSecretKey: false });
    fromNewerPier(folder);
    const verify = await pier("backup", "verify", folder);
    expect(verify.code).toBe(1);
    expect(JSON.parse(verify.out)).toMatchObject({ ok: false, code: "BACKUP_TOO_NEW", problems: [] });
    const restore = await restoreBackup({ from: folder, dataDir: join(scratch, "from-newer"), force: false }).catch((e) => e);
    expect(restore.code).toBe("BACKUP_TOO_NEW");
    expect(verify.err.trim()).toBe(`pier backup verify: ${restore.message.replace(" Nothing was written.", "")} (BACKUP_TOO_NEW)`);
    expect(verify.err).toContain("9999_from_a_newer_pier");
  }, 60_000);
});
