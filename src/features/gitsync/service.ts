// Git sync's rules: eligibility, saving a repository and its credential (browser only),
// connecting with a first direction, manual syncs and conflict choices, disconnecting.
import { eq } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { safeEqual } from "../../core/crypto";
import { ApiError } from "../../core/errors";
import { newId, randomToken } from "../../core/ids";
import { gitSyncConnections } from "../../db/schema";
import { transaction, type DbOrTx } from "../../db/tx";
import { entitlementsOf, getAccount } from "../accounts";
import { loadBucket, loadMutableBucket, type BucketRow } from "../buckets";
import { bucketFileCount, latestVersion } from "../files";
import { createHmac } from "node:crypto";
import { isPrivateLiteral } from "./addresses";
import { GIT_SYNC_JOB } from "./jobs";
import { removeStore } from "./remote";
import { connectionOf, connectionById, sealSecret, updateConnection, webhookSecretOf, type ConnectionRow } from "./store";
import { choiceOf, type Side } from "./engine";

export type BlockedReason = "feature_disabled" | "account_capability_unavailable" | "bucket_archived";

export function eligibility(deps: Deps, bucket: BucketRow): { eligible: boolean; blocked_reason: BlockedReason | null } {
  if (deps.config.gitSync === "off") return { eligible: false, blocked_reason: "feature_disabled" };
  if (bucket.archivedAt) return { eligible: false, blocked_reason: "bucket_archived" };
  const account = getAccount(deps, bucket.accountId);
  if (!entitlementsOf(deps, account).github_sync) return { eligible: false, blocked_reason: "account_capability_unavailable" };
  return { eligible: true, blocked_reason: null };
}

export function assertEligible(deps: Deps, bucket: BucketRow): void {
  const e = eligibility(deps, bucket);
  if (!e.eligible)
    throw new ApiError("GIT_SYNC_UNAVAILABLE", `Git sync is not available for this bucket (${e.blocked_reason}).`, { blocked_reason: e.blocked_reason });
}

/** https:// only (http:// when the operator allows it), no credentials, query or fragment in the URL. */
export function checkRepositoryUrl(deps: Deps, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ApiError("GIT_REMOTE_REFUSED", "The repository URL is not a valid URL.", { field: "repository_url" });
  }
  const httpOk = deps.config.gitAllowHttp === "on";
  if (url.protocol !== "https:" && !(url.protocol === "http:" && httpOk))
    throw new ApiError(
      "GIT_REMOTE_REFUSED",
      httpOk ? "Use an https:// or http:// repository URL." : "Use an https:// repository URL (plain http:// needs the operator's --git-allow-http).",
      { field: "repository_url" },
    );
  if (url.username || url.password)
    throw new ApiError("GIT_REMOTE_REFUSED", "Put the credential in its own field, not in the URL.", { field: "repository_url" });
  if (url.search || url.hash) throw new ApiError("GIT_REMOTE_REFUSED", "The repository URL cannot have a query or fragment.", { field: "repository_url" });
  // Names are checked after DNS resolution at every request (addresses.ts); a literal says it now.
  if (deps.config.gitAllowPrivateNetwork !== "on" && isPrivateLiteral(url))
    throw new ApiError(
      "GIT_REMOTE_REFUSED",
      "The repository URL points at a loopback, private or link-local address (the operator allows those with --git-allow-private-network).",
      { field: "repository_url" },
    );
  return url.toString().replace(/\/+$/, "");
}

export function checkBranch(raw: string | undefined): string {
  const branch = (raw ?? "main").trim() || "main";
  // git check-ref-format's rules, the ones that matter for a branch name typed into a form.
  if (
    !/^[A-Za-z0-9._/-]{1,200}$/.test(branch) ||
    branch.includes("..") ||
    branch.startsWith("/") ||
    branch.endsWith("/") ||
    branch.endsWith(".lock") ||
    branch.startsWith("-")
  )
    throw new ApiError("VALIDATION_FAILED", `"${branch.slice(0, 60)}" is not a usable branch name.`, { field: "branch" });
  return branch;
}

export interface SavedRepositoryInput {
  repository_url: string;
  branch?: string;
  username?: string;
  password?: string;
}

/**
 * Save the repository and its credential for a bucket (the dashboard's Git page: the API never
 * takes credentials). On a connected bucket only the credential may change (a revoked token
 * replaced); the repository stays.
 */
export function saveRepository(deps: Deps, actor: Actor, bucketId: string, input: SavedRepositoryInput): ConnectionRow {
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_admin" });
  assertEligible(deps, bucket);
  const url = checkRepositoryUrl(deps, input.repository_url);
  const branch = checkBranch(input.branch);
  const username = (input.username ?? "").trim().slice(0, 200);
  const password = input.password ?? "";
  if (password.length > 4096) throw new ApiError("VALIDATION_FAILED", "The token is too long.", { field: "password" });
  const now = deps.clock.now().toISOString();
  return transaction(deps.db, (tx) => {
    const existing = connectionOf(deps, bucket.id, tx);
    if (existing && existing.state !== "not_connected") {
      if (existing.repositoryUrl !== url || existing.branch !== branch)
        throw new ApiError("GIT_SYNC_ALREADY_CONNECTED", "The bucket is connected; disconnect it before choosing another repository or branch.");
      if (!password) throw new ApiError("VALIDATION_FAILED", "Enter the new token or password.", { field: "password" });
      return updateConnection(deps, existing.id, { username, credentialSealed: sealSecret(deps, existing.id, password), failures: 0, nextPollAt: now }, tx)!;
    }
    if (existing) {
      return updateConnection(
        deps,
        existing.id,
        { repositoryUrl: url, branch, username, credentialSealed: password ? sealSecret(deps, existing.id, password) : existing.credentialSealed },
        tx,
      )!;
    }
    const id = newId("gsc");
    return tx
      .insert(gitSyncConnections)
      .values({
        id,
        bucketId: bucket.id,
        accountId: bucket.accountId,
        provider: "git",
        repositoryUrl: url,
        branch,
        username,
        credentialSealed: password ? sealSecret(deps, id, password) : null,
        webhookSecretSealed: sealSecret(deps, id, randomToken(32)),
        state: "not_connected",
        pollIntervalMs: deps.config.gitPollInterval * 1000,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get();
  });
}

export function getConnection(deps: Deps, actor: Actor, bucketId: string): { bucket: BucketRow; connection: ConnectionRow | null } {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_read");
  const c = connectionOf(deps, bucket.id);
  return { bucket, connection: c && c.state !== "not_connected" ? c : null };
}

export function setupOf(deps: Deps, actor: Actor, bucketId: string) {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_read");
  return { bucket, saved: connectionOf(deps, bucket.id) ?? null, ...eligibility(deps, bucket) };
}

export interface ConnectInput {
  direction: "import" | "export";
  repository_url?: string;
  branch?: string;
}

/** Connect the bucket to a repository with an explicit first direction, and queue the first sync. */
export function connect(deps: Deps, actor: Actor, bucketId: string, input: ConnectInput): ConnectionRow {
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_admin" });
  assertEligible(deps, bucket);
  const url = input.repository_url ? checkRepositoryUrl(deps, input.repository_url) : null;
  if (!connectionOf(deps, bucket.id)) {
    // A public repository needs no saved credential (an import works; pushes need one).
    if (!url) throw new ApiError("GIT_SYNC_CREDENTIAL_REQUIRED");
    saveRepository(deps, actor, bucket.id, { repository_url: url, branch: input.branch });
  }
  return transaction(deps.db, (tx) => {
    const conn = connectionOf(deps, bucket.id, tx);
    if (!conn) throw new ApiError("GIT_SYNC_CREDENTIAL_REQUIRED");
    if (conn.state !== "not_connected") throw new ApiError("GIT_SYNC_ALREADY_CONNECTED");
    if ((url && url !== conn.repositoryUrl) || (input.branch && checkBranch(input.branch) !== conn.branch)) {
      throw new ApiError(
        "VALIDATION_FAILED",
        `The repository saved on the Git page is ${conn.repositoryUrl} (branch ${conn.branch}); omit repository_url and branch, or save the other repository there.`,
        { field: "repository_url" },
      );
    }
    return startFirstSync(deps, bucket, conn, input.direction, tx);
  });
}

/** Turn a saved (not_connected) row into a connection with a first direction, and queue its first sync. */
export function startFirstSync(deps: Deps, bucket: BucketRow, conn: ConnectionRow, direction: "import" | "export", tx: DbOrTx): ConnectionRow {
  const fileCount = bucketFileCount(deps, bucket.id);
  if (direction === "import" && fileCount > 0) throw new ApiError("GIT_SYNC_BUCKET_NOT_EMPTY", undefined, { file_count: fileCount });
  // The base of the first sync: nothing on the repository side; for an import the (empty)
  // bucket as it is, for an export nothing either, so every bucket file is new.
  const row = updateConnection(
    deps,
    conn.id,
    {
      state: "pending",
      initialDirection: direction,
      lastCommit: null,
      lastVersion: direction === "import" ? (latestVersion(bucket.id, tx)?.number ?? 0) : 0,
      lastError: null,
      conflicts: [],
      failures: 0,
      pollIntervalMs: deps.config.gitPollInterval * 1000,
      nextPollAt: null,
    },
    tx,
  )!;
  enqueueSync(deps, row, {}, tx);
  return row;
}

export function enqueueSync(deps: Deps, conn: ConnectionRow, choices: Record<string, Side>, db = deps.db): string {
  const hasChoices = Object.keys(choices).length > 0;
  return deps.jobs.enqueue(
    GIT_SYNC_JOB,
    { connection_id: conn.id, choices },
    { maxAttempts: 1, ...(hasChoices ? {} : { uniqueKey: `gitsync:${conn.id}` }) },
    db,
  );
}

export function patchConnection(deps: Deps, actor: Actor, bucketId: string, input: { auto_publish: boolean }): ConnectionRow {
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_admin" });
  const conn = connectionOf(deps, bucket.id);
  if (!conn || conn.state === "not_connected") throw new ApiError("GIT_SYNC_NOT_CONNECTED");
  return updateConnection(deps, conn.id, { autoPublish: input.auto_publish })!;
}

/**
 * Queue a sync now; with `resolutions`, a choice of side for every conflicting path, or with
 * `resolveAll` one side for all of them (a conflict can hold far more paths than a body can name).
 */
export function requestSync(
  deps: Deps,
  actor: Actor,
  bucketId: string,
  input: { resolutions?: Record<string, Side>; resolveAll?: Side },
): { connection: ConnectionRow; jobId: string } {
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_write" });
  assertEligible(deps, bucket);
  const conn = connectionOf(deps, bucket.id);
  if (!conn || conn.state === "not_connected") throw new ApiError("GIT_SYNC_NOT_CONNECTED");
  if (input.resolveAll !== undefined && input.resolutions !== undefined) {
    throw new ApiError("VALIDATION_FAILED", "Send either resolutions (a side per path) or resolve_all (one side for every path), not both.", {
      field: "resolve_all",
    });
  }
  const all = input.resolveAll;
  const choices = all === undefined ? (input.resolutions ?? {}) : Object.fromEntries(conn.conflicts.map((p) => [p, all]));
  const paths = Object.keys(choices);
  if (paths.length) {
    const conflicts = new Set(conn.conflicts);
    const missing = conn.conflicts.filter((p) => !Object.hasOwn(choices, p));
    const extra = paths.filter((p) => !conflicts.has(p));
    const bad = paths.filter((p) => !choiceOf(choices, p));
    if (missing.length || extra.length || bad.length)
      throw new ApiError("GIT_SYNC_CONFLICT_CHOICE", undefined, { missing: missing.slice(0, 100), unknown: extra.slice(0, 100), invalid: bad.slice(0, 100) });
  }
  const jobId = enqueueSync(deps, conn, choices);
  return { connection: conn, jobId };
}

/** Disconnect: the bucket and the repository both stay as they are. */
export function disconnect(deps: Deps, actor: Actor, bucketId: string): { disconnected: boolean } {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_admin");
  const conn = connectionOf(deps, bucket.id);
  if (!conn) return { disconnected: false };
  deps.db.delete(gitSyncConnections).where(eq(gitSyncConnections.id, conn.id)).run();
  removeStore(deps, conn.id);
  return { disconnected: true };
}

/**
 * A push notification: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`, as GitHub
 * and Gitea sign (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries).
 * A wrong or missing signature runs nothing and says nothing about the connection.
 */
export function receiveWebhook(deps: Deps, connectionId: string, rawBody: Uint8Array, signature: string | null): { queued: boolean } {
  const conn = connectionById(deps, connectionId);
  const secret = conn ? webhookSecretOf(deps, conn) : "unknown-connection-" + randomToken(16);
  const expected = `sha256=${createHmac("sha256", secret).update(rawBody).digest("hex")}`;
  if (!signature || !safeEqual(expected, signature) || !conn) throw new ApiError("GIT_WEBHOOK_SIGNATURE_INVALID");
  if (conn.state === "not_connected") return { queued: false };
  enqueueSync(deps, conn, {});
  return { queued: true };
}

/** A connection's own push webhook; GitHub App connections use the app's one webhook instead. */
export function webhookUrl(deps: Deps, conn: ConnectionRow): string | null {
  if (conn.provider === "github") return null;
  return `${deps.urls.baseUrl}/api/v1/git_sync/webhooks/${conn.id}`;
}

export { webhookSecretOf };
