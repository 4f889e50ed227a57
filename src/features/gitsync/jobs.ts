// Background work of git sync: the sync job (one connection, one run) and the poll that queues
// it — when the branch is due a check (webhook-less hosts, with backoff while nothing changes)
// or when the bucket changed and then stayed quiet for a moment (bucket changes are batched).
import { and, eq, inArray, isNull, lte, or } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { findPublication, requestPublish } from "../publish";
import { gitSyncConnections } from "../../db/schema";
import { latestVersion } from "../files";
import type { JobHandler } from "../../jobs/runner";
import { runSync, SyncFailure, asSyncFailure, type Side } from "./engine";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { removeStore } from "./remote";
import { compactIfGrown, recoverStore, type Compaction } from "./compact";
import { connectionById, updateConnection, type ConnectionRow } from "./store";
import { forgetInstallationToken } from "./github-app";

export const GIT_SYNC_JOB = "gitsync.sync";
export const GIT_POLL_JOB = "gitsync.poll";
/** Bucket changes wait this long for more changes before they are committed together. */
export const BUCKET_DEBOUNCE_MS = 10_000;
export const MAX_POLL_MS = 10 * 60_000;
/** Longer than any sync's bounded requests can take: a row still "syncing" after this was abandoned. */
const STUCK_SYNC_MS = 30 * 60_000;

const after = (deps: Deps, ms: number) => new Date(deps.clock.now().getTime() + ms).toISOString();

export const gitSyncJob: JobHandler = {
  maxAttempts: 1,
  async run(deps, payload) {
    const conn = connectionById(deps, String(payload.connection_id ?? ""));
    if (!conn || conn.state === "not_connected") return { skipped: "not connected" };
    const choices = (payload.choices ?? {}) as Record<string, Side>;
    updateConnection(deps, conn.id, { state: "syncing" });
    const now = deps.clock.now().toISOString();
    const base = deps.config.gitPollInterval * 1000;
    try {
      const r = await runSync(deps, conn, choices);
      // The next check counts from when this one finished.
      const done = deps.clock.now().toISOString();
      const moved = r.pulled + r.pushed > 0 || r.commit !== conn.lastCommit;
      const interval = moved ? base : Math.min(conn.pollIntervalMs * 2, MAX_POLL_MS);
      // The row may have been deleted (disconnect) while the sync ran: update nothing then.
      updateConnection(deps, conn.id, {
        state: r.state,
        conflicts: r.conflicts,
        ...(r.state === "in_sync" ? { lastCommit: r.commit, lastVersion: r.version, lastSyncAt: done, initialDirection: null } : {}),
        lastCheckAt: done,
        lastError: null,
        failures: 0,
        // Waiting changes: bucket paths not pushed (ahead), repository paths not taken in (behind).
        ahead: r.state === "conflict" ? r.pushed : 0,
        behind: r.state === "conflict" ? r.pulled : 0,
        pollIntervalMs: interval,
        nextPollAt: new Date(Date.parse(done) + interval).toISOString(),
      });
      const republished = r.state === "in_sync" && r.pulled > 0 && conn.autoPublish ? await republish(deps, conn) : false;
      const compacted = r.state === "in_sync" && moved && r.commit !== null ? await compactStore(deps, conn, r.commit) : null;
      return { state: r.state, pulled: r.pulled, pushed: r.pushed, conflicts: r.conflicts.length, republished, ...(compacted ? { compacted } : {}) };
    } catch (e) {
      const failure = githubWording(deps, conn, e instanceof SyncFailure ? e : asSyncFailure(e));
      if (!(e instanceof SyncFailure)) deps.log.warn("git sync failed", { connection: conn.id, error: e });
      const failures = conn.failures + 1;
      // Retry with backoff: the poll interval doubled per consecutive failure, at most 10 minutes.
      const wait = Math.min(base * 2 ** (failures - 1), MAX_POLL_MS);
      updateConnection(deps, conn.id, {
        state: "error",
        lastError: { code: failure.code, message: failure.message, at: now, ...(failure.details ? { details: failure.details } : {}) },
        lastCheckAt: now,
        failures,
        nextPollAt: after(deps, wait),
      });
      return { state: "error", code: failure.code };
    }
  },
};

/**
 * A refused token or a vanished repository means something else through the GitHub App: the
 * installation lost access to the repository, or the repository was deleted. The cached token is
 * dropped so that the next try mints a fresh one.
 */
function githubWording(deps: Deps, conn: ConnectionRow, f: SyncFailure): SyncFailure {
  if (conn.provider !== "github") return f;
  if (f.code === "auth_failed" || f.code === "repository_not_found") {
    if (conn.githubInstallationId) forgetInstallationToken(deps, conn.githubInstallationId);
    return new SyncFailure(
      "repository_access_removed",
      `GitHub refused access to ${conn.githubRepository ?? "the repository"}: it was deleted, renamed, or is no longer granted to the app's installation. Bucket data is unchanged.`,
    );
  }
  return f;
}

/**
 * Automatic republish after a sync brought changes in: the bucket's live main site is published
 * again with its current settings (deploy trigger git_sync). A refusal (rate limit, visibility
 * lock) is logged; the sync itself succeeded.
 */
async function republish(deps: Deps, conn: ConnectionRow): Promise<boolean> {
  const pub = findPublication(conn.bucketId, "main", deps.db);
  if (!pub || (pub.status !== "published" && pub.status !== "publishing")) return false;
  const actor: Actor = {
    kind: "api_key",
    credentialId: `system:git-sync:${conn.id}`,
    userId: null,
    accountId: conn.accountId,
    scope: "bucket_admin",
    bucketAccess: "selected",
    bucketPermissions: { [conn.bucketId]: "admin" },
    isAccountOwner: false,
    isInstanceAdmin: false,
  };
  try {
    await requestPublish(deps, actor, conn.bucketId, {}, "main", "git_sync");
    return true;
  } catch (e) {
    deps.log.warn("git sync: automatic republish refused", { connection: conn.id, error: e });
    return false;
  }
}

/** Queue the syncs that are due; cheap when nothing is (two indexed queries). */
export async function pollConnections(deps: Deps): Promise<{ queued: number }> {
  const now = deps.clock.now().toISOString();
  const quietSince = new Date(deps.clock.now().getTime() - BUCKET_DEBOUNCE_MS).toISOString();
  // A sync whose worker died mid-run (its job is not retried) leaves "syncing" behind: after a
  // while it counts as due again.
  const stuckBefore = new Date(deps.clock.now().getTime() - STUCK_SYNC_MS).toISOString();
  const live = inArray(gitSyncConnections.state, ["in_sync", "error", "conflict"]);
  const abandoned = and(eq(gitSyncConnections.state, "syncing"), lte(gitSyncConnections.updatedAt, stuckBefore));
  const dueRemote = deps.db
    .select({ id: gitSyncConnections.id })
    .from(gitSyncConnections)
    .where(or(and(live, or(isNull(gitSyncConnections.nextPollAt), lte(gitSyncConnections.nextPollAt, now))), abandoned))
    .all();
  // Buckets whose newest version is past the synced one and at least the debounce old.
  const dueLocal: { id: string }[] = [];
  const synced = deps.db
    .select({ id: gitSyncConnections.id, bucketId: gitSyncConnections.bucketId, lastVersion: gitSyncConnections.lastVersion })
    .from(gitSyncConnections)
    .where(eq(gitSyncConnections.state, "in_sync"))
    .all();
  for (const c of synced) {
    const v = latestVersion(c.bucketId, deps.db);
    if (v && v.number > (c.lastVersion ?? 0) && v.createdAt <= quietSince) dueLocal.push({ id: c.id });
  }
  const ids = new Set([...dueRemote, ...dueLocal].map((r) => r.id));
  for (const id of ids) deps.jobs.enqueue(GIT_SYNC_JOB, { connection_id: id, choices: {} }, { maxAttempts: 1, uniqueKey: `gitsync:${id}` });
  const removed = removeOrphanStores(deps);
  return { queued: ids.size, ...(removed ? { removed_stores: removed } : {}) };
}

/** The store's compaction after a sync that moved (compact.ts); a failure keeps the old store and is only logged. */
async function compactStore(deps: Deps, conn: ConnectionRow, commit: string): Promise<Compaction | null> {
  try {
    return await compactIfGrown(deps, conn.id, commit, conn.branch);
  } catch (e) {
    deps.log.warn("git sync: the object store was not compacted", { connection: conn.id, error: (e as Error).message });
    return null;
  }
}

/**
 * Object stores under <data-dir>/git whose connection is gone: a deleted bucket takes its
 * connection row with it (foreign key cascade), and its store would otherwise stay forever.
 * A store is created only by a sync of an existing row, so a folder without a row is garbage.
 */
export function removeOrphanStores(deps: Deps): number {
  const root = join(deps.config.dataDir, "git");
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return 0;
  }
  if (!names.length) return 0;
  const known = new Set(
    deps.db
      .select({ id: gitSyncConnections.id })
      .from(gitSyncConnections)
      .all()
      .map((r) => r.id),
  );
  let removed = 0;
  // A swap cut by a crash (compact.ts) left `<id>.old` without `<id>`: put it back first.
  for (const name of names) if (name.endsWith(".old") && known.has(name.slice(0, -4))) recoverStore(join(root, name.slice(0, -4)));
  for (const name of readdirSync(root)) {
    if (known.has(name) || !name.startsWith("gsc_")) continue;
    removeStore(deps, name);
    removed++;
  }
  return removed;
}
