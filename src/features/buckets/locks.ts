// The explicit bucket lock (an agent reserving a bucket while it works) and the
// visibility-change lock (freezing publish/unpublish/access/slug; unlocked only in the UI).
import { and, eq, or, lte } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { newId } from "../../core/ids";
import { bucketLocks, buckets } from "../../db/schema";
import { transaction } from "../../db/tx";
import { activeLock, loadMutableBucket, type BucketRow } from "./access";
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
    const values = {
      bucketId: bucket.id,
      id: mine?.id ?? newId("lck"),
      holderKind: holderKindOf(actor),
      holderId: actor.credentialId,
      message: input.message?.trim() || "Locked by another agent",
      createdAt: mine?.createdAt ?? now.toISOString(),
      expiresAt: isoAfter(now, seconds * 1000),
    };
    return tx.insert(bucketLocks).values(values)
      .onConflictDoUpdate({ target: bucketLocks.bucketId, set: values })
      .returning().get()!;
  });
}

/** Release this credential's lock (and clear an expired one). Idempotent: no lock is fine. */
export function unlockBucket(deps: Deps, actor: Actor, id: string): { released: boolean } {
  return transaction(deps.db, (tx) => {
    // Another credential's live lock is theirs to release (423). Archived buckets may still be
    // unlocked: a lock left behind would otherwise block delete by everyone else until it expires.
    const bucket = loadMutableBucket(deps, actor, id, { need: "bucket_write", allowArchived: true }, tx);
    const removed = tx.delete(bucketLocks).where(and(
      eq(bucketLocks.bucketId, bucket.id),
      or(eq(bucketLocks.holderId, actor.credentialId), lte(bucketLocks.expiresAt, deps.clock.now().toISOString())),
    )).returning({ holderId: bucketLocks.holderId, expiresAt: bucketLocks.expiresAt }).all();
    const released = removed.some((r) => r.holderId === actor.credentialId && r.expiresAt > deps.clock.now().toISOString());
    return { released };
  });
}

/** Freeze visibility changes. Idempotent; there is deliberately no API to unlock. */
export function lockVisibility(deps: Deps, actor: Actor, id: string, input: { reason?: string }): { bucket: BucketRow; changed: boolean } {
  return transaction(deps.db, (tx) => {
    const bucket = loadMutableBucket(deps, actor, id, { need: "bucket_admin" }, tx);
    if (bucket.visibilityLockedAt) return { bucket, changed: false };
    const now = deps.clock.now().toISOString();
    const updated = tx.update(buckets).set({
      visibilityLockedAt: now, visibilityLockedBy: actor.credentialId, visibilityLockReason: input.reason?.trim() || null, updatedAt: now,
    }).where(eq(buckets.id, bucket.id)).returning().get()!;
    return { bucket: updated, changed: true };
  });
}
