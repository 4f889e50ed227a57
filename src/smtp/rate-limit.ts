// Token buckets for the SMTP receiver (per sending IP, per recipient key). Unlike the HTTP
// limiter this one answers yes/no: an SMTP refusal is a 4xx reply, not an ApiError. Entries
// live in a bounded LRU so a scan from many addresses cannot grow memory without bound.
import { LRUCache } from "lru-cache";

interface Bucket {
  tokens: number;
  updated: number;
}

export class TokenBuckets {
  private readonly buckets = new LRUCache<string, Bucket>({ max: 50_000 });

  /** `perMinute` tokens refill evenly over a minute; a full bucket allows a burst of that many. */
  constructor(private readonly perMinute: number) {}

  /** Take one token for `key`; false means "over the limit, try again later". */
  take(key: string, now = Date.now()): boolean {
    const rate = this.perMinute / 60_000;
    const b = this.buckets.get(key) ?? { tokens: this.perMinute, updated: now };
    b.tokens = Math.min(this.perMinute, b.tokens + (now - b.updated) * rate);
    b.updated = now;
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    this.buckets.set(key, b);
    return ok;
  }
}
