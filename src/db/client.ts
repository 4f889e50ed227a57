// SQLite configured on purpose, in one place: WAL for concurrent readers, a busy timeout so a
// second connection (CLI against a running server) waits instead of failing, foreign keys on,
// NORMAL sync (durable in WAL mode across application crashes).
import { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import * as schema from "./schema";

export type Db = BunSQLiteDatabase<typeof schema>;

export interface DbHandle {
  sqlite: Database;
  db: Db;
  close(): void;
}

export function openDatabase(file: string): DbHandle {
  const sqlite = new Database(file, { create: true, strict: true });
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA foreign_keys = ON");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA temp_store = MEMORY");
  const db = drizzle(sqlite, { schema });
  return { sqlite, db, close: () => sqlite.close() };
}
