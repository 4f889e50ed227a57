// The explicit bucket lock (an agent reserving a bucket while it works) and the
// visibility-change lock (freezing publish/unpublish/access/slug; unlocked only in the UI).
import { and, desc, eq, gt, inArray, ne, or, lte } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { newId } from "../../core/ids";
import { bucketLocks, buckets, uploadSessions } from "../../db/schema";
import { transaction, type DbOrTx, type Tx } from "../../db/tx";
import { activeLock, loadMutableBucket, type BucketRow } from "./authorization";
import { LOCK_DEFAULT_SECONDS, LOCK_MAX_SECONDS } from "./model";
import { isoAfter } from "../../core/clock";

export type LockRow = typeof bucketLocks.$inferSelect;

export function presentLock(deps: Deps, actor: Actor, lock: LockRow) {
  return {
    id: lock.id,
    bucket_id: lock.bucketId,
    kind: "bucket_lock" as const,
    message: lock.message,
    holder_kind: lock.holderKind,
    held_by_you: lock.holderId === actor.credentialId,
    created_at: lock.createdAt,
    expires_at: lock.expiresAt,
    expires_in_seconds: Math.max(0, Math.ceil((Date.parse(lock.expiresAt) - deps.clock.now().getTime()) / 1000)),
  };
}

const holderKindOf = (actor: Actor): LockRow["holderKind"] => actor.kind;

/**
 * Take the lock, or renew it when this credential already holds it (new message and expiry,
 * same lock id). Another credential's live lock answers BUCKET_LOCKED; an expired one is replaced.
 */
export function lockBucket(deps: Deps, actor: Actor, id: string, input: { message?: string; duration_seconds?: number }): LockRow {
  return transaction(deps.db, (tx) => {
    const bucket = loadMutableBucket(deps, actor, id, { need: "bucket_write" }, tx);
    const now = deps.clock.now();
    const seconds = Math.min(input.duration_seconds ?? LOCK_DEFAULT_SECONDS, LOCK_MAX_SECONDS);
    const mine = activeLock(deps, bucket.id, tx);
    // The row also holds the bucket for this credential's open upload sessions: never shorter than they live (D301).
    const asked = isoAfter(now, seconds * 1000);
    const session = openSessionOf(deps, bucket.id, actor.credentialId, tx);
    const values = {
      bucketId: bucket.id,
      id: mine?.id ?? newId("lck"),
      holderKind: holderKindOf(actor),
      holderId: actor.credentialId,
      message: input.message?.trim() || "Locked by another agent",
      createdAt: mine?.createdAt ?? now.toISOString(),
      expiresAt: session && session.expiresAt > asked ? session.expiresAt : asked,
    };
    return tx.insert(bucketLocks).values(values).onConflictDoUpdate({ target: bucketLocks.bucketId, set: values }).returning().get()!;
  });
}

/** Release this credential's lock (and clear an expired one). Idempotent: no lock is fine. */
export function unlockBucket(deps: Deps, actor: Actor, id: string): { released: boolean } {
  return transaction(deps.db, (tx) => {
    // Another credential's live lock is theirs to release (423). Archived buckets may still be
    // unlocked: a lock left behind would otherwise block delete by everyone else until it expires.
    const bucket = loadMutableBucket(deps, actor, id, { need: "bucket_write", allowArchived: true }, tx);
    const removed = tx
      .delete(bucketLocks)
      .where(
        and(eq(bucketLocks.bucketId, bucket.id), or(eq(bucketLocks.holderId, actor.credentialId), lte(bucketLocks.expiresAt, deps.clock.now().toISOString()))),
      )
      .returning({ holderId: bucketLocks.holderId, expiresAt: bucketLocks.expiresAt })
      .all();
    const released = removed.some((r) => r.holderId === actor.credentialId && r.expiresAt > deps.clock.now().toISOString());
    // An open upload session of this credential keeps the bucket locked until it is closed or
    // expires (the spec's rule): its lock is put back, as the session itself would take it (D301).
    const session = openSessionOf(deps, bucket.id, actor.credentialId, tx);
    if (session) {
      tx.insert(bucketLocks)
        .values({
          bucketId: bucket.id,
          id: session.id,
          holderKind: "upload_session",
          holderId: actor.credentialId,
          message: `Upload session ${session.id} in progress`,
          createdAt: deps.clock.now().toISOString(),
          expiresAt: session.expiresAt,
        })
        .onConflictDoNothing()
        .run();
    }
    return { released };
  });
}

/** The open upload session of this credential on the bucket that lives longest, if any. */
function openSessionOf(deps: Deps, bucketId: string, credentialId: string, db: DbOrTx) {
  return db
    .select({ id: uploadSessions.id, expiresAt: uploadSessions.expiresAt })
    .from(uploadSessions)
    .where(
      and(
        eq(uploadSessions.bucketId, bucketId),
        eq(uploadSessions.credentialId, credentialId),
        inArray(uploadSessions.status, ["open", "finalizing"]),
        gt(uploadSessions.expiresAt, deps.clock.now().toISOString()),
      ),
    )
    .orderBy(desc(uploadSessions.expiresAt))
    .limit(1)
    .get();
}

/**
 * Delete the bucket locks (explicit ones and upload sessions') these credentials held: they ended
 * for good (a key or an OAuth connection revoked), so nobody could release them, and every other
 * writer would wait out the lock's hour. A hook of accounts, as files' releaseLocksOf is (D257).
 */
export function releaseBucketLocksOf(_deps: Deps, credentialIds: string[], tx: Tx): void {
  tx.delete(bucketLocks).where(inArray(bucketLocks.holderId, credentialIds)).run();
}

/** Freeze visibility changes. Idempotent; there is deliberately no API to unlock. */
export function lockVisibility(deps: Deps, actor: Actor, id: string, input: { reason?: string }): { bucket: BucketRow; changed: boolean } {
  return transaction(deps.db, (tx) => {
    const bucket = loadMutableBucket(deps, actor, id, { need: "bucket_admin" }, tx);
    if (bucket.visibilityLockedAt) return { bucket, changed: false };
    const now = deps.clock.now().toISOString();
    const updated = tx
      .update(buckets)
      .set({
        visibilityLockedAt: now,
        visibilityLockedBy: actor.credentialId,
        visibilityLockReason: input.reason?.trim() || null,
        updatedAt: now,
      })
      .where(eq(buckets.id, bucket.id))
      .returning()
      .get()!;
    return { bucket: updated, changed: true };
  });
}

/**
 * Lift the visibility lock. Only a person signed in to the dashboard may (the API has no
 * unlock, so an agent that froze visibility cannot thaw it; docs/buckets.md). Idempotent.
 */
export function unlockVisibility(deps: Deps, actor: Actor, id: string): { bucket: BucketRow; changed: boolean } {
  if (actor.kind !== "session") {
    throw new ApiError("FORBIDDEN", "The visibility lock is lifted by a person in the dashboard, not through the API.", { unlock: "dashboard_only" });
  }
  return transaction(deps.db, (tx) => {
    // Archived buckets may be unlocked, as bucket locks may: a freeze left behind blocks nothing useful.
    const bucket = loadMutableBucket(deps, actor, id, { need: "bucket_admin", allowArchived: true }, tx);
    if (!bucket.visibilityLockedAt) return { bucket, changed: false };
    const updated = tx
      .update(buckets)
      .set({ visibilityLockedAt: null, visibilityLockedBy: null, visibilityLockReason: null, updatedAt: deps.clock.now().toISOString() })
      .where(eq(buckets.id, bucket.id))
      .returning()
      .get()!;
    return { bucket: updated, changed: true };
  });
}

/**
 * A finalize still committing its chunks: other writes (and bucket deletes, archive) wait
 * rather than interleave with it. DATABASE_BUSY_RETRY with Retry-After.
 */
export function assertNoUploadCommitting(deps: Deps, bucketId: string, exceptSessionId: string | undefined, db: DbOrTx): void {
  // An abandoned finalize stops blocking once its session expires (the expiry job closes it later).
  const busy = db
    .select({ id: uploadSessions.id })
    .from(uploadSessions)
    .where(
      and(
        eq(uploadSessions.bucketId, bucketId),
        eq(uploadSessions.status, "finalizing"),
        gt(uploadSessions.expiresAt, deps.clock.now().toISOString()),
        exceptSessionId ? ne(uploadSessions.id, exceptSessionId) : undefined,
      ),
    )
    .get();
  if (busy) {
    throw new ApiError(
      "DATABASE_BUSY_RETRY",
      `Upload session ${busy.id} is still committing to this bucket; retry shortly.`,
      { retry_after: 2, upload_session_id: busy.id },
      2,
    );
  }
}
