// SQLite configured on purpose, in one place: WAL for concurrent readers, a busy timeout so a
// second connection (CLI against a running server) waits instead of failing, foreign keys on,
// NORMAL sync (durable in WAL mode across application crashes; what must also survive a power
// cut fsyncs the WAL itself before answering: see features/mail/wal-sync.ts).
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
  // The timeout first: switching to WAL needs a lock, and another process may hold one for a
  // moment (its last connection checkpointing as it closes); without it the open fails at once.
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA temp_store = MEMORY");
  cacheStatements(sqlite);
  const db = drizzle(sqlite, { schema });
  return { sqlite, db, close: () => sqlite.close() };
}

/** How many compiled statements stay cached (distinct SQL texts; `IN (...)` lists vary). */
export const STATEMENT_CACHE_SIZE = 500;

/**
 * drizzle's bun:sqlite driver compiles every query again (`prepare`) each time it runs: about a
 * third of a small write transaction's CPU. Its statements are run at once and never finalized
 * or iterated, so one compiled statement per SQL text can be reused; the cache is bounded
 * (least recently used out) because some SQL texts embed a list's length.
 */
function cacheStatements(sqlite: Database): void {
  const compile = sqlite.prepare.bind(sqlite);
  const cache = new Map<string, ReturnType<Database["prepare"]>>();
  sqlite.prepare = ((sql: string, ...rest: unknown[]) => {
    if (rest.length > 0) return (compile as (...a: unknown[]) => ReturnType<Database["prepare"]>)(sql, ...rest);
    let stmt = cache.get(sql);
    if (stmt) {
      cache.delete(sql);
    } else {
      stmt = compile(sql);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    cache.set(sql, stmt);
    return stmt;
  }) as Database["prepare"];
}
