// Failed sign-in attempt limits, per email and per client IP: a fixed number of failures in a
// sliding window, then refusals until the oldest failure leaves the window. Kept in memory
// (bounded LRU) per running Pier: a restart forgets them, which only ever helps the legitimate
// user, and the password hash (argon2id) keeps offline-speed guessing out of reach anyway.
import { LRUCache } from "lru-cache";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";

export interface AttemptLimits {
  perEmail: number;
  perIp: number;
  windowMs: number;
  /** Accounts one client IP may create per hour (open sign-up must not become a spam tap). */
  signupsPerIpHour: number;
}

export const defaultAttemptLimits: AttemptLimits = { perEmail: 10, perIp: 50, windowMs: 15 * 60_000, signupsPerIpHour: 20 };

/** Failure timestamps per key; pure (time is passed in) so it is unit-testable. */
export class FailureWindow {
  private readonly failures = new LRUCache<string, number[]>({ max: 50_000 });

  constructor(private readonly max: number, private readonly windowMs: number) {}

  private recent(key: string, now: number): number[] {
    return (this.failures.get(key) ?? []).filter((t) => t > now - this.windowMs);
  }

  /** Seconds until another attempt is allowed, or 0 when one is allowed now. */
  blockedFor(key: string, now: number): number {
    const recent = this.recent(key, now);
    if (recent.length < this.max) return 0;
    return Math.max(1, Math.ceil((recent[recent.length - this.max]! + this.windowMs - now) / 1000));
  }

  fail(key: string, now: number): void {
    const recent = this.recent(key, now);
    recent.push(now);
    this.failures.set(key, recent.slice(-this.max));
  }

  clear(key: string): void {
    this.failures.delete(key);
  }
}

export class SigninGuard {
  private readonly byEmail: FailureWindow;
  private readonly byIp: FailureWindow;
  private readonly signups: FailureWindow;

  constructor(limits: AttemptLimits = defaultAttemptLimits) {
    this.byEmail = new FailureWindow(limits.perEmail, limits.windowMs);
    this.byIp = new FailureWindow(limits.perIp, limits.windowMs);
    this.signups = new FailureWindow(limits.signupsPerIpHour, 3600_000);
  }

  checkSignup(ip: string, now: number): void {
    const wait = this.signups.blockedFor(`s:${ip}`, now);
    if (wait > 0) throw new ApiError("TOO_MANY_ATTEMPTS", `Too many new accounts from your network address. Try again in ${Math.ceil(wait / 60)} minutes.`, { retry_after: wait }, wait);
  }

  recordSignup(ip: string, now: number): void {
    this.signups.fail(`s:${ip}`, now);
  }

  /** Throws TOO_MANY_ATTEMPTS before any password is checked when a limit is reached. */
  check(email: string, ip: string, now: number): void {
    const emailWait = this.byEmail.blockedFor(`e:${email}`, now);
    const ipWait = this.byIp.blockedFor(`i:${ip}`, now);
    const wait = Math.max(emailWait, ipWait);
    if (wait > 0) {
      const minutes = Math.ceil(wait / 60);
      const who = emailWait >= ipWait ? "this email" : "your network address";
      throw new ApiError("TOO_MANY_ATTEMPTS", `Too many failed sign-in attempts for ${who}. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`, { retry_after: wait }, wait);
    }
  }

  fail(email: string, ip: string, now: number): void {
    this.byEmail.fail(`e:${email}`, now);
    this.byIp.fail(`i:${ip}`, now);
  }

  succeed(email: string): void {
    this.byEmail.clear(`e:${email}`);
  }
}

// One guard per running Pier (tests run several in one process), without a global.
const guards = new WeakMap<object, SigninGuard>();

export function signinGuard(deps: Deps): SigninGuard {
  let g = guards.get(deps);
  if (!g) {
    g = new SigninGuard();
    guards.set(deps, g);
  }
  return g;
}
