// What every service receives: the process's dependencies (never globals) and, per request,
// the actor on whose behalf it acts.
import type { Database } from "bun:sqlite";
import type { BlobStore } from "../blobs/store";
import type { Config, Urls } from "../config";
import type { Db } from "../db/client";
import type { JobQueue } from "../jobs/queue";
import type { PlanCatalog } from "../features/accounts/plans";
import type { Clock } from "./clock";
import type { SecretBox } from "./crypto";
import type { Logger } from "./log";

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
