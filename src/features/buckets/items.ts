// Everything a bucket owns, listed once. Delete counts and removes a bucket's items through
// this list only, so a feature that stores rows per bucket (files, versions, uploads, inbound
// mail, ...) adds its table here and large deletes, progress and the sync/background split
// pick it up. Order matters: tables are emptied first to last, so list children before the
// rows they reference (upload entries before their sessions). Blobs are not rows of a bucket:
// once no table references a sha256 any more, the blob GC job frees it.
import { eq, getTableName, inArray, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import {
  bucketLocks,
  bucketVariables,
  bucketVersions,
  deployFiles,
  deploys,
  fileChanges,
  fileLocks,
  files,
  mailMessages,
  publications,
  publishSessions,
  uploadEntries,
  uploadSessions,
} from "../../db/schema";
import type { DbOrTx } from "../../db/tx";

/** Which delete phase a table's batches report (`deleting_files`, `deleting_versions`, `deleting_other`). */
export type ItemKind = "files" | "versions" | "other";

export interface BucketOwnedTable {
  table: SQLiteTable;
  /** The column holding the owning bucket's id (indexed: counts and batches look rows up by it). */
  bucketId: SQLiteColumn;
  /**
   * For tables reached through a parent (deploy files through deploys through publications):
   * the rows of `bucketId`'s bucket. Without it, rows are those whose `bucketId` column matches.
   */
  owned?: (bucketId: string) => SQL;
  kind: ItemKind;
  /**
   * Which progress counter its rows feed (`total_files`, `total_versions`); defaults to `kind`.
   * Every row counts in `total_items` either way.
   */
  counter?: ItemKind;
}

export const bucketOwnedTables: BucketOwnedTable[] = [
  // Inbound mail: message rows point at the message's files, so they go first.
  { table: mailMessages, bucketId: mailMessages.bucketId, kind: "other" },
  // Files feature: staged uploads and locks go with the files; the change log with the versions.
  { table: uploadEntries, bucketId: uploadEntries.bucketId, kind: "files", counter: "other" },
  { table: uploadSessions, bucketId: uploadSessions.bucketId, kind: "files", counter: "other" },
  { table: fileLocks, bucketId: fileLocks.bucketId, kind: "files", counter: "other" },
  { table: files, bucketId: files.bucketId, kind: "files" },
  { table: fileChanges, bucketId: fileChanges.bucketId, kind: "versions", counter: "other" },
  { table: bucketVersions, bucketId: bucketVersions.bucketId, kind: "versions" },
  // Publishing: only an unpublished bucket can be deleted (UNPUBLISH_FIRST), but its deploys
  // stay for rollback and could be many thousand rows; they would otherwise go in one cascade
  // when the bucket row is removed. Deploy files first, then deploys, then the publications
  // (whose gate attempts, email codes and leads cascade: a handful of rows).
  { table: deployFiles, bucketId: deployFiles.deployId, kind: "other", owned: (b) => inArray(deployFiles.deployId, deploysOf(b)) },
  { table: deploys, bucketId: deploys.publicationId, kind: "other", owned: (b) => inArray(deploys.publicationId, publicationsOf(b)) },
  { table: publishSessions, bucketId: publishSessions.bucketId, kind: "other" },
  { table: publications, bucketId: publications.bucketId, kind: "other" },
  // Buckets feature.
  { table: bucketVariables, bucketId: bucketVariables.bucketId, kind: "other" },
  { table: bucketLocks, bucketId: bucketLocks.bucketId, kind: "other" },
];

function publicationsOf(bucketId: string): SQL {
  return sql`(select ${sql.identifier("id")} from ${sql.identifier("publications")} where ${sql.identifier("bucket_id")} = ${bucketId})`;
}
function deploysOf(bucketId: string): SQL {
  return sql`(select ${sql.identifier("id")} from ${sql.identifier("deploys")} where ${sql.identifier("publication_id")} in ${publicationsOf(bucketId)})`;
}

/** The condition selecting the bucket's rows of `t`, without table qualifiers (used in sub-selects). */
const ownedBy = (t: BucketOwnedTable, bucketId: string): SQL => (t.owned ? t.owned(bucketId) : eq(t.bucketId, bucketId));

export interface ItemCounts {
  /** Current files. */
  files: number;
  /** Bucket versions (history snapshots). */
  versions: number;
  other: number;
  total: number;
}

/** How many rows the bucket owns across every bucket-owned table. */
export function countBucketItems(bucketId: string, db: DbOrTx): ItemCounts {
  const counts: ItemCounts = { files: 0, versions: 0, other: 0, total: 0 };
  for (const t of bucketOwnedTables) {
    const n = db.select({ n: sql<number>`count(*)` }).from(t.table).where(ownedBy(t, bucketId)).get()?.n ?? 0;
    counts[t.counter ?? t.kind] += n;
    counts.total += n;
  }
  return counts;
}

export interface BatchResult {
  deleted: number;
  /** Kind of the table the batch came from (null when nothing was left). */
  kind: ItemKind | null;
}

/** Delete up to `limit` of the bucket's items, from the first table that still has some. */
export function deleteBucketItemsBatch(bucketId: string, limit: number, db: DbOrTx): BatchResult {
  for (const t of bucketOwnedTables) {
    const name = sql.identifier(getTableName(t.table));
    // SQLite is built without DELETE ... LIMIT; a rowid sub-select bounds the batch instead.
    const res = db.run(sql`delete from ${name} where rowid in (select rowid from ${name} where ${ownedBy(t, bucketId)} limit ${limit})`);
    const deleted = Number((res as unknown as { changes?: number }).changes ?? 0);
    if (deleted > 0) return { deleted, kind: t.kind };
  }
  return { deleted: 0, kind: null };
}
