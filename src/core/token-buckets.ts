// Token buckets per key (client IP, account, recipient), the one rate-limit algorithm behind
// the HTTP API limiter and the SMTP receiver. Entries live in a bounded LRU so a scan from many
// addresses cannot grow memory without bound.
import { LRUCache } from "lru-cache";

interface Bucket {
  tokens: number;
  updated: number;
}

export class TokenBuckets {
  private readonly buckets: LRUCache<string, Bucket>;

  /** `perMinute` tokens refill evenly over a minute; a full bucket allows a burst of that many. */
  constructor(
    private readonly perMinute: number,
    maxKeys = 100_000,
  ) {
    this.buckets = new LRUCache<string, Bucket>({ max: maxKeys });
  }

  /** Like take, without taking: 0 when a token is there, otherwise the seconds until one is. */
  peek(key: string, now = Date.now()): number {
    const rate = this.perMinute / 60_000;
    const b = this.buckets.peek(key);
    const tokens = b ? Math.min(this.perMinute, b.tokens + (now - b.updated) * rate) : this.perMinute;
    return tokens >= 1 ? 0 : Math.ceil((1 - tokens) / rate / 1000);
  }

  /** Take one token for `key`: 0 when taken, otherwise the seconds (at least 1) until one is free. */
  take(key: string, now = Date.now()): number {
    const rate = this.perMinute / 60_000;
    const b = this.buckets.get(key) ?? { tokens: this.perMinute, updated: now };
    b.tokens = Math.min(this.perMinute, b.tokens + (now - b.updated) * rate);
    b.updated = now;
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    this.buckets.set(key, b);
    return ok ? 0 : Math.ceil((1 - b.tokens) / rate / 1000);
  }
}
