// An order's failure, in its own module: the manager tells it apart without loading the issuer
// (acme-client), which only the process that orders certificates needs.

/** An order failed; `retryAfterMs` is the CA's Retry-After (rate limits), when it sent one. */
export class IssueError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number | null,
    readonly rateLimited: boolean,
  ) {
    super(message);
  }
}
