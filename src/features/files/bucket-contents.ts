// Hooks for the bucket lifecycle (background delete, delete progress): what a bucket holds in
// the files feature's tables and how to remove it in bounded batches. Every table here also
// has ON DELETE CASCADE to buckets, so deleting the bucket row alone is correct; the batches
// keep each transaction short for large buckets.
import { sql } from "drizzle-orm";
import { transaction, type DbOrTx } from "../../db/tx";

export interface BucketContents {
  files: number;
  versions: number;
  /** Rows a delete has to remove (files + change log + versions + uploads). */
  items: number;
}

export function countBucketContents(db: DbOrTx, bucketId: string): BucketContents {
  const n = (table: string) => db.all<{ n: number }>(sql`SELECT count(*) AS n FROM ${sql.identifier(table)} WHERE bucket_id = ${bucketId}`)[0]!.n;
  const f = n("files");
  const v = n("bucket_versions");
  const c = n("file_changes");
  const u = n("upload_entries");
  return { files: f, versions: v, items: f + v + c + u };
}

/**
 * Delete up to `limit` rows of the bucket's file data, children first (uploads, current files,
 * change log, then versions). Returns how many rows went; 0 means nothing is left.
 * Blobs are not touched: the GC job frees those no other bucket references.
 */
export function deleteBucketContentsBatch(db: DbOrTx, bucketId: string, limit = 5000): number {
  return transaction(db, (tx) => {
    let left = limit;
    const steps: [string, string][] = [
      ["upload_entries", "rowid"], ["upload_sessions", "rowid"], ["file_locks", "rowid"],
      ["files", "rowid"], ["file_changes", "rowid"], ["bucket_versions", "rowid"],
    ];
    for (const [table, key] of steps) {
      if (left <= 0) break;
      const r = tx.run(sql`DELETE FROM ${sql.identifier(table)} WHERE ${sql.identifier(key)} IN (SELECT ${sql.identifier(key)} FROM ${sql.identifier(table)} WHERE bucket_id = ${bucketId} LIMIT ${left})`);
      left -= (r as unknown as { changes: number }).changes;
    }
    return limit - left;
  });
}
