// Publications and their immutable deploys. A deploy is written once (files, precompressed
// variants, ETags) and never changed; the live site switches by updating
// publications.current_deploy_id in one transaction, so a visitor never sees half of two deploys.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { buckets } from "./buckets";

export type PublicationKind = "main" | "preview";
export type SiteMode = "static" | "spa";
export type AccessMode = "public" | "password" | "require_email";
export type PublishState = "queued" | "processing" | "ready" | "failed" | "unpublishing";
export type PublicationStatus = "publishing" | "published" | "unpublishing" | "unpublished";
export type DeployTrigger = "api" | "cli" | "mcp" | "dashboard" | "git_sync" | "restore";

export const publications = sqliteTable(
  "publications",
  {
    id: text("id").primaryKey(),
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["main", "preview"] }).notNull(),
    /** DNS label; unique per kind. A preview is served at preview-<slug>. */
    publicSlug: text("public_slug").notNull(),
    title: text("title").notNull().default(""),
    description: text("description").notNull().default(""),
    status: text("status", { enum: ["publishing", "published", "unpublishing", "unpublished"] }).notNull(),
    publishState: text("publish_state", { enum: ["queued", "processing", "ready", "failed", "unpublishing"] }).notNull(),
    publishError: text("publish_error"),
    publishEnqueuedAt: text("publish_enqueued_at"),
    publishStartedAt: text("publish_started_at"),
    publishCompletedAt: text("publish_completed_at"),
    expiresAt: text("expires_at"),
    siteMode: text("site_mode", { enum: ["static", "spa"] })
      .notNull()
      .default("static"),
    accessMode: text("access_mode", { enum: ["public", "password", "require_email"] })
      .notNull()
      .default("public"),
    /** argon2id (Bun.password); checked by the gate. */
    passwordHash: text("password_hash"),
    /** The same password sealed with the site-cookie key, so the owner can copy it later. */
    passwordSealed: text("password_sealed"),
    /** Bumped on every access change; site cookies bind it, so rotation signs everyone out. */
    accessVersion: integer("access_version").notNull().default(1),
    trackingEnabled: integer("tracking_enabled", { mode: "boolean" }).notNull().default(true),
    analyticsEnabled: integer("analytics_enabled", { mode: "boolean" }).notNull().default(true),
    clientEventsEnabled: integer("client_events_enabled", { mode: "boolean" }).notNull().default(true),
    /** /about serves about.html; /about.html redirects to /about (docs/site-rules.md). */
    cleanUrls: integer("clean_urls", { mode: "boolean" }).notNull().default(true),
    currentDeployId: text("current_deploy_id"),
    publishedFilesCount: integer("published_files_count").notNull().default(0),
    /** The last accepted publish request, re-run by retry. */
    publishRequest: text("publish_request", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("publications_kind_slug").on(t.kind, t.publicSlug),
    uniqueIndex("publications_bucket_kind").on(t.bucketId, t.kind),
    index("publications_account").on(t.accountId),
  ],
);

export const deploys = sqliteTable(
  "deploys",
  {
    id: text("id").primaryKey(),
    publicationId: text("publication_id")
      .notNull()
      .references(() => publications.id, { onDelete: "cascade" }),
    /** The bucket version the build read (null until the build reads from versions). */
    bucketVersionId: text("bucket_version_id"),
    /** publication_root_directory the build applied ("" = whole bucket); a settings-only republish reuses the deploy only when it matches. */
    rootDirectory: text("root_directory").notNull().default(""),
    fileCount: integer("file_count").notNull(),
    totalBytes: integer("total_bytes").notNull(),
    createdAt: text("created_at").notNull(),
    /** `_redirects` and `_headers` compiled when the deploy was built (null: neither file). */
    siteRules: text("site_rules", { mode: "json" }).$type<Record<string, unknown>>(),
    /** Their counts and warnings, as the publication shows them. */
    siteRulesSummary: text("site_rules_summary", { mode: "json" }).$type<Record<string, unknown>>(),

    /** 1, 2, 3... per publication: orders deploys even when two share a timestamp. */
    sequence: integer("sequence").notNull().default(0),
    /** What asked for the build: api, cli, mcp, dashboard, git_sync or restore. */
    trigger: text("trigger", { enum: ["api", "cli", "mcp", "dashboard", "git_sync", "restore"] })
      .notNull()
      .default("api"),
    /** Set when the deploy fell out of the kept history: its file rows are gone, its blobs free to collect. */
    prunedAt: text("pruned_at"),
  },
  (t) => [index("deploys_publication").on(t.publicationId, t.createdAt), index("deploys_publication_sequence").on(t.publicationId, t.sequence)],
);

export const deployFiles = sqliteTable(
  "deploy_files",
  {
    deployId: text("deploy_id")
      .notNull()
      .references(() => deploys.id, { onDelete: "cascade" }),
    /** Site-relative, normalized, no leading slash. */
    path: text("path").notNull(),
    blobSha256: text("blob_sha256").notNull(),
    size: integer("size").notNull(),
    contentType: text("content_type").notNull(),
    /** Strong ETag of the identity representation (quoted). */
    etag: text("etag").notNull(),
    gzipSha256: text("gzip_sha256"),
    gzipSize: integer("gzip_size"),
    brSha256: text("br_sha256"),
    brSize: integer("br_size"),
  },
  (t) => [primaryKey({ columns: [t.deployId, t.path] }), index("deploy_files_blob").on(t.blobSha256)],
);

/** Failed gate attempts per site and client (or "*" for the site-wide cap), in a window. */
export const siteGateAttempts = sqliteTable(
  "site_gate_attempts",
  {
    publicationId: text("publication_id")
      .notNull()
      .references(() => publications.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["password", "email_send", "code"] }).notNull(),
    clientKey: text("client_key").notNull(),
    failures: integer("failures").notNull(),
    windowStartedAt: text("window_started_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.publicationId, t.kind, t.clientKey] })],
);

/** One-time codes for require_email sites; only an HMAC of the code is stored. */
export const siteEmailCodes = sqliteTable(
  "site_email_codes",
  {
    id: text("id").primaryKey(),
    publicationId: text("publication_id")
      .notNull()
      .references(() => publications.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    /**
     * The inbox the address reaches (mailboxOf: no `+tag`, and Gmail's dots and googlemail.com
     * folded): mail budgets and "a code was sent before" count per inbox, not per spelling.
     */
    mailbox: text("mailbox").notNull().default(""),
    codeHash: text("code_hash").notNull(),
    attempts: integer("attempts").notNull().default(0),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
    // The publication's access_version when the code was made: a code opens the site only under
    // the access settings it was asked under. Codes made before this column carry 0, which no
    // publication has (versions start at 1), so they are refused.
    accessVersion: integer("access_version").notNull().default(0),
  },
  (t) => [
    index("site_email_codes_pub_mailbox").on(t.publicationId, t.mailbox),
    // The per-recipient mail cap counts one inbox's codes across all sites, by time.
    index("site_email_codes_mailbox").on(t.mailbox, t.createdAt),
  ],
);

/** Visitors who passed a require_email gate (read through /publications/:id/access). */
export const siteLeads = sqliteTable(
  "site_leads",
  {
    publicationId: text("publication_id")
      .notNull()
      .references(() => publications.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    firstAccessAt: text("first_access_at").notNull(),
    lastAccessAt: text("last_access_at").notNull(),
    accessCount: integer("access_count").notNull().default(1),
  },
  (t) => [primaryKey({ columns: [t.publicationId, t.email] })],
);

/** Account-specific Auto-Index template (must contain {{files}}). */
export const autoIndexTemplates = sqliteTable("autoindex_templates", {
  accountId: text("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  template: text("template").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/**
 * Folder publishes (pus_): a manifest checked against the bucket's current files, upload
 * descriptors for the changed ones, then one finalize that writes the files and queues the
 * publication. `bucket_revision` is the bucket's revision at creation: any other write since
 * makes the session stale.
 */
export const publishSessions = sqliteTable(
  "publish_sessions",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id, { onDelete: "cascade" }),
    credentialId: text("credential_id").notNull(),
    kind: text("kind", { enum: ["main", "preview"] })
      .notNull()
      .default("main"),
    status: text("status", { enum: ["pending", "finalized", "expired"] }).notNull(),
    bucketRevision: integer("bucket_revision").notNull(),
    deleteMissing: integer("delete_missing", { mode: "boolean" }).notNull(),
    /** [{ path, size, md5, sha256, contentType, entryId? }] */
    files: text("files", { mode: "json" }).$type<PublishSessionFile[]>().notNull(),
    /** The publish request fields saved for finalize. */
    publishRequest: text("publish_request", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    publicationId: text("publication_id"),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    finalizedAt: text("finalized_at"),
  },
  (t) => [index("publish_sessions_account").on(t.accountId, t.status)],
);

export interface PublishSessionFile {
  path: string;
  size: number;
  md5: string;
  sha256: string;
  contentType: string;
  /** Upload entry (descriptor) when the bytes must be uploaded. */
  entryId: string | null;
}

/**
 * A public slug its bucket let go (a rename, the bucket deleted), reserved for the account that
 * had it until `held_until` (D316): an old link must not start serving another account's site.
 * No foreign keys: the hold outlives the bucket, and the account only names who may take it back.
 */
export const slugHolds = sqliteTable(
  "slug_holds",
  {
    slug: text("slug").primaryKey(),
    accountId: text("account_id").notNull(),
    releasedAt: text("released_at").notNull(),
    heldUntil: text("held_until").notNull(),
  },
  // An account's holds, newest first: the per-account cap keeps the newest (SLUG_HOLDS_PER_ACCOUNT).
  (t) => [index("slug_holds_account").on(t.accountId, t.releasedAt)],
);
