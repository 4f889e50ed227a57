// Permanent bucket delete. One bucket at a time per account. Buckets with at most
// config.bucketDeleteSyncLimit items go at once, in one transaction; larger ones are marked
// (`deletion`, shown as lock.kind = bucket_delete with progress) and emptied by a background
// job in batches, each batch its own transaction, so the API stays responsive and a crash
// resumes where it stopped (the job and the marker commit together). The bucket row goes
// last, leaving a tombstone; a notification records the outcome either way. Items are the
// rows of every bucket-owned table (items.ts: files, versions, change log, uploads, locks,
// variables); the blobs they referenced become garbage for the blob GC job.
import { and, eq, isNotNull, ne } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError, type ErrorCode } from "../../core/errors";
import { isStorageFull } from "../../core/storage-full";
import { buckets, deletedBuckets, type BucketDeletion } from "../../db/schema";
import { transaction, type Tx } from "../../db/tx";
import type { JobHandler } from "../../jobs/runner";
import { assertNoUploadCommitting } from "./locks";
import { loadMutableBucket, type BucketRow } from "./authorization";
import { countBucketItems, deleteBucketItemsBatch, type ItemKind } from "./items";
import { assertNoPublicationLifecycle } from "./lifecycle";
import { notifyAccount } from "../notifications";
import { deleteConfirmation } from "./present";
import { runBucketDeletionHooks, runBucketRemovalHooks } from "./removal-hooks";

export const BUCKET_DELETE_JOB = "buckets.delete";
/** Rows removed per background transaction: small enough to keep write locks short. */
export const DELETE_BATCH_SIZE = 500;

export type DeleteOutcome = { kind: "deleted"; bucketId: string; deletedAt: string } | { kind: "started"; bucket: BucketRow; progress: BucketDeletion };

export function deleteBucket(deps: Deps, actor: Actor, id: string, input: { confirmation: string }): DeleteOutcome {
  return transaction(deps.db, (tx) => {
    // Deleting buckets answer BUCKET_LOCKED (lock.kind = bucket_delete); so do other keys' locks.
    const bucket = loadMutableBucket(deps, actor, id, { need: "bucket_admin", allowArchived: true }, tx);
    if (input.confirmation !== deleteConfirmation(bucket)) {
      throw new ApiError(
        "CONFIRMATION_MISMATCH",
        `The confirmation does not match. Pass the bucket's delete.confirmation value (see GET /api/v1/buckets/${bucket.id}).`,
      );
    }
    assertNoPublicationLifecycle(deps, bucket, "delete", tx);
    // A finalize committing in chunks must not lose its bucket between two chunks: wait for it.
    assertNoUploadCommitting(deps, bucket.id, undefined, tx);
    const running = tx
      .select({ id: buckets.id })
      .from(buckets)
      .where(and(eq(buckets.accountId, bucket.accountId), isNotNull(buckets.deletion), ne(buckets.id, bucket.id)))
      .get();
    if (running) {
      throw new ApiError(
        "BUCKET_DELETE_IN_PROGRESS",
        `Bucket ${running.id} is still being deleted; buckets are deleted one at a time.`,
        { deleting_bucket_id: running.id },
        30,
      );
    }

    runBucketDeletionHooks(deps, bucket.id, tx);
    const counts = countBucketItems(bucket.id, tx);
    const now = deps.clock.now().toISOString();
    if (counts.total <= deps.config.bucketDeleteSyncLimit) {
      while (deleteBucketItemsBatch(bucket.id, DELETE_BATCH_SIZE, tx).deleted > 0);
      removeBucketRow(deps, bucket, actor.credentialId, tx);
      return { kind: "deleted", bucketId: bucket.id, deletedAt: now };
    }
    const jobId = deps.jobs.enqueue(
      BUCKET_DELETE_JOB,
      { bucket_id: bucket.id, deleted_by: actor.credentialId },
      { uniqueKey: `bucket-delete:${bucket.id}`, maxAttempts: 3 },
      tx,
    );
    const progress: BucketDeletion = {
      phase: "queued",
      total_files: counts.files,
      total_versions: counts.versions,
      total_items: counts.total,
      deleted_items: 0,
      started_at: now,
      job_id: jobId,
    };
    const marked = tx.update(buckets).set({ deletion: progress, updatedAt: now }).where(eq(buckets.id, bucket.id)).returning().get()!;
    return { kind: "started", bucket: marked, progress };
  });
}

function removeBucketRow(deps: Deps, bucket: BucketRow, deletedBy: string, tx: Tx): void {
  runBucketRemovalHooks(deps, bucket.id, tx);
  tx.insert(deletedBuckets)
    .values({ id: bucket.id, accountId: bucket.accountId, title: bucket.title, deletedBy, deletedAt: deps.clock.now().toISOString() })
    .run();
  tx.delete(buckets).where(eq(buckets.id, bucket.id)).run();
}

const phaseOf: Record<ItemKind, BucketDeletion["phase"]> = { files: "deleting_files", versions: "deleting_versions", other: "deleting_other" };

/** One background step: delete a batch, or finish. Returns false when nothing is left to do. */
function deleteStep(deps: Deps, bucketId: string, deletedBy: string): boolean {
  return transaction(deps.db, (tx) => {
    const bucket = tx.select().from(buckets).where(eq(buckets.id, bucketId)).get();
    // Gone (finished on an earlier attempt) or unmarked (a failed delete was given up): stop.
    if (!bucket?.deletion) return false;
    const batch = deleteBucketItemsBatch(bucketId, DELETE_BATCH_SIZE, tx);
    if (batch.deleted > 0) {
      const d = bucket.deletion;
      tx.update(buckets)
        .set({ deletion: { ...d, phase: phaseOf[batch.kind!], deleted_items: d.deleted_items + batch.deleted } })
        .where(eq(buckets.id, bucketId))
        .run();
      return true;
    }
    removeBucketRow(deps, bucket, deletedBy, tx);
    notifyAccount(
      deps,
      {
        accountId: bucket.accountId,
        kind: "bucket_deleted",
        subject: `Bucket "${bucket.title}" was deleted`,
        body: `The bucket "${bucket.title}" (${bucket.id}) and its ${bucket.deletion.total_items} items were permanently deleted.`,
        data: { bucket_id: bucket.id, title: bucket.title, total_items: bucket.deletion.total_items, started_at: bucket.deletion.started_at },
      },
      tx,
    );
    return false;
  });
}

/**
 * What a failed delete's notification says about why: a stable code and a sentence for the
 * account. The raw error (which may quote SQL or name server paths) goes to the server log only.
 */
function failureForAccount(error: string): { error_code: ErrorCode; error_message: string } {
  if (isStorageFull(new Error(error)))
    return { error_code: "STORAGE_FULL", error_message: "The server's disk was full. Try again once the operator has freed space." };
  return { error_code: "INTERNAL", error_message: "The server hit an unexpected error; the operator can find the details in the server log." };
}

/** Give up: unlock the bucket (it stays, with whatever items were not yet deleted) and say so. */
function failDelete(deps: Deps, bucketId: string, error: string): void {
  transaction(deps.db, (tx) => {
    const bucket = tx.select().from(buckets).where(eq(buckets.id, bucketId)).get();
    if (!bucket?.deletion) return;
    deps.log.error("bucket delete failed", { bucket_id: bucket.id, account_id: bucket.accountId, error });
    tx.update(buckets).set({ deletion: null, updatedAt: deps.clock.now().toISOString() }).where(eq(buckets.id, bucketId)).run();
    notifyAccount(
      deps,
      {
        accountId: bucket.accountId,
        kind: "bucket_delete_failed",
        subject: `Deleting bucket "${bucket.title}" failed`,
        body: `Pier could not finish deleting the bucket "${bucket.title}" (${bucket.id}). The bucket is unlocked again; ${bucket.deletion.deleted_items} of ${bucket.deletion.total_items} items were removed. Try the delete again; if it keeps failing, check the server log.`,
        data: {
          bucket_id: bucket.id,
          title: bucket.title,
          ...failureForAccount(error),
          deleted_items: bucket.deletion.deleted_items,
          total_items: bucket.deletion.total_items,
        },
      },
      tx,
    );
  });
}

function rootCause(e: unknown): string {
  let err: unknown = e;
  while (err instanceof Error && err.cause instanceof Error) err = err.cause;
  return err instanceof Error ? err.message : String(err);
}

export const bucketDeleteJob: JobHandler = {
  maxAttempts: 3,
  async run(deps, payload) {
    const bucketId = String(payload.bucket_id);
    const deletedBy = String(payload.deleted_by ?? "job");
    let batches = 0;
    try {
      while (deleteStep(deps, bucketId, deletedBy)) {
        batches++;
        // Yield between batches so requests are served while a big bucket empties.
        await Bun.sleep(0);
      }
    } catch (e) {
      // The query builder wraps the database's reason ("disk I/O error") in a message quoting
      // the SQL; keep the reason, which is what the failure notification should say.
      throw new Error(rootCause(e));
    }
    return { bucket_id: bucketId, batches };
  },
  onFailure: (deps, payload, error) => failDelete(deps, String(payload.bucket_id), error),
};
