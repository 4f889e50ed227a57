// The buckets feature: buckets, their access checks, locks, variables, inbound address and deletion.
// What other features may use of it: they import "../buckets", never a file inside this folder.
export {
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
export { inboundEmailState, lookupRecipient } from "./inbound-address";
export { archiveBucket, unarchiveBucket } from "./lifecycle";
export { assertNoUploadCommitting } from "./locks";
export { BucketInput, BucketParams, BucketPatch, TagPath } from "./model";
export { presentBucket, presentDeleteOutcome, presentLifecycleResult } from "./present";
export { bucketRevision, createBucket, findActiveBucketByTitle, getBucket, listBucketPage, listBuckets, updateBucket } from "./service";
// Used by the task table and `pier admin` outside src/features.
export { BUCKET_DELETE_JOB, bucketDeleteJob } from "./delete";
export { setDisabledByAdmin } from "./inbound-address";
