// Brute-force limit for user codes typed or followed on the approval page: a user (or, before
// sign-in, an address) gets a few wrong codes per window. With ~34.6 bits per code and 10
// misses per user (50 per address, which may be shared) per 15 minutes, guessing a live code
// is out of reach.
import { LRUCache } from "lru-cache";
import type { Clock } from "../../core/clock";
import { ApiError } from "../../core/errors";

const MAX_MISSES_PER_USER = 10;
const MAX_MISSES_PER_IP = 50;
const WINDOW_MS = 15 * 60_000;

class MissCounter {
  private readonly misses = new LRUCache<string, { n: number; since: number }>({ max: 50_000 });
  constructor(private readonly clock: Clock, private readonly max: number) {}

  /** Throws 429 while `key` is over the limit. */
  check(key: string): void {
    const m = this.current(key);
    if (m && m.n >= this.max) {
      const retryAfter = Math.ceil((m.since + WINDOW_MS - this.clock.now().getTime()) / 1000);
      throw new ApiError("RATE_LIMIT_EXCEEDED", "Too many wrong Connection IDs. Wait a while, then start the login again from your terminal.", { retry_after: retryAfter }, retryAfter);
    }
  }

  miss(key: string): void {
    const m = this.current(key) ?? { n: 0, since: this.clock.now().getTime() };
    m.n += 1;
    this.misses.set(key, m);
  }

  private current(key: string) {
    const m = this.misses.get(key);
    if (m && this.clock.now().getTime() - m.since > WINDOW_MS) {
      this.misses.delete(key);
      return undefined;
    }
    return m;
  }
}

/** Wrong user codes counted for the signed-in user and for the client address, each with its own limit. */
export class UserCodeGuard {
  private readonly byUser: MissCounter;
  private readonly byIp: MissCounter;

  constructor(clock: Clock) {
    this.byUser = new MissCounter(clock, MAX_MISSES_PER_USER);
    this.byIp = new MissCounter(clock, MAX_MISSES_PER_IP);
  }

  /** Throws 429 while the user or the address is over its limit. */
  check(userId: string, ip: string): void {
    this.byUser.check(userId);
    this.byIp.check(ip);
  }

  miss(userId: string, ip: string): void {
    this.byUser.miss(userId);
    this.byIp.miss(ip);
  }
}
