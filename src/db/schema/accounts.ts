import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    displayName: text("display_name").notNull().default(""),
    isInstanceAdmin: integer("is_instance_admin", { mode: "boolean" }).notNull().default(false),
    /** TOTP seed sealed with the `totp` key; null when two-factor is off. */
    totpSealed: text("totp_sealed"),
    totpEnabledAt: text("totp_enabled_at"),
    lastLoginAt: text("last_login_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    /** Set by an instance admin: the user cannot sign in, and their keys and connections do not work. */
    disabledAt: text("disabled_at"),
  },
  (t) => [uniqueIndex("users_email_unique").on(t.email)],
);

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  plan: text("plan").notNull(),
  readOnly: integer("read_only", { mode: "boolean" }).notNull().default(false),
  readOnlyReason: text("read_only_reason"),
  /** Last signed-in dashboard visit; renews Free sites (API/CLI/MCP traffic does not). */
  lastDashboardVisitAt: text("last_dashboard_visit_at"),
  /** IANA time zone whose calendar days the account's analytics count in (docs/analytics.md). */
  timeZone: text("time_zone").notNull().default("UTC"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const memberships = sqliteTable(
  "memberships",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["owner", "admin", "member"] }).notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.userId] }), index("memberships_user").on(t.userId)],
);

export const sessions = sqliteTable(
  "sessions",
  {
    /** sha256 of the cookie token; the token itself is never stored. */
    tokenHash: text("token_hash").primaryKey(),
    id: text("id").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    accountId: text("account_id").references(() => accounts.id, { onDelete: "set null" }),
    remember: integer("remember", { mode: "boolean" }).notNull().default(false),
    userAgent: text("user_agent").notNull().default(""),
    ip: text("ip").notNull().default(""),
    createdAt: text("created_at").notNull(),
    lastSeenAt: text("last_seen_at").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [index("sessions_user").on(t.userId)],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    userId: text("user_id").references(() => users.id, { onDelete: "set null" }),
    label: text("label").notNull(),
    /** sha256 of the full `pier_...` key. */
    tokenHash: text("token_hash").notNull(),
    /** First characters, shown in lists so people can tell keys apart. */
    displayPrefix: text("display_prefix").notNull(),
    kind: text("kind", { enum: ["named", "agent", "owner"] }).notNull(),
    permissionScope: text("permission_scope", { enum: ["bucket_read", "bucket_write", "bucket_admin"] }).notNull(),
    bucketAccess: text("bucket_access", { enum: ["all", "selected"] })
      .notNull()
      .default("all"),
    /** JSON object bucket id -> read | write | admin (only for bucket_access = selected). */
    bucketPermissions: text("bucket_permissions", { mode: "json" }).$type<Record<string, "read" | "write" | "admin">>().notNull().default({}),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
    expiresAt: text("expires_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("api_keys_token_hash").on(t.tokenHash), index("api_keys_account").on(t.accountId)],
);

export const invites = sqliteTable(
  "invites",
  {
    id: text("id").primaryKey(),
    codeHash: text("code_hash").notNull(),
    email: text("email"),
    createdBy: text("created_by"),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
    usedBy: text("used_by"),
  },
  (t) => [uniqueIndex("invites_code_hash").on(t.codeHash)],
);

export const notifications = sqliteTable(
  "notifications",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    subject: text("subject").notNull(),
    body: text("body").notNull(),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    createdAt: text("created_at").notNull(),
    readAt: text("read_at"),
  },
  (t) => [index("notifications_account").on(t.accountId, t.createdAt)],
);
