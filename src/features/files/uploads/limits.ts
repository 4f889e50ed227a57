// The upload tunables in one place (documented in docs/files.md).

/** Tests shrink finalizeChunk to exercise 202. */
export const uploadLimits = {
  sessionTtlMs: 60 * 60_000,
  maxFilesPerDescriptorCall: 100,
  maxExpectedFiles: 1_000_000,
  /** Files committed per finalize call before answering 202 finalize_pending. */
  finalizeChunk: 1000,
  finalizeRetryAfterS: 1,
  /** Closed sessions and committed upload entries are pruned after this long. */
  closedRetentionMs: 7 * 24 * 3600_000,
};
