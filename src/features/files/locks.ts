// File locks: a credential reserves paths for a while (an agent editing them). The bucket lock
// is checked first (loadMutableBucket via bucketForWrite); another holder's file lock is 423.
import { and, eq, gt, inArray } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { fileLocks } from "../../db/schema";
import { transaction } from "../../db/tx";
import { bucketForWrite, fileLockedError } from "./commit";
import { normalizePath } from "./paths";
import { fileById, fileByPath } from "./service";
import { isoAfter } from "../../core/clock";

export const FILE_LOCK_DEFAULT_S = 3600;
export const FILE_LOCK_MAX_S = 7 * 24 * 3600;

export function lockFiles(deps: Deps, actor: Actor, bucketId: string, input: { paths: string[]; message: string; duration_seconds?: number }) {
  const duration = input.duration_seconds ?? FILE_LOCK_DEFAULT_S;
  if (!Number.isInteger(duration) || duration < 1 || duration > FILE_LOCK_MAX_S) {
    throw new ApiError("VALIDATION_FAILED", `duration_seconds must be an integer from 1 to ${FILE_LOCK_MAX_S}.`, { field: "duration_seconds" });
  }
  const paths = [...new Set(input.paths.map(normalizePath))];
  return transaction(deps.db, (tx) => {
    bucketForWrite(deps, actor, bucketId, {}, tx);
    const now = deps.clock.now();
    const nowIso = now.toISOString();
    for (const p of paths) if (!fileByPath(bucketId, p, tx)) throw new ApiError("FILE_NOT_FOUND", `No file at ${p}.`, { path: p });
    const held = tx
      .select()
      .from(fileLocks)
      .where(and(eq(fileLocks.bucketId, bucketId), inArray(fileLocks.path, paths), gt(fileLocks.expiresAt, nowIso)))
      .all();
    const foreign = held.find((l) => l.holderId !== actor.credentialId);
    if (foreign) {
      throw fileLockedError(deps, foreign, `${foreign.path} is locked by another credential: ${foreign.message}`);
    }
    const expiresAt = isoAfter(now, duration * 1000);
    for (const path of paths) {
      tx.insert(fileLocks)
        .values({ bucketId, path, holderId: actor.credentialId, message: input.message, createdAt: nowIso, expiresAt })
        .onConflictDoUpdate({
          target: [fileLocks.bucketId, fileLocks.path],
          set: { holderId: actor.credentialId, message: input.message, createdAt: nowIso, expiresAt },
        })
        .run();
    }
    return { locks: paths.map((path) => ({ path, message: input.message, expires_at: expiresAt, held_by_you: true })) };
  });
}

export function unlockFile(deps: Deps, actor: Actor, bucketId: string, fileId: string) {
  return transaction(deps.db, (tx) => {
    // Releasing is allowed on an archived bucket (like the bucket lock): it changes no file.
    bucketForWrite(deps, actor, bucketId, { allowArchived: true }, tx);
    const f = fileById(bucketId, fileId, tx);
    const lock = tx
      .select()
      .from(fileLocks)
      .where(and(eq(fileLocks.bucketId, bucketId), eq(fileLocks.path, f.path)))
      .get();
    if (lock && lock.holderId !== actor.credentialId && lock.expiresAt > deps.clock.now().toISOString()) {
      throw fileLockedError(deps, lock, `${f.path} is locked by another credential; only its holder can unlock it.`);
    }
    if (lock)
      tx.delete(fileLocks)
        .where(and(eq(fileLocks.bucketId, bucketId), eq(fileLocks.path, f.path)))
        .run();
    return { unlocked: true, path: f.path };
  });
}
