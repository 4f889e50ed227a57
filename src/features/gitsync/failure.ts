/** A sync that could not complete: `code` is stable and goes into github_sync.last_error. */
export class SyncFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}
