// Everything a bucket owns, listed once. Delete counts and removes a bucket's items through
// this list only, so a feature that stores rows per bucket (files, versions, uploads, inbound
// mail, ...) adds its table here and large deletes, progress and the sync/background split
// pick it up. Order matters: tables are emptied first to last, so list children before the
// rows they reference.
import { eq, getTableName, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { bucketLocks, bucketVariables } from "../../db/schema";
import type { DbOrTx } from "../../db/tx";

export type ItemKind = "files" | "versions" | "other";

export interface BucketOwnedTable {
  table: SQLiteTable;
  /** The column holding the owning bucket's id. */
  bucketId: SQLiteColumn;
  /** Which progress counter (`total_files`, `total_versions`) its rows feed. */
  kind: ItemKind;
}

export const bucketOwnedTables: BucketOwnedTable[] = [
  { table: bucketVariables, bucketId: bucketVariables.bucketId, kind: "other" },
  { table: bucketLocks, bucketId: bucketLocks.bucketId, kind: "other" },
];

export interface ItemCounts {
  files: number;
  versions: number;
  other: number;
  total: number;
}

/** How many rows the bucket owns across every bucket-owned table. */
export function countBucketItems(db: DbOrTx, bucketId: string): ItemCounts {
  const counts: ItemCounts = { files: 0, versions: 0, other: 0, total: 0 };
  for (const t of bucketOwnedTables) {
    const n = db.select({ n: sql<number>`count(*)` }).from(t.table).where(eq(t.bucketId, bucketId)).get()?.n ?? 0;
    counts[t.kind] += n;
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
export function deleteBucketItemsBatch(db: DbOrTx, bucketId: string, limit: number): BatchResult {
  for (const t of bucketOwnedTables) {
    const name = sql.identifier(getTableName(t.table));
    const col = sql.identifier(t.bucketId.name);
    // SQLite is built without DELETE ... LIMIT; a rowid sub-select bounds the batch instead.
    const res = db.run(sql`delete from ${name} where rowid in (select rowid from ${name} where ${col} = ${bucketId} limit ${limit})`);
    const deleted = Number((res as unknown as { changes?: number }).changes ?? 0);
    if (deleted > 0) return { deleted, kind: t.kind };
  }
  return { deleted: 0, kind: null };
}
