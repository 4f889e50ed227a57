// Archive, unarchive and bulk archive/unarchive. Archived buckets are read-only (loadMutableBucket
// answers BUCKET_ARCHIVED); archiving needs the bucket unpublished first.
import { eq } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { buckets } from "../../db/schema";
import { transaction, type DbOrTx } from "../../db/tx";
import { assertNoUploadCommitting } from "./locks";
import { loadMutableBucket, type BucketRow } from "./authorization";
import { publicationLifecycleActive } from "./publication-state";

export interface LifecycleResult {
  bucket: BucketRow;
  /** False when the bucket already was in the requested state (the call is idempotent). */
  changed: boolean;
}

/** Archive and delete both wait until a publication's lifecycle has ended. */
export function assertNoPublicationLifecycle(deps: Deps, bucket: BucketRow, action: "archive" | "delete", db?: DbOrTx): void {
  if (!publicationLifecycleActive(deps, bucket.id, db)) return;
  throw new ApiError(
    "UNPUBLISH_FIRST",
    `Bucket ${bucket.id} has an active publication; unpublish it (DELETE /api/v1/buckets/${bucket.id}/publication) before you ${action} it.`,
    {
      required_action: "unpublish_first",
    },
  );
}

export function archiveBucket(deps: Deps, actor: Actor, id: string): LifecycleResult {
  return transaction(deps.db, (tx) => {
    const bucket = loadMutableBucket(deps, actor, id, { need: "bucket_admin", allowArchived: true }, tx);
    if (bucket.archivedAt) return { bucket, changed: false };
    assertNoPublicationLifecycle(deps, bucket, "archive", tx);
    // An archived bucket refuses the rest of a finalize committing in chunks: let it finish first.
    assertNoUploadCommitting(deps, bucket.id, undefined, tx);
    const now = deps.clock.now().toISOString();
    const updated = tx.update(buckets).set({ archivedAt: now, updatedAt: now }).where(eq(buckets.id, bucket.id)).returning().get()!;
    return { bucket: updated, changed: true };
  });
}

export function unarchiveBucket(deps: Deps, actor: Actor, id: string): LifecycleResult {
  return transaction(deps.db, (tx) => {
    const bucket = loadMutableBucket(deps, actor, id, { need: "bucket_admin", allowArchived: true }, tx);
    if (!bucket.archivedAt) return { bucket, changed: false };
    const now = deps.clock.now().toISOString();
    const updated = tx.update(buckets).set({ archivedAt: null, updatedAt: now }).where(eq(buckets.id, bucket.id)).returning().get()!;
    return { bucket: updated, changed: true };
  });
}

export type BulkOperation = "archive" | "unarchive" | "delete";

export type BulkItemResult =
  | { id: string; ok: true; archived: boolean; changed: boolean }
  | { id: string; ok: false; error: { code: string; message: string; details?: Record<string, unknown> } };

/**
 * Apply archive or unarchive to each bucket independently (one transaction per bucket): one
 * refused bucket does not undo the others; each gets its own result. Delete is never bulk.
 */
export function bulkBuckets(deps: Deps, actor: Actor, input: { operation: BulkOperation; bucket_ids: string[] }) {
  if (input.operation === "delete") {
    throw new ApiError(
      "BULK_DELETE_NOT_SUPPORTED",
      "Bulk supports archive and unarchive only. Delete buckets one at a time with DELETE /api/v1/buckets/:id and the bucket's delete.confirmation phrase.",
      {
        supported_operations: ["archive", "unarchive"],
      },
    );
  }
  const apply = input.operation === "archive" ? archiveBucket : unarchiveBucket;
  const results: BulkItemResult[] = [...new Set(input.bucket_ids)].map((id) => {
    try {
      const r = apply(deps, actor, id);
      return { id, ok: true, archived: r.bucket.archivedAt !== null, changed: r.changed };
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return { id, ok: false, error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } };
    }
  });
  return {
    operation: input.operation,
    results,
    succeeded: results.filter((r) => r.ok).length,
    failed: results.filter((r) => !r.ok).length,
  };
}
