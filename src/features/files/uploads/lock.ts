// Upload sessions hold the bucket write lock (bucket_locks, holder_kind "upload_session") on
// behalf of the credential that opened them: that credential keeps writing, every other one
// gets BUCKET_LOCKED until the last of its sessions closes or expires.
import { and, eq, gt, inArray, lt } from "drizzle-orm";
import type { Actor, Deps } from "../../../core/context";
import { bucketLocks, uploadSessions } from "../../../db/schema";
import type { DbOrTx } from "../../../db/tx";

/** Take or extend the lock (the caller ran loadMutableBucket, so no foreign active lock exists). */
export function holdSessionLock(deps: Deps, actor: Actor, bucketId: string, sessionId: string, expiresAt: string, db: DbOrTx): void {
  const now = deps.clock.now().toISOString();
  const lock = db.select().from(bucketLocks).where(eq(bucketLocks.bucketId, bucketId)).get();
  if (lock && lock.expiresAt > now && lock.holderId === actor.credentialId) {
    // The credential's own lock, a session's or an explicit one, is stretched to cover this
    // session: one row is the bucket's lock, and an explicit lock shorter than the session would
    // otherwise open the bucket to everyone in the middle of it (D301).
    if (lock.expiresAt < expiresAt) {
      db.update(bucketLocks).set({ expiresAt }).where(eq(bucketLocks.bucketId, bucketId)).run();
    }
    return;
  }
  if (lock) db.delete(bucketLocks).where(eq(bucketLocks.bucketId, bucketId)).run();
  db.insert(bucketLocks)
    .values({
      bucketId,
      id: sessionId,
      holderKind: "upload_session",
      holderId: actor.credentialId,
      message: `Upload session ${sessionId} in progress`,
      createdAt: now,
      expiresAt,
    })
    .run();
}

/**
 * Stretch the bucket's lock held by this credential (its session's or its explicit one) to
 * `expiresAt`, if it holds one: for a session slid by a call that takes no lock (reading the
 * session, a PUT of its bytes).
 */
export function stretchSessionLock(deps: Deps, bucketId: string, credentialId: string, expiresAt: string, db: DbOrTx): void {
  db.update(bucketLocks)
    .set({ expiresAt })
    .where(
      and(
        eq(bucketLocks.bucketId, bucketId),
        eq(bucketLocks.holderId, credentialId),
        gt(bucketLocks.expiresAt, deps.clock.now().toISOString()),
        lt(bucketLocks.expiresAt, expiresAt),
      ),
    )
    .run();
}

/**
 * Release the session lock unless another live session of its holder still needs it. Only the
 * holder's: another credential's session left open (its key revoked, which deleted its lock)
 * must not keep this holder's lock alive, blocking everyone else until that session expires.
 */
export function releaseSessionLock(deps: Deps, bucketId: string, db: DbOrTx): void {
  const now = deps.clock.now().toISOString();
  const sessionLock = and(eq(bucketLocks.bucketId, bucketId), eq(bucketLocks.holderKind, "upload_session"));
  const lock = db.select({ holderId: bucketLocks.holderId }).from(bucketLocks).where(sessionLock).get();
  if (!lock) return;
  const live = db
    .select({ expiresAt: uploadSessions.expiresAt })
    .from(uploadSessions)
    .where(
      and(
        eq(uploadSessions.bucketId, bucketId),
        eq(uploadSessions.credentialId, lock.holderId),
        inArray(uploadSessions.status, ["open", "finalizing"]),
        gt(uploadSessions.expiresAt, now),
      ),
    )
    .all();
  if (live.length === 0) {
    db.delete(bucketLocks).where(sessionLock).run();
    return;
  }
  const until = live
    .map((s) => s.expiresAt)
    .sort()
    .at(-1)!;
  db.update(bucketLocks).set({ expiresAt: until }).where(sessionLock).run();
}
