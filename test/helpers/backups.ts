// Scheduled backups driven by a test: one run of the backup job now, where a blob lands in a
// backup folder, and a backup made to look as a newer Pier wrote it.
import { Database } from "bun:sqlite";
import { expect } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
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

/** Make a backup folder look as a newer Pier (99.0.0) wrote it: one more migration in its journal. */
export function fromNewerPier(folder: string): void {
  const dbFile = join(folder, "pier.db");
  const db = new Database(dbFile);
  db.query("INSERT INTO __pier_migrations (name, applied_at) VALUES ('9999_from_a_newer_pier', '2099-01-01T00:00:00Z')").run();
  db.close();
  const bytes = readFileSync(dbFile);
  const manifestFile = join(folder, "manifest.json");
  const m = JSON.parse(readFileSync(manifestFile, "utf8"));
  m.pier_version = "99.0.0";
  m.database.sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  m.database.size = bytes.length;
  m.database.migrations.push("9999_from_a_newer_pier");
  writeFileSync(manifestFile, JSON.stringify(m));
}
