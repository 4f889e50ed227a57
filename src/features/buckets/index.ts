// The buckets feature: buckets, their access checks, locks, variables, inbound address and deletion.
// What other features may use of it: they import "../buckets", never a file inside this folder.
import { registerCredentialsEnded } from "../accounts";
import { releaseBucketLocksOf } from "./locks";

// A revoked key's or connection's bucket locks go with it, as its file locks do (D257).
registerCredentialsEnded(releaseBucketLocksOf);

export {
  activeLock,
  assertNotDeleting,
  assertVisibilityUnlocked,
  bucketServesLinks,
  effectiveScope,
  hasAccountWideAdmin,
  loadBucket,
  loadMutableBucket,
} from "./authorization";
export type { BucketRow } from "./authorization";
export { deleteBucket } from "./delete";
export { accountReadOnly, inboundEmailState, lookupRecipient } from "./inbound-address";
export { archiveBucket, bulkBuckets, unarchiveBucket } from "./lifecycle";
export { assertNoUploadCommitting, lockBucket, lockVisibility, presentLock, unlockBucket, unlockVisibility } from "./locks";
export { BucketInput, BucketParams, BucketPatch, LockBody, PatchVariablesBody, TagPath, VisibilityLockBody } from "./model";
export { publicationSummaries } from "./publication-state";
export { listTags } from "./tags";
export { getVariables, mergeVariables, patchVariables } from "./variables";
export { presentBucket, presentDeleteOutcome, presentLifecycleResult } from "./present";
export { bucketMetadataOf, bucketRevision, createBucket, findActiveBucketByTitle, getBucket, listBucketPage, updateBucket } from "./service";
// Used by the task table and `pier admin` outside src/features.
export { BUCKET_DELETE_JOB, bucketDeleteJob } from "./delete";
export { setDisabledByAdmin } from "./inbound-address";
export { registerMetadataRule } from "./metadata-rules";
export { registerBucketDeletion, registerBucketRemoval } from "./removal-hooks";
