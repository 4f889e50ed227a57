// An upload session's lifetime: every call of its client (and every PUT of its bytes) slides it
// forward; cancel and expiry release the bucket's upload lock and drop staged entries; the
// periodic task expires abandoned sessions and stale direct uploads and prunes closed
// bookkeeping after its retention period.
import { and, eq, inArray, lte, sql } from "drizzle-orm";
import type { Deps } from "../../../core/context";
import { uploadEntries, uploadSessions } from "../../../db/schema";
import { transaction, type DbOrTx } from "../../../db/tx";
import { isoAfter } from "../../../core/clock";
import { uploadLimits } from "./limits";
import { releaseSessionLock, stretchSessionLock } from "./lock";
import type { UploadSessionRow } from "./sessions";

/** A session that can still take calls (not completed, cancelled or expired). */
export const isLive = (s: UploadSessionRow) => s.status === "open" || s.status === "finalizing";

/**
 * Slide a live session (and its bucket lock) to an hour from now; an expired or closed one is left
 * as it is. Returns the session as it now is. Callers that may take the lock (declare, finalize)
 * pass `holdsLock` and hold it themselves afterwards (holdSessionLock stretches it too); the
 * others only stretch a lock the session's credential holds.
 */
export function slideSession(deps: Deps, s: UploadSessionRow, tx: DbOrTx, holdsLock = false): UploadSessionRow {
  const now = deps.clock.now();
  if (!isLive(s) || s.expiresAt <= now.toISOString()) return s;
  const expiresAt = isoAfter(now, uploadLimits.sessionTtlMs);
  const row = tx.update(uploadSessions).set({ expiresAt, updatedAt: now.toISOString() }).where(eq(uploadSessions.id, s.id)).returning().get()!;
  if (!holdsLock) stretchSessionLock(deps, s.bucketId, s.credentialId, expiresAt, tx);
  return row;
}

/** The bytes of an entry arrived: its session, if any, is alive (the PUT was a call of its client). */
export function slideSessionOf(deps: Deps, sessionId: string | null, tx: DbOrTx): void {
  if (!sessionId) return;
  const s = tx.select().from(uploadSessions).where(eq(uploadSessions.id, sessionId)).get();
  if (s) slideSession(deps, s, tx);
}

export function closeSession(deps: Deps, s: UploadSessionRow, status: "cancelled" | "expired", tx: DbOrTx): UploadSessionRow {
  const now = deps.clock.now().toISOString();
  tx.delete(uploadEntries)
    .where(and(eq(uploadEntries.sessionId, s.id), eq(uploadEntries.status, "pending")))
    .run();
  const row = tx.update(uploadSessions).set({ status, closedAt: now, updatedAt: now }).where(eq(uploadSessions.id, s.id)).returning().get()!;
  releaseSessionLock(deps, s.bucketId, tx);
  return row;
}

export function expireSession(deps: Deps, s: UploadSessionRow, db: DbOrTx): void {
  transaction(db, (tx) => closeSession(deps, s, "expired", tx));
}

/** Periodic job: expire abandoned sessions (releasing their locks) and stale direct uploads. */
export function expireUploads(deps: Deps): { sessions: number; direct_uploads: number; pruned: number } {
  const now = deps.clock.now().toISOString();
  const due = deps.db
    .select()
    .from(uploadSessions)
    .where(and(inArray(uploadSessions.status, ["open", "finalizing"]), lte(uploadSessions.expiresAt, now)))
    .limit(500)
    .all();
  for (const s of due) expireSession(deps, s, deps.db);
  const direct = transaction(
    deps.db,
    (tx) =>
      tx
        .delete(uploadEntries)
        .where(and(sql`${uploadEntries.sessionId} IS NULL`, eq(uploadEntries.status, "pending"), lte(uploadEntries.expiresAt, now)))
        .returning({ id: uploadEntries.id })
        .all().length,
  );
  // Closed sessions and committed entries are bookkeeping only (the versions hold the files):
  // prune them after a retention period so these tables do not grow with history.
  const cutoff = new Date(deps.clock.now().getTime() - uploadLimits.closedRetentionMs).toISOString();
  const pruned = transaction(deps.db, (tx) => {
    const entries = tx
      .delete(uploadEntries)
      .where(and(eq(uploadEntries.status, "finalized"), lte(uploadEntries.finalizedAt, cutoff)))
      .returning({ id: uploadEntries.id })
      .all().length;
    const sessions = tx
      .delete(uploadSessions)
      .where(and(inArray(uploadSessions.status, ["completed", "cancelled", "expired"]), lte(uploadSessions.closedAt, cutoff)))
      .returning({ id: uploadSessions.id })
      .all().length;
    return entries + sessions;
  });
  return { sessions: due.length, direct_uploads: direct, pruned };
}
