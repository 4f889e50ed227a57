// Token buckets per account (authenticated) or per client IP (anonymous), kept in a bounded
// LRU so an address scan cannot grow memory without bound.
import { LRUCache } from "lru-cache";
import { ApiError, type ErrorCode } from "../core/errors";

interface Bucket {
  tokens: number;
  updated: number;
}

export class RateLimiter {
  private readonly buckets = new LRUCache<string, Bucket>({ max: 100_000 });

  constructor(private readonly perMinute: number, private readonly code: ErrorCode = "RATE_LIMIT_EXCEEDED") {}

  /** Take one token or throw 429 with the seconds until one is free. */
  take(key: string, now = Date.now()): void {
    const rate = this.perMinute / 60_000;
    const b = this.buckets.get(key) ?? { tokens: this.perMinute, updated: now };
    b.tokens = Math.min(this.perMinute, b.tokens + (now - b.updated) * rate);
    b.updated = now;
    if (b.tokens < 1) {
      this.buckets.set(key, b);
      const retryAfter = Math.ceil((1 - b.tokens) / rate / 1000);
      throw new ApiError(this.code, undefined, { retry_after: retryAfter }, retryAfter);
    }
    b.tokens -= 1;
    this.buckets.set(key, b);
  }
}
