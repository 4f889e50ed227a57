// `pier backup` beside a running server: the backup copies exactly the blobs its database snapshot
// references, after the snapshot. A blob collection on the server in between (a bucket deleted
// meanwhile) must not delete a blob the snapshot still needs, or the backup would reference
// bytes it does not have and restore would refuse it whole.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectGarbage } from "../../../src/blobs/gc";
import { restoreBackup, verifyBackup } from "../../../src/features/operations";
import { pierCommand } from "../../helpers/cli";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { newBucket, syncFiles, textFile } from "../../helpers/uploads";

const root = join(import.meta.dir, "../../..");
// Enough blobs that the copy is still running when the test pauses it (a copy is about 0.1 ms each).
const FILES = 800;
let t: TestPier;
let u: TestUser;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "pier-backup-gc-"));
  t = await startTestPier();
  u = await t.user();
});

afterAll(async () => {
  await t?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("pier backup while the server collects blobs", () => {
  test("a collection during the backup deletes nothing the backup's snapshot references; the next one does", async () => {
    const doomed = await newBucket(t, u.key, "Doomed");
    const files = Array.from({ length: FILES }, (_, i) => textFile(`f${i}.txt`, `file ${i} ${"y".repeat(512)}`));
    expect((await syncFiles(t, u.key, doomed, files)).finalize.status).toBe(200);

    const folder = join(scratch, "backup");
    const p = Bun.spawn([...(await pierCommand()), "backup", "--data-dir", t.dataDir, "--to", folder], { cwd: root, stdout: "pipe", stderr: "pipe" });
    const out = Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
    // The first blob copy starts once the snapshot is taken: hold the backup there.
    for (const until = Date.now() + 60_000; !existsSync(join(folder, "blobs")) && Date.now() < until; ) await Bun.sleep(1);
    process.kill(p.pid, "SIGSTOP");
    try {
      // The bucket goes, and a collection runs on the server, its blobs long past the grace period.
      const del = await t.api("DELETE", `/api/v1/buckets/${doomed}`, { key: u.key, body: { confirmation: `delete ${doomed}` } });
      expect([200, 202]).toContain(del.status); // a large bucket is deleted by a job (drained below)
      await t.pier.runner.drain();
      t.clock.advance(48 * 3600_000);
      await collectGarbage(t.pier.deps);
    } finally {
      process.kill(p.pid, "SIGCONT");
    }
    const [code, stdout, stderr] = await out;
    expect({ code, stderr: stderr.split("\n").filter((l) => l.startsWith("warning")) }).toEqual({ code: 0, stderr: [] });
    expect(JSON.parse(stdout).problems).toEqual([]);
    expect((await verifyBackup(folder)).problems).toEqual([]);
    const restored = await restoreBackup({ from: folder, dataDir: join(scratch, "restored"), force: false });
    expect(restored.blobs).toBeGreaterThanOrEqual(FILES);

    // The backup is over: the blobs nobody references any more are collected now.
    expect((await collectGarbage(t.pier.deps)).deleted).toBeGreaterThanOrEqual(FILES);
  }, 120_000);
});
