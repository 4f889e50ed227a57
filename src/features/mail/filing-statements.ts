// The filer's own statements (address re-check, received_count, the message row), compiled once
// per database connection: they run for every message inside the filing transaction, where
// drizzle's query building cost more than the statements themselves.
import type { Database, Statement } from "bun:sqlite";
import { getTableName } from "drizzle-orm";
import { mailAddresses } from "../../db/schema";

// The buckets feature owns the address table; named through its schema object so the
// crossing stays visible to the feature-boundary check.
const ADDRESSES = getTableName(mailAddresses);

export interface FilingStatements {
  address: Statement<{ localPart: string; accountId: string; enabled: number; disabledByAdminAt: string | null }>;
  countReceived: Statement;
  insertMessage: Statement;
  savepoint: Statement;
  release: Statement;
  rollbackTo: Statement;
  /** Around a batch when the benchmark compares SQLite's own fsync (see GroupCommitOptions). */
  synchronousFull: Statement;
  synchronousNormal: Statement;
}

const cache = new WeakMap<Database, FilingStatements>();

export function filingStatements(sqlite: Database): FilingStatements {
  let s = cache.get(sqlite);
  if (s) return s;
  s = {
    address: sqlite.prepare(
      `SELECT local_part AS localPart, account_id AS accountId, enabled, disabled_by_admin_at AS disabledByAdminAt FROM ${ADDRESSES} WHERE bucket_id = ?1`,
    ),
    countReceived: sqlite.prepare(
      `UPDATE ${ADDRESSES} SET received_count = received_count + 1, last_received_path = ?2, last_received_at = ?3, updated_at = ?4 WHERE local_part = ?1`,
    ),
    insertMessage: sqlite.prepare(
      "INSERT INTO mail_messages (bucket_id, folder, message_id, received_at, from_address, subject, size, attachment_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    ),
    savepoint: sqlite.prepare("SAVEPOINT inbound_message"),
    release: sqlite.prepare("RELEASE inbound_message"),
    rollbackTo: sqlite.prepare("ROLLBACK TO inbound_message"),
    synchronousFull: sqlite.prepare("PRAGMA synchronous = FULL"),
    synchronousNormal: sqlite.prepare("PRAGMA synchronous = NORMAL"),
  };
  cache.set(sqlite, s);
  return s;
}
