// OAuth 2.1 authorization server state: registered clients, connections (grants), pending
// device authorizations, authorization codes and tokens. Every secret (device code,
// authorization code, access and refresh token) is stored as its SHA-256 only.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, apiKeys, users } from "./accounts";

export const oauthClients = sqliteTable("oauth_clients", {
  /** `mcp_client_` + random. Public clients only: there is no client secret. */
  id: text("id").primaryKey(),
  clientName: text("client_name").notNull(),
  redirectUris: text("redirect_uris", { mode: "json" }).$type<string[]>().notNull().default([]),
  grantTypes: text("grant_types", { mode: "json" }).$type<string[]>().notNull().default([]),
  responseTypes: text("response_types", { mode: "json" }).$type<string[]>().notNull().default([]),
  createdAt: text("created_at").notNull(),
});

/** A connection: one user's approval of one client on one account. Revoking it kills its tokens and key. */
export const oauthGrants = sqliteTable(
  "oauth_grants",
  {
    id: text("id").primaryKey(),
    clientId: text("client_id")
      .notNull()
      .references(() => oauthClients.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    flow: text("flow", { enum: ["device_code", "authorization_code"] }).notNull(),
    /** The space-separated OAuth scope granted, e.g. `pier:mcp bucket_admin`. */
    scope: text("scope").notNull(),
    permissionScope: text("permission_scope", { enum: ["bucket_read", "bucket_write", "bucket_admin"] }).notNull(),
    /** The durable key handed out with a device-code token response (pier_api_key). */
    apiKeyId: text("api_key_id").references(() => apiKeys.id, { onDelete: "set null" }),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
    revokedAt: text("revoked_at"),
    revokedReason: text("revoked_reason"),
  },
  (t) => [index("oauth_grants_account").on(t.accountId)],
);

export const oauthDeviceCodes = sqliteTable(
  "oauth_device_codes",
  {
    deviceCodeHash: text("device_code_hash").primaryKey(),
    /** Normalized (no dash, upper case); unique among live codes. */
    userCode: text("user_code").notNull(),
    clientId: text("client_id")
      .notNull()
      .references(() => oauthClients.id, { onDelete: "cascade" }),
    scope: text("scope").notNull(),
    status: text("status", { enum: ["pending", "approved", "denied", "consumed"] })
      .notNull()
      .default("pending"),
    intervalSeconds: integer("interval_seconds").notNull(),
    lastPolledAt: text("last_polled_at"),
    grantId: text("grant_id").references(() => oauthGrants.id, { onDelete: "cascade" }),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [uniqueIndex("oauth_device_codes_user_code").on(t.userCode)],
);

export const oauthAuthCodes = sqliteTable("oauth_auth_codes", {
  codeHash: text("code_hash").primaryKey(),
  clientId: text("client_id")
    .notNull()
    .references(() => oauthClients.id, { onDelete: "cascade" }),
  grantId: text("grant_id")
    .notNull()
    .references(() => oauthGrants.id, { onDelete: "cascade" }),
  redirectUri: text("redirect_uri").notNull(),
  codeChallenge: text("code_challenge").notNull(),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
  usedAt: text("used_at"),
});

export const oauthTokens = sqliteTable(
  "oauth_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    id: text("id").notNull(),
    kind: text("kind", { enum: ["access", "refresh"] }).notNull(),
    /** The family: every token of a grant dies with it (revocation, refresh-token reuse). */
    grantId: text("grant_id")
      .notNull()
      .references(() => oauthGrants.id, { onDelete: "cascade" }),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    /** Refresh tokens: set when rotated; presenting it again is reuse. */
    usedAt: text("used_at"),
  },
  (t) => [index("oauth_tokens_grant").on(t.grantId)],
);

/**
 * Agent activity: who called with which credential, as the agent identified itself (User-Agent,
 * X-Pier-Agent*). One row per credential and identity, counting requests; readable by the
 * account owner.
 */
export const agentActivity = sqliteTable(
  "agent_activity",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    credentialKind: text("credential_kind", { enum: ["api_key", "oauth"] }).notNull(),
    credentialId: text("credential_id").notNull(),
    userId: text("user_id"),
    /** sha256 of credential + identity fields: the upsert key. */
    fingerprint: text("fingerprint").notNull(),
    userAgent: text("user_agent").notNull().default(""),
    agent: text("agent").notNull().default(""),
    agentClient: text("agent_client").notNull().default(""),
    agentVersion: text("agent_version").notNull().default(""),
    runId: text("run_id").notNull().default(""),
    project: text("project").notNull().default(""),
    task: text("task").notNull().default(""),
    requestCount: integer("request_count").notNull().default(0),
    lastMethod: text("last_method").notNull().default(""),
    lastPath: text("last_path").notNull().default(""),
    firstSeenAt: text("first_seen_at").notNull(),
    lastSeenAt: text("last_seen_at").notNull(),
  },
  (t) => [uniqueIndex("agent_activity_fingerprint").on(t.fingerprint), index("agent_activity_account").on(t.accountId, t.lastSeenAt)],
);

/** One-time dashboard sign-in links handed to agents (`browser_login_link`). */
export const loginLinks = sqliteTable("login_links", {
  tokenHash: text("token_hash").primaryKey(),
  userId: text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  accountId: text("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  /** The key or connection that asked for it (audit). */
  credentialId: text("credential_id").notNull(),
  redirectPath: text("redirect_path").notNull(),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
  usedAt: text("used_at"),
});

/** Legacy email-code agent login: one row per code sent (only its SHA-256 is kept). */
export const agentLoginCodes = sqliteTable(
  "agent_login_codes",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").notNull(),
    attempts: integer("attempts").notNull().default(0),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
  },
  (t) => [index("agent_login_codes_email").on(t.email, t.createdAt)],
);
