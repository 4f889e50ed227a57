// Git sync: one connection per bucket between the bucket and a branch of a git repository (any
// git host over HTTPS). The base of a three-way comparison is the pair (last synced commit, last
// synced bucket version): a path changed on both sides since then is a conflict.
// docs/git-sync.md has the states and the flow.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sql } from "drizzle-orm";
import { accounts } from "./accounts";
import { buckets } from "./buckets";

export type GitSyncState = "not_connected" | "pending" | "syncing" | "in_sync" | "conflict" | "error";

export interface GitSyncError {
  code: string;
  message: string;
  at: string;
  details?: Record<string, unknown>;
}

export const gitSyncConnections = sqliteTable(
  "git_sync_connections",
  {
    id: text("id").primaryKey(),
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    provider: text("provider", { enum: ["git"] }).notNull(),
    repositoryUrl: text("repository_url").notNull(),
    branch: text("branch").notNull(),
    /** Username for HTTP basic auth (empty: token only). */
    username: text("username").notNull().default(""),
    /** The password or token, sealed with the instance key (purpose "github", bound to the row id); null: public repository. */
    credentialSealed: text("credential_sealed"),
    /** Secret for the push webhook's HMAC, sealed the same way. */
    webhookSecretSealed: text("webhook_secret_sealed").notNull(),
    /** not_connected: credential saved on the page, no first direction chosen yet. */
    state: text("state", { enum: ["not_connected", "pending", "syncing", "in_sync", "conflict", "error"] }).notNull(),
    initialDirection: text("initial_direction", { enum: ["import", "export"] }),
    autoPublish: integer("auto_publish", { mode: "boolean" }).notNull().default(false),
    /** The commit both sides agreed on at the last sync (null before the first one). */
    lastCommit: text("last_commit"),
    /** The bucket version number both sides agreed on at the last sync (0: empty bucket). */
    lastVersion: integer("last_version"),
    lastSyncAt: text("last_sync_at"),
    lastCheckAt: text("last_check_at"),
    lastError: text("last_error", { mode: "json" }).$type<GitSyncError | null>(),
    /** Paths changed on both sides since the last sync (state conflict). */
    conflicts: text("conflicts", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    /** Changed paths waiting on each side at the last check. */
    ahead: integer("ahead").notNull().default(0),
    behind: integer("behind").notNull().default(0),
    /** Current polling interval (grows while nothing changes). */
    pollIntervalMs: integer("poll_interval_ms").notNull(),
    nextPollAt: text("next_poll_at"),
    /** Consecutive failed syncs (the retry backoff). */
    failures: integer("failures").notNull().default(0),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("git_sync_bucket").on(t.bucketId), index("git_sync_due").on(t.state, t.nextPollAt)],
);
