// Scheduled backups driven by a test: one run of the backup job now, and where a blob lands in a
// backup folder.
import { expect } from "bun:test";
import { join } from "node:path";
import { BACKUP_JOB } from "../../src/features/operations";
import type { TestPier } from "./pier";

/** Run the scheduled backup job once, now, and return its result (it must succeed). */
export async function runBackupJob(t: TestPier): Promise<Record<string, unknown>> {
  // Only this run: the periodic instance each run re-queues would otherwise run first.
  t.pier.deps.sqlite.query("DELETE FROM jobs WHERE kind = ? AND status = 'queued'").run(BACKUP_JOB);
  const id = t.pier.deps.jobs.enqueue(BACKUP_JOB, {}, { uniqueKey: `test-backup-${crypto.randomUUID()}` });
  await t.pier.runner.drain();
  const job = t.pier.deps.jobs.get(id)!;
  expect({ status: job.status, error: job.lastError }).toEqual({ status: "done", error: null });
  return job.result!;
}

/** The path a blob holding `text` has in a backup folder. */
export function backupBlobPath(folder: string, text: string): string {
  const s = new Bun.CryptoHasher("sha256").update(text).digest("hex");
  return join(folder, "blobs", "sha256", s.slice(0, 2), s.slice(2, 4), s);
}
