// The API's rate limits: token buckets per account (authenticated) or per client IP
// (anonymous); an empty bucket is a 429 that says when to come back.
import { ApiError, type ErrorCode } from "../core/errors";
import { TokenBuckets } from "../core/token-buckets";

export class RateLimiter {
  private readonly buckets: TokenBuckets;

  constructor(
    perMinute: number,
    private readonly code: ErrorCode = "RATE_LIMIT_EXCEEDED",
  ) {
    this.buckets = new TokenBuckets(perMinute);
  }

  /** Take one token or throw 429 with the seconds until one is free. */
  take(key: string, now = Date.now()): void {
    const retryAfter = this.buckets.take(key, now);
    if (retryAfter > 0) throw new ApiError(this.code, undefined, { retry_after: retryAfter }, retryAfter);
  }
}
