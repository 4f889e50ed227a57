// Bucket-level authorization, used by every feature that touches a bucket. The route already
// checked the credential's scope; here the bucket's account and per-bucket grants decide.
import { and, eq, sql, type Placeholder } from "drizzle-orm";
import type { Actor, BucketPermission, Deps, Scope } from "../../core/context";
import { scopeOfPermission, scopeRank } from "../../core/context";
import { ApiError } from "../../core/errors";
import { bucketLocks, buckets, deletedBuckets } from "../../db/schema";
import type { DbOrTx } from "../../db/tx";
import { isConnection, preparedPerDb } from "../../db/prepared";

export type BucketRow = typeof buckets.$inferSelect;

/** The widest scope the actor holds on this bucket (null: no access at all). */
export function effectiveScope(actor: Actor, bucketId: string): Scope | null {
  if (actor.bucketAccess === "all") return actor.scope;
  const grant: BucketPermission | undefined = actor.bucketPermissions[bucketId];
  if (!grant) return null;
  const granted = scopeOfPermission[grant];
  return scopeRank[granted] < scopeRank[actor.scope] ? granted : actor.scope;
}

export function hasAccountWideAdmin(actor: Actor): boolean {
  return actor.bucketAccess === "all" && actor.scope === "bucket_admin";
}

const accountBucketQuery = (db: DbOrTx, bucketId: string | Placeholder, accountId: string | Placeholder) =>
  db
    .select()
    .from(buckets)
    .where(and(eq(buckets.id, bucketId), eq(buckets.accountId, accountId)));
// Nearly every bucket route loads its bucket first.
const preparedAccountBucket = preparedPerDb((db) => accountBucketQuery(db, sql.placeholder("bucketId"), sql.placeholder("accountId")).prepare());

/**
 * Load a bucket the actor may use at `need`. Buckets of other accounts and buckets outside a
 * key's selection are reported as not found (no existence leak); too little scope is FORBIDDEN.
 */
export function loadBucket(deps: Deps, actor: Actor, bucketId: string, need: Scope, db: DbOrTx = deps.db): BucketRow {
  const bucket = isConnection(db)
    ? preparedAccountBucket(db).get({ bucketId, accountId: actor.accountId })
    : accountBucketQuery(db, bucketId, actor.accountId).get();
  const scope = bucket ? effectiveScope(actor, bucket.id) : null;
  if (!bucket || !scope) {
    // Say "deleted" only to the account that owned it; everyone else learns nothing.
    const gone = bucket
      ? undefined
      : db
          .select({ deletedAt: deletedBuckets.deletedAt })
          .from(deletedBuckets)
          .where(and(eq(deletedBuckets.id, bucketId), eq(deletedBuckets.accountId, actor.accountId)))
          .get();
    if (gone) throw new ApiError("BUCKET_NOT_FOUND", `Bucket ${bucketId} was permanently deleted.`, { deleted: true, deleted_at: gone.deletedAt });
    throw new ApiError("BUCKET_NOT_FOUND", `Bucket ${bucketId} was not found.`);
  }
  if (scopeRank[scope] < scopeRank[need]) {
    throw new ApiError("FORBIDDEN", `This action needs ${need} on bucket ${bucketId}; the credential has ${scope}.`, { required_scope: need, scope });
  }
  return bucket;
}

/**
 * Whether signed links into this bucket may still be served: it exists for this account and no
 * delete has begun (a background delete empties it over minutes; its links must die at once).
 */
export function bucketServesLinks(deps: Deps, accountId: string, bucketId: string, db: DbOrTx = deps.db): boolean {
  const bucket = db
    .select({ deletion: buckets.deletion })
    .from(buckets)
    .where(and(eq(buckets.id, bucketId), eq(buckets.accountId, accountId)))
    .get();
  return bucket !== undefined && !bucket.deletion;
}

export interface MutationCheck {
  /** Mutations allowed on archived buckets (unarchive, delete, unpublish) pass true. */
  allowArchived?: boolean;
}

/** Seconds a client is told to wait while a bucket is being deleted in the background. */
export const DELETING_RETRY_AFTER_S = 30;

/** Refuse anything but reads on a bucket being deleted (lock.kind = bucket_delete). */
export function assertNotDeleting(bucket: BucketRow): void {
  if (!bucket.deletion) return;
  const d = bucket.deletion;
  throw new ApiError(
    "BUCKET_LOCKED",
    `Bucket ${bucket.id} is being deleted.`,
    {
      lock: { kind: "bucket_delete", phase: d.phase, total_items: d.total_items, deleted_items: d.deleted_items },
      retry_after: DELETING_RETRY_AFTER_S,
    },
    DELETING_RETRY_AFTER_S,
  );
}

/** "about 3 more minutes": how long a refused writer waits at most (the lock may be released sooner). */
function lockTimeLeft(seconds: number): string {
  if (seconds < 90) return `${seconds} more second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `about ${minutes} more minutes`;
  return `about ${Math.round(minutes / 60)} more hours`;
}

/** Refuse a change to an archived, deleting or locked-by-someone-else bucket. */
function assertMutable(deps: Deps, actor: Actor, bucket: BucketRow, opts: MutationCheck = {}, db: DbOrTx = deps.db): void {
  assertNotDeleting(bucket);
  if (bucket.archivedAt && !opts.allowArchived) throw new ApiError("BUCKET_ARCHIVED", `Bucket ${bucket.id} is archived and read-only; unarchive it first.`);
  const lock = activeLock(deps, bucket.id, db);
  if (lock && lock.holderId !== actor.credentialId) {
    const retryAfter = Math.max(1, Math.ceil((Date.parse(lock.expiresAt) - deps.clock.now().getTime()) / 1000));
    throw new ApiError(
      "BUCKET_LOCKED",
      `Bucket ${bucket.id} is locked by another credential for ${lockTimeLeft(retryAfter)}: ${lock.message}`,
      {
        lock: { kind: "bucket_lock", message: lock.message, expires_at: lock.expiresAt, holder_kind: lock.holderKind },
        retry_after: retryAfter,
      },
      retryAfter,
    );
  }
}

export interface MutableBucketCheck extends MutationCheck {
  /** The scope the change needs on the bucket: bucket_write for contents, bucket_admin for settings. */
  need: Scope;
}

/**
 * The one way to load a bucket the actor is about to change: visible to it with `check.need`
 * (else BUCKET_NOT_FOUND / FORBIDDEN), not being deleted, not archived unless the change is
 * allowed on archived buckets, and not locked by another credential. Pass the transaction
 * that will make the change, so the checks and the write see the same row.
 */
export function loadMutableBucket(deps: Deps, actor: Actor, bucketId: string, check: MutableBucketCheck, db: DbOrTx = deps.db): BucketRow {
  const bucket = loadBucket(deps, actor, bucketId, check.need, db);
  assertMutable(deps, actor, bucket, check, db);
  return bucket;
}

const lockQuery = (db: DbOrTx, bucketId: string | Placeholder) => db.select().from(bucketLocks).where(eq(bucketLocks.bucketId, bucketId));
const preparedLock = preparedPerDb((db) => lockQuery(db, sql.placeholder("bucketId")).prepare());

export function activeLock(deps: Deps, bucketId: string, db: DbOrTx = deps.db) {
  const lock = isConnection(db) ? preparedLock(db).get({ bucketId }) : lockQuery(db, bucketId).get();
  if (!lock) return null;
  if (lock.expiresAt <= deps.clock.now().toISOString()) return null;
  return lock;
}

/**
 * Refuse a visibility change (publish, unpublish, access mode, slug) while the bucket's
 * visibility_change_lock is set. Unlocking is UI-only, so the hint points at the dashboard.
 */
export function assertVisibilityUnlocked(bucket: BucketRow): void {
  if (!bucket.visibilityLockedAt) return;
  throw new ApiError("VISIBILITY_LOCKED", `Visibility changes are locked for bucket ${bucket.id}; unlock them in the dashboard.`, {
    locked_at: bucket.visibilityLockedAt,
    ...(bucket.visibilityLockReason ? { reason: bucket.visibilityLockReason } : {}),
  });
}
