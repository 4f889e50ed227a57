// The statements of the commit path (commit.ts), compiled once per database connection and run
// with bound parameters. commitChanges runs for every upload and every inbound message; building
// each query's SQL text through drizzle cost more CPU than SQLite spent executing it, so this
// hot path talks to bun:sqlite directly. Rows come back in the drizzle row shape (camelCase
// columns) so callers see the same FileRow/VersionRow either way.
import type { Database, Statement } from "bun:sqlite";
import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { buckets } from "../../db/schema";

const FILE_COLUMNS =
  "id, bucket_id AS bucketId, path, sha256, size, content_type AS contentType, md5, version_count AS versionCount, " +
  "bucket_version AS bucketVersion, created_at AS createdAt, updated_at AS updatedAt";

export interface CommitStatements {
  bucketById: ReturnType<typeof prepareBucketById>;
  uploadCommitting: Statement<{ id: string }>;
  otherLock: Statement<{ path: string }>;
  latestVersion: Statement<{ number: number; fileCount: number; totalBytes: number }>;
  fileByPath: Statement;
  fileUnder: Statement<{ path: string }>;
  filesUnder: Statement<{ path: string }>;
  fileIdTaken: Statement<{ id: string }>;
  deleteFile: Statement;
  updateFile: Statement;
  insertFile: Statement;
  insertChange: Statement;
  insertVersion: Statement;
  bumpRevision: Statement;
}

const prepareBucketById = (db: Db) =>
  db
    .select()
    .from(buckets)
    .where(eq(buckets.id, sql.placeholder("id")))
    .prepare();

const cache = new WeakMap<Database, CommitStatements>();

export function commitStatements(sqlite: Database, db: Db): CommitStatements {
  let s = cache.get(sqlite);
  if (s) return s;
  s = {
    // Typed bucket row (JSON and boolean columns mapped): drizzle, but prepared once.
    bucketById: prepareBucketById(db),
    uploadCommitting: sqlite.prepare(
      "SELECT id FROM upload_sessions WHERE bucket_id = ?1 AND status = 'finalizing' AND expires_at > ?2 AND (?3 IS NULL OR id <> ?3) LIMIT 1",
    ),
    otherLock: sqlite.prepare("SELECT path FROM file_locks WHERE bucket_id = ?1 AND expires_at > ?2 AND holder_id <> ?3 LIMIT 1"),
    latestVersion: sqlite.prepare(
      "SELECT number, file_count AS fileCount, total_bytes AS totalBytes FROM bucket_versions WHERE bucket_id = ?1 ORDER BY number DESC LIMIT 1",
    ),
    fileByPath: sqlite.prepare(`SELECT ${FILE_COLUMNS} FROM files WHERE bucket_id = ?1 AND path = ?2`),
    // Files inside folder <path> (bounds from folderBounds): a first one, or all of them.
    fileUnder: sqlite.prepare("SELECT path FROM files WHERE bucket_id = ?1 AND path > ?2 AND path < ?3 LIMIT 1"),
    filesUnder: sqlite.prepare("SELECT path FROM files WHERE bucket_id = ?1 AND path > ?2 AND path < ?3"),
    fileIdTaken: sqlite.prepare("SELECT id FROM files WHERE id = ?1"),
    deleteFile: sqlite.prepare("DELETE FROM files WHERE id = ?1"),
    updateFile: sqlite.prepare(
      "UPDATE files SET sha256 = ?2, size = ?3, content_type = ?4, md5 = ?5, version_count = ?6, bucket_version = ?7, updated_at = ?8 WHERE id = ?1",
    ),
    insertFile: sqlite.prepare(
      "INSERT INTO files (id, bucket_id, path, sha256, size, content_type, md5, version_count, bucket_version, created_at, updated_at) " +
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    ),
    insertChange: sqlite.prepare(
      "INSERT INTO file_changes (bucket_id, path, version, file_id, sha256, size, content_type, md5) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    ),
    insertVersion: sqlite.prepare(
      "INSERT INTO bucket_versions (id, bucket_id, number, kind, comment, author, changed_count, file_count, total_bytes, restored_from, created_at) " +
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    ),
    bumpRevision: sqlite.prepare("UPDATE buckets SET revision = revision + 1, updated_at = ?2 WHERE id = ?1"),
  };
  cache.set(sqlite, s);
  return s;
}

/** Every path inside folder `path` sorts after "<path>/" and before "<path>0" ("0" follows "/"). */
export const folderBounds = (path: string): [string, string] => [`${path}/`, `${path}0`];
