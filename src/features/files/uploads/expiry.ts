// Closing upload sessions: cancel and expiry release the bucket's upload lock and drop staged
// entries; the periodic task expires abandoned sessions and stale direct uploads and prunes
// closed bookkeeping after its retention period.
import { and, eq, inArray, lte, sql } from "drizzle-orm";
import type { Deps } from "../../../core/context";
import { uploadEntries, uploadSessions } from "../../../db/schema";
import { transaction, type DbOrTx } from "../../../db/tx";
import { uploadLimits } from "./limits";
import { releaseSessionLock } from "./lock";
import type { UploadSessionRow } from "./sessions";

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
