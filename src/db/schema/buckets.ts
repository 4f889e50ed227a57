import { index, primaryKey, sqliteTable, text, integer } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

export interface BucketDeletion {
  /** deleting_files / deleting_versions / deleting_other follow the bucket-owned table being emptied. */
  phase: "queued" | "deleting_files" | "deleting_versions" | "deleting_other" | "finishing" | "failed";
  total_files: number;
  total_versions: number;
  total_items: number;
  deleted_items: number;
  started_at: string;
  job_id: string;
  error?: string;
}

export const buckets = sqliteTable(
  "buckets",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    description: text("description").notNull().default(""),
    tagPaths: text("tag_paths", { mode: "json" }).$type<string[]>().notNull().default([]),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    archivedAt: text("archived_at"),
    /** Set while a background delete runs (the bucket stays visible with lock.kind = bucket_delete). */
    deletion: text("deletion", { mode: "json" }).$type<BucketDeletion>(),
    visibilityLockedAt: text("visibility_locked_at"),
    visibilityLockedBy: text("visibility_locked_by"),
    visibilityLockReason: text("visibility_lock_reason"),
    /** Bumped on every committed change; publish sessions and finalize use it to detect staleness. */
    revision: integer("revision").notNull().default(0),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("buckets_account").on(t.accountId, t.archivedAt)],
);

/** An explicit bucket lock (POST /buckets/:id/lock), held by one API key or session. */
export const bucketLocks = sqliteTable("bucket_locks", {
  bucketId: text("bucket_id")
    .primaryKey()
    .references(() => buckets.id, { onDelete: "cascade" }),
  id: text("id").notNull(),
  holderKind: text("holder_kind", { enum: ["api_key", "oauth", "session", "upload_session"] }).notNull(),
  holderId: text("holder_id").notNull(),
  message: text("message").notNull(),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
});

export const bucketVariables = sqliteTable(
  "bucket_variables",
  {
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    secret: integer("secret", { mode: "boolean" }).notNull(),
    /** Plain value for public variables; null for secrets. */
    value: text("value"),
    /** AES-GCM sealed value for secrets (never returned). */
    sealed: text("sealed"),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.bucketId, t.name] })],
);

/**
 * One row per deleted bucket, kept forever. Bucket ids are random (100 bits) so reuse is not
 * expected, but the tombstone makes it impossible (createBucket skips tombstoned ids) and lets
 * features that handed out addresses derived from a bucket (inbound email) answer "gone"
 * permanently instead of "unknown". No foreign key: it outlives the account row too.
 */
export const deletedBuckets = sqliteTable(
  "deleted_buckets",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    title: text("title").notNull(),
    deletedBy: text("deleted_by").notNull(),
    deletedAt: text("deleted_at").notNull(),
  },
  (t) => [index("deleted_buckets_account").on(t.accountId)],
);
