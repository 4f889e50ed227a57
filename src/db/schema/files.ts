// Files, bucket versions, upload sessions and file locks.
//
// Version history is a change log: every committed change appends one `bucket_versions` row
// and one `file_changes` row per changed path (blob or deletion). A version therefore costs
// O(changed paths). The snapshot of version N is, per path, the newest change at or before N
// that is not a deletion; the (bucket, path, version) index makes that a bounded index walk.
// `files` holds the current state (the newest snapshot) for listing and lookups.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { buckets } from "./buckets";

export const files = sqliteTable(
  "files",
  {
    id: text("id").primaryKey(),
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id, { onDelete: "cascade" }),
    /** Bucket-relative, NFC-normalized, no leading slash (see features/files/paths.ts). */
    path: text("path").notNull(),
    sha256: text("sha256").notNull(),
    size: integer("size").notNull(),
    contentType: text("content_type").notNull(),
    /** Base64 MD5, as sent in Content-MD5. */
    md5: text("md5").notNull(),
    /** How many contents this path has had (1 on first upload). */
    versionCount: integer("version_count").notNull().default(1),
    /** Bucket version number that last changed this file. */
    bucketVersion: integer("bucket_version").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("files_bucket_path").on(t.bucketId, t.path), index("files_sha256").on(t.sha256)],
);

export const bucketVersions = sqliteTable(
  "bucket_versions",
  {
    id: text("id").primaryKey(),
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id, { onDelete: "cascade" }),
    /** 1, 2, 3 ... per bucket. */
    number: integer("number").notNull(),
    kind: text("kind").notNull(),
    comment: text("comment").notNull().default(""),
    /** Credential (key/session/system name) that made the change. */
    author: text("author").notNull(),
    changedCount: integer("changed_count").notNull(),
    fileCount: integer("file_count").notNull(),
    totalBytes: integer("total_bytes").notNull(),
    restoredFrom: text("restored_from"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("bucket_versions_number").on(t.bucketId, t.number)],
);

export const fileChanges = sqliteTable(
  "file_changes",
  {
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id, { onDelete: "cascade" }),
    path: text("path").notNull(),
    version: integer("version").notNull(),
    /** File id the path had (kept so a restore brings the same id back). */
    fileId: text("file_id").notNull(),
    /** null: the path was deleted in this version. */
    sha256: text("sha256"),
    size: integer("size"),
    contentType: text("content_type"),
    md5: text("md5"),
  },
  (t) => [
    primaryKey({ columns: [t.bucketId, t.path, t.version] }),
    index("file_changes_version").on(t.bucketId, t.version),
    index("file_changes_sha256").on(t.sha256),
  ],
);

export const uploadSessions = sqliteTable(
  "upload_sessions",
  {
    id: text("id").primaryKey(),
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    credentialId: text("credential_id").notNull(),
    /** open -> finalizing -> completed | cancelled | expired. */
    status: text("status", { enum: ["open", "finalizing", "completed", "cancelled", "expired"] }).notNull(),
    deleteMissing: integer("delete_missing", { mode: "boolean" }).notNull(),
    expectedFileCount: integer("expected_file_count").notNull(),
    /** "single" sessions are the one-file sessions the attach step opens and closes itself. */
    kind: text("kind", { enum: ["batch", "single"] })
      .notNull()
      .default("batch"),
    committedCount: integer("committed_count").notNull().default(0),
    deletedCount: integer("deleted_count").notNull().default(0),
    lastVersionId: text("last_version_id"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    closedAt: text("closed_at"),
  },
  (t) => [
    index("upload_sessions_bucket").on(t.bucketId, t.status),
    index("upload_sessions_due").on(t.status, t.expiresAt),
    index("upload_sessions_closed").on(t.status, t.closedAt),
  ],
);

/** One declared file: of a session, or of a direct upload (session null). */
export const uploadEntries = sqliteTable(
  "upload_entries",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").references(() => uploadSessions.id, { onDelete: "cascade" }),
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull(),
    credentialId: text("credential_id").notNull(),
    path: text("path").notNull(),
    sha256: text("sha256").notNull(),
    size: integer("size").notNull(),
    md5: text("md5").notNull(),
    contentType: text("content_type").notNull(),
    /** pending: declared, bytes may or may not be stored yet; finalized: committed to the bucket. */
    status: text("status", { enum: ["pending", "finalized"] }).notNull(),
    createdAt: text("created_at").notNull(),
    /**
     * A direct or publish upload's own expiry. An entry of an upload session lives as long as its
     * session (upload_sessions.expires_at, slid by every call); this keeps the session's expiry at
     * declare time, which bounds the entry's PUT URL.
     */
    expiresAt: text("expires_at").notNull(),
    finalizedAt: text("finalized_at"),
    /**
     * When the bytes of THIS entry were PUT and verified. An entry may be committed only when this
     * is set, or when its account already held the same content (dedupe within the account): a
     * blob stored by someone else is never proof that this account has the bytes.
     */
    receivedAt: text("received_at"),
  },
  (t) => [
    index("upload_entries_session").on(t.sessionId, t.status, t.path),
    // A finalize reads a session's pending entries a chunk at a time, in declare order.
    index("upload_entries_session_order").on(t.sessionId, t.status, t.createdAt, t.id),
    index("upload_entries_sha256").on(t.sha256),
    index("upload_entries_due").on(t.status, t.expiresAt),
    index("upload_entries_finalized").on(t.status, t.finalizedAt),
    // Bucket delete counts and removes a bucket's entries (direct uploads have no session).
    index("upload_entries_bucket").on(t.bucketId),
  ],
);

export const fileLocks = sqliteTable(
  "file_locks",
  {
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id, { onDelete: "cascade" }),
    path: text("path").notNull(),
    holderId: text("holder_id").notNull(),
    message: text("message").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.bucketId, t.path] })],
);
