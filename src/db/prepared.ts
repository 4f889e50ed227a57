// A drizzle query prepared once per database connection. Building a query's SQL through drizzle
// costs 10-30 µs, more than SQLite takes to run a primary-key lookup (1-3 µs): lookups made per
// request or per listed row are prepared (bench/README.md). A caller inside a transaction (a Tx,
// not the connection's own Db) runs the query as built instead: write the query once as a
// function of its parameter, given either a value or `sql.placeholder(...)`.
import { count, desc, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";
import type { DbOrTx } from "./tx";

/** The connection itself (its prepared queries apply), not a transaction handed to a callback. */
export const isConnection = (db: DbOrTx): db is Db => "$client" in db;

export function preparedPerDb<Q>(prepare: (db: Db) => Q): (db: Db) => Q {
  const prepared = new WeakMap<Db, Q>();
  return (db) => {
    let q = prepared.get(db);
    if (q === undefined) prepared.set(db, (q = prepare(db)));
    return q;
  };
}

/**
 * A list's page, newest first (`createdAt`, then `id` for rows of the same millisecond), and its
 * count, prepared: placeholders `limit` and `offset` besides those of `where`.
 */
export function newestFirstPage<T extends SQLiteTable & { createdAt: SQLiteColumn; id: SQLiteColumn }>(db: Db, table: T, where: SQL | undefined) {
  return {
    total: db.select({ n: count() }).from(table).where(where).prepare(),
    rows: db
      .select()
      .from(table)
      .where(where)
      .orderBy(desc(table.createdAt), desc(table.id))
      .limit(sql.placeholder("limit"))
      .offset(sql.placeholder("offset"))
      .prepare(),
  };
}
