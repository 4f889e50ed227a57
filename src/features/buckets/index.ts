// The buckets feature: buckets, their access checks, locks, variables, inbound address and deletion.
// What other features may use of it: they import "../buckets", never a file inside this folder.
export { assertNotDeleting, assertVisibilityUnlocked, bucketServesLinks, effectiveScope, hasAccountWideAdmin, loadBucket, loadMutableBucket } from "./access";
export type { BucketRow } from "./access";
export { deleteBucket } from "./delete";
export { inboundEmailState, lookupRecipient } from "./inbound-address";
export { archiveBucket, unarchiveBucket } from "./lifecycle";
export { assertNoUploadCommitting } from "./locks";
export { BucketInput, BucketParams, BucketPatch, TagPath } from "./model";
export { presentBucket, presentDeleteOutcome, presentLifecycleResult } from "./present";
export { createBucket, getBucket, listBucketPage, listBuckets, updateBucket } from "./service";
