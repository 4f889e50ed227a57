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
    provider: text("provider", { enum: ["git", "github"] }).notNull(),
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
    /** provider github: the app installation that grants access (its tokens are minted per sync). */
    githubInstallationId: integer("github_installation_id"),
    /** provider github: the repository's id and owner/name on GitHub (webhooks name both). */
    githubRepositoryId: integer("github_repository_id"),
    githubRepository: text("github_repository"),
  },
  (t) => [uniqueIndex("git_sync_bucket").on(t.bucketId), index("git_sync_due").on(t.state, t.nextPollAt)],
);

/**
 * GitHub App installations linked to a Pier account: only after the person linking it proved,
 * through GitHub's user authorization, that they can see it (docs/git-sync.md, GitHub App).
 */
export const githubInstallations = sqliteTable(
  "github_installations",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    installationId: integer("installation_id").notNull(),
    /** The GitHub user or organization the app is installed on. */
    targetLogin: text("target_login").notNull(),
    targetType: text("target_type").notNull(),
    /** active; suspended or deleted when GitHub says so (connections stop with a clear error). */
    state: text("state", { enum: ["active", "suspended", "deleted"] }).notNull(),
    linkedByUserId: text("linked_by_user_id"),
    /**
     * GitHub ids of the installation's repositories that the GitHub user who linked it can see
     * (GET /user/installations/{id}/repositories), plus those Pier created for this account. Only
     * these may be connected; null (linked before this was kept) allows none until linked again.
     */
    visibleRepositoryIds: text("visible_repository_ids", { mode: "json" }).$type<number[]>(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("github_installation_account").on(t.accountId, t.installationId), index("github_installation_id").on(t.installationId)],
);

/** One-time, expiring `state` of an install/authorize round trip, bound to the browser session that started it. */
export const githubSetupStates = sqliteTable("github_setup_states", {
  /** SHA-256 of the state value (the value itself is only in the browser's round trip). */
  id: text("id").primaryKey(),
  sessionId: text("session_id").notNull(),
  userId: text("user_id").notNull(),
  accountId: text("account_id").notNull(),
  bucketId: text("bucket_id").notNull(),
  expiresAt: text("expires_at").notNull(),
  createdAt: text("created_at").notNull(),
});

/**
 * A GitHub user's authorization of the app, kept for one Pier account so that Pier can create
 * repositories in that user's personal account (POST /user/repos needs a user token). Expiring
 * user tokens (the default): only the refresh token is kept, rotated at every use. Apps that opted
 * out of expiry: the non-expiring access token is kept instead. Both sealed with the instance key,
 * bound to the row id; never returned or logged (docs/git-sync.md, GitHub App).
 */
export const githubUserAuthorizations = sqliteTable(
  "github_user_authorizations",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    githubUserId: integer("github_user_id").notNull(),
    githubLogin: text("github_login").notNull(),
    /** Sealed refresh token (expiring user tokens), or null. */
    refreshTokenSealed: text("refresh_token_sealed"),
    /** When GitHub stops accepting the refresh token (six months after it was issued). */
    refreshTokenExpiresAt: text("refresh_token_expires_at"),
    /** Sealed non-expiring access token (apps that opted out of expiring user tokens), or null. */
    accessTokenSealed: text("access_token_sealed"),
    linkedByUserId: text("linked_by_user_id"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("github_user_authorization_account").on(t.accountId, t.githubUserId)],
);
