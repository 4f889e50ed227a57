// What every service receives: the process's dependencies (never globals) and, per request,
// the actor on whose behalf it acts.
import type { Database } from "bun:sqlite";
import type { BlobStore } from "../blobs/store";
import type { Config, Urls } from "../config";
import type { Db } from "../db/client";
import type { JobQueue } from "../jobs/queue";
import type { LRUCache } from "lru-cache";
import type { PlanCatalog } from "../features/accounts/plans";
import type { SigninGuard } from "../features/accounts/signin-limits";
import type { ActivityRecorder } from "../features/agent-auth/activity";
import type { AnalyticsRecorder } from "../features/analytics/recorder";
import type { EmailCodeLimits } from "../features/agent-auth/email-code";
import type { Mailer } from "../features/mail/outbound";
import type { PublishLimiters } from "../features/publish/limits";
import type { SiteChangeListener } from "../features/publish/events";
import type { Clock } from "./clock";
import type { SecretBox } from "./crypto";
import type { Logger } from "./log";
import type { PierMetrics } from "./pier-metrics";

export interface Deps {
  config: Config;
  urls: Urls;
  db: Db;
  sqlite: Database;
  blobs: BlobStore;
  jobs: JobQueue;
  clock: Clock;
  log: Logger;
  secrets: SecretBox;
  plans: PlanCatalog;
  // Per-process state, built once in createDeps (src/runtime.ts) — never module globals, so two
  // Piers in one test process stay apart.
  /** Agent activity buffer shared by the REST hook and the MCP endpoint. */
  agentActivity: ActivityRecorder;
  /** Agent email-code limits: codes mailed per address and client, wrong codes per client. */
  emailCodesSent: EmailCodeLimits;
  /** Per-account publish and upload-control throttles. */
  publishLimiters: PublishLimiters;
  /** Told when a publication's live state changed (the site server drops its cached lookup). */
  siteChangeListeners: Set<SiteChangeListener>;
  /** Outbound mail: the SMTP relay (one connection pool) or the outbox table. */
  mailer: Mailer;
  /** TOTP codes already accepted, so one observed code cannot be replayed. */
  usedTotpSteps: LRUCache<string, true>;
  /** Sign-in guess limits per address and per IP. */
  signinGuard: SigninGuard;
  /**
   * Told when a file's bytes are handed out through the API (mail marks a message read). Files
   * sits below mail, so it announces the read instead of calling mail.
   */
  onFileRead: ((deps: Deps, actor: Actor, bucketId: string, path: string) => void)[];
  /** Automatic certificates (ACME); null when automatic HTTPS is off. */
  certificates: CertificatePort | null;
  /**
   * The active custom domain's hostname of a bucket's main site, or null. Set by the domains
   * feature, which sits above publish: publish asks through here for the public URL.
   */
  customDomainOf: (bucketId: string) => string | null;
  /** The same for a page of buckets in one query: bucket id -> hostname, active ones only. */
  customDomainsOf: (bucketIds: string[]) => Map<string, string>;

  /** Website analytics: the site server's in-memory counts and their periodic flush. */
  analytics: AnalyticsRecorder;

  /**
   * A bucket's `github_sync` and `github_sync_setup` fields. Set by the git sync feature, which
   * sits above buckets: the bucket presenter asks through here.
   */
  gitSyncOf: (bucket: import("../features/buckets").BucketRow) => { github_sync: unknown; github_sync_setup: unknown };

  /** Counters and gauges behind /metrics (preallocated; see src/core/pier-metrics.ts). */
  metrics: PierMetrics;

  /** How git sync resolves a user's git server name (tests answer their own); the system resolver when unset. */
  gitLookup?: (host: string) => Promise<string[]>;
}

/** What a feature may ask of automatic HTTPS for one host name (lower-case ASCII, no trailing dot). */
export interface CertificatePort {
  state(host: string): CertificateState;
  /** Start obtaining (or keep) a certificate for a host the host policy allows; returns at once. */
  request(host: string): void;
  /** Stop serving the host's certificate and delete it (e.g. its custom domain was removed). */
  forget(host: string): void;
  /** True when the operator's own certificate (--tls-cert) covers the host: it is served with that one, never ordered. */
  coveredByOperator(host: string): boolean;
}

export interface CertificateState {
  status: "none" | "pending" | "issued" | "failed";
  /** Why the last attempt failed, in words a user can act on; null otherwise. */
  reason: string | null;
  expiresAt: string | null;
}

export type Scope = "bucket_read" | "bucket_write" | "bucket_admin";
export type BucketPermission = "read" | "write" | "admin";
export const scopeRank: Record<Scope, number> = { bucket_read: 1, bucket_write: 2, bucket_admin: 3 };
export const scopeOfPermission: Record<BucketPermission, Scope> = { read: "bucket_read", write: "bucket_write", admin: "bucket_admin" };

/** Who is calling: an API key, an OAuth access token, or a signed-in browser session. */
export interface Actor {
  kind: "api_key" | "oauth" | "session";
  /** Key id, token id or session id: what holds locks and appears in audit logs. */
  credentialId: string;
  userId: string | null;
  accountId: string;
  scope: Scope;
  bucketAccess: "all" | "selected";
  bucketPermissions: Record<string, BucketPermission>;
  /** Account owner's own credential: may see stored site passwords and share text. */
  isAccountOwner: boolean;
  isInstanceAdmin: boolean;
}
