// Mark-and-sweep garbage collection of unreferenced blobs, run as a periodic job. Mark: every
// sha256 any table still references. Sweep: stored blobs outside that set and older than the
// grace period (so a blob uploaded a moment ago, not yet attached to a file, survives).
import type { Database } from "bun:sqlite";
import type { Deps } from "../core/context";
import { collectionHeld } from "./backup-hold";

/**
 * One SQL query per table column that references blobs. Features that store blob references
 * add their query here, so the collector can never miss a reference.
 */
export const blobReferenceQueries: string[] = [
  // Files: the current state, every version's history, and declared uploads not yet committed.
  "SELECT DISTINCT sha256 FROM files",
  "SELECT DISTINCT sha256 FROM file_changes WHERE sha256 IS NOT NULL",
  "SELECT DISTINCT sha256 FROM upload_entries",
  // Deploys: every file of every deploy (kept for rollback) and its precompressed variants.
  "SELECT blob_sha256 AS sha256 FROM deploy_files UNION SELECT gzip_sha256 FROM deploy_files WHERE gzip_sha256 IS NOT NULL UNION SELECT br_sha256 FROM deploy_files WHERE br_sha256 IS NOT NULL",
];

export const GC_GRACE_MS = 24 * 3600_000;

export function referencedBlobs(sqlite: Database, queries = blobReferenceQueries): Set<string> {
  const set = new Set<string>();
  for (const q of queries) for (const row of sqlite.query<{ sha256: string }, []>(q).iterate()) set.add(row.sha256);
  return set;
}

export async function collectGarbage(
  deps: Deps,
  graceMs = GC_GRACE_MS,
): Promise<{ scanned: number; deleted: number; bytes_freed: number; held_by_backup?: true }> {
  const cutoff = deps.clock.now().getTime() - graceMs;
  // Snapshot the references first: blobs written after this point are younger than the cutoff.
  const live = referencedBlobs(deps.sqlite);
  let scanned = 0;
  let deleted = 0;
  let bytes = 0;
  for await (const blob of deps.blobs.list()) {
    scanned++;
    if (live.has(blob.sha256) || blob.mtimeMs > cutoff) continue;
    // After the mark and before each removal: a backup whose snapshot came after this mark may
    // still need a blob this mark no longer sees (src/blobs/backup-hold.ts).
    if (collectionHeld(deps.config.dataDir)) {
      deps.log.info("blob gc paused: a backup is running", { scanned, deleted });
      return { scanned, deleted, bytes_freed: bytes, held_by_backup: true };
    }
    const freed = await deps.blobs.removeIfIdle(blob.sha256, cutoff);
    if (freed === null) continue;
    bytes += freed;
    deleted++;
  }
  if (deleted) deps.log.info("blob gc", { scanned, deleted, bytes_freed: bytes });
  return { scanned, deleted, bytes_freed: bytes };
}
