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
  /** Tokens per millisecond. */
  private readonly rate: number;

  /** `perMinute` tokens refill evenly over a minute; a full bucket allows a burst of that many. */
  constructor(
    private readonly perMinute: number,
    maxKeys = 100_000,
  ) {
    this.buckets = new LRUCache<string, Bucket>({ max: maxKeys });
    this.rate = perMinute / 60_000;
  }

  /** The tokens a bucket holds at `now` (refilled since its last use); a key never seen is full. */
  private level(b: Bucket | undefined, now: number): number {
    return b ? Math.min(this.perMinute, b.tokens + (now - b.updated) * this.rate) : this.perMinute;
  }

  /** 0 when a token is there, otherwise the seconds (at least 1) until one is. */
  private waitFor(tokens: number): number {
    return tokens >= 1 ? 0 : Math.ceil((1 - tokens) / this.rate / 1000);
  }

  /** Like take, without taking. */
  peek(key: string, now = Date.now()): number {
    return this.waitFor(this.level(this.buckets.peek(key), now));
  }

  /** Take one token for `key`: 0 when taken, otherwise the seconds (at least 1) until one is free. */
  take(key: string, now = Date.now()): number {
    const b = this.buckets.get(key) ?? { tokens: this.perMinute, updated: now };
    b.tokens = this.level(b, now);
    b.updated = now;
    const wait = this.waitFor(b.tokens);
    if (wait === 0) b.tokens -= 1;
    this.buckets.set(key, b);
    return wait;
  }
}
