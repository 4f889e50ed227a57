// File locks: a credential reserves paths for a while (an agent editing them). The bucket lock
// is checked first (loadMutableBucket via bucketForWrite); another holder's file lock is 423,
// unless that holder can no longer act (revoked, signed out: D257). bucket_admin may break
// another holder's lock with force (D258).
import { and, eq, gt, inArray } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { fileLocks } from "../../db/schema";
import { transaction } from "../../db/tx";
import { bucketForWrite, fileLockedError } from "./commit";
import { normalizePath } from "./paths";
import { fileById, fileByPath } from "./service";
import { liveHolders } from "./lock-holders";
import { effectiveScope } from "../buckets";
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
    const live = liveHolders(deps);
    const foreign = held.find((l) => l.holderId !== actor.credentialId && live(l.holderId));
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

/**
 * Release the file's lock: the holder's own, an expired one, or one whose holder can no longer
 * act. Another live holder's lock answers FILE_LOCKED, unless `force` is passed by a credential
 * with bucket_admin on the bucket (an account owner clearing a stuck agent's lock: D258).
 */
export function unlockFile(deps: Deps, actor: Actor, bucketId: string, fileId: string, opts: { force?: boolean } = {}) {
  return transaction(deps.db, (tx) => {
    // Releasing is allowed on an archived bucket (like the bucket lock): it changes no file.
    bucketForWrite(deps, actor, bucketId, { allowArchived: true }, tx);
    const f = fileById(bucketId, fileId, tx);
    const lock = tx
      .select()
      .from(fileLocks)
      .where(and(eq(fileLocks.bucketId, bucketId), eq(fileLocks.path, f.path)))
      .get();
    const foreign = !!lock && lock.holderId !== actor.credentialId && lock.expiresAt > deps.clock.now().toISOString() && liveHolders(deps)(lock.holderId);
    if (lock && foreign) {
      if (!opts.force) {
        throw fileLockedError(
          deps,
          lock,
          `${f.path} is locked by another credential; only its holder can unlock it (a bucket_admin credential may break it with force=true).`,
        );
      }
      if (effectiveScope(actor, bucketId) !== "bucket_admin") {
        throw new ApiError("FORBIDDEN", `Breaking another credential's lock on ${f.path} needs bucket_admin on bucket ${bucketId}.`, {
          required_scope: "bucket_admin",
          scope: effectiveScope(actor, bucketId),
        });
      }
      deps.log.info("file lock broken", { bucket_id: bucketId, path: f.path, by: actor.credentialId, holder: lock.holderId });
    }
    if (lock)
      tx.delete(fileLocks)
        .where(and(eq(fileLocks.bucketId, bucketId), eq(fileLocks.path, f.path)))
        .run();
    return { unlocked: true, path: f.path, broken: foreign };
  });
}
