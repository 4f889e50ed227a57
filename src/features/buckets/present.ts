// The Bucket resource as the spec shows it, with lifecycle action metadata.
import type { Deps } from "../../core/context";
import { activeLock, type BucketRow } from "./authorization";
import type { DeleteOutcome } from "./delete";
import { publicationSummary } from "./publication-state";
import { inboundEmailState } from "./inbound-address";

export function deleteConfirmation(bucket: BucketRow): string {
  return `delete ${bucket.id}`;
}

/** Unlocking is UI-only: the lock points at the dashboard page that can lift it. */
export function presentVisibilityLock(deps: Deps, bucket: BucketRow) {
  return bucket.visibilityLockedAt
    ? {
        locked: true,
        locked_at: bucket.visibilityLockedAt,
        reason: bucket.visibilityLockReason,
        unlock_url: `${deps.urls.baseUrl}/dashboard/buckets/${bucket.id}/settings`,
      }
    : { locked: false };
}

export function presentBucket(deps: Deps, bucket: BucketRow) {
  // Everything about publishing comes from one function the publications feature owns.
  const publication = publicationSummary(deps, bucket.id);
  const published = publication.published;
  const lifecycleActive = publication.lifecycleActive;
  const lock = activeLock(deps, bucket.id);
  return {
    id: bucket.id,
    title: bucket.title,
    description: bucket.description,
    tag_paths: bucket.tagPaths,
    metadata: bucket.metadata,
    archived: bucket.archivedAt !== null,
    archived_at: bucket.archivedAt,
    published,
    dashboard_url: `${deps.urls.baseUrl}/dashboard/buckets/${bucket.id}`,
    ...(publication.publicUrl ? { public_url: publication.publicUrl } : {}),
    website: publication.website,
    publication_lifecycle_active: lifecycleActive,
    archive: {
      allowed: !bucket.archivedAt && !lifecycleActive && !bucket.deletion,
      ...(lifecycleActive ? { required_action: "unpublish_first" } : {}),
    },
    unarchive: { allowed: bucket.archivedAt !== null && !bucket.deletion },
    delete: {
      allowed: !lifecycleActive && !bucket.deletion,
      ...(lifecycleActive ? { required_action: "unpublish_first" } : {}),
      confirmation: deleteConfirmation(bucket),
    },
    ...deps.gitSyncOf(bucket),
    visibility_change_lock: presentVisibilityLock(deps, bucket),
    inbound_email: inboundEmailState(deps, bucket),
    ...(bucket.deletion
      ? {
          lock: {
            kind: "bucket_delete",
            phase: bucket.deletion.phase,
            total_files: bucket.deletion.total_files,
            total_versions: bucket.deletion.total_versions,
            total_items: bucket.deletion.total_items,
            deleted_items: bucket.deletion.deleted_items,
            started_at: bucket.deletion.started_at,
          },
        }
      : lock
        ? { lock: { kind: "bucket_lock", message: lock.message, expires_at: lock.expiresAt, created_at: lock.createdAt } }
        : {}),
    created_at: bucket.createdAt,
    updated_at: bucket.updatedAt,
  };
}

/** The answer to archive and unarchive: the bucket as it is now, and whether anything changed. */
export function presentLifecycleResult(deps: Deps, result: { bucket: BucketRow; changed: boolean }) {
  return { bucket: presentBucket(deps, result.bucket), changed: result.changed };
}

/** The answer to a delete: gone at once (a tombstone), or a background delete with its progress. */
export function presentDeleteOutcome(deps: Deps, outcome: DeleteOutcome) {
  return outcome.kind === "deleted"
    ? { deleted: true as const, bucket: { id: outcome.bucketId, deleted: true as const, deleted_at: outcome.deletedAt } }
    : { deleted: false as const, bucket: { ...presentBucket(deps, outcome.bucket), deletion_started: true as const }, delete_progress: outcome.progress };
}
