// Failed sign-in attempt limits. Password guesses follow the shared guess policy
// (src/core/guess-limits.ts): per client address on one email, per address overall, and a
// smaller per-address allowance while an email is under attack from many addresses; never a lock
// on the email itself, which would let anyone lock its owner out. Sign-ups are counted per
// address. Kept in memory (bounded LRU) per running Pier: a restart forgets them, which only
// ever helps the legitimate user, and argon2id keeps offline-speed guessing out of reach anyway.
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { verifyPasswordInTurn } from "../../core/password-checks";
import { addressKey, FailureLog, GuessLimiter, PendingGuesses, type GuessPolicy } from "../../core/guess-limits";

export interface AttemptLimits {
  /** Failures one address may make on one email (fewer while the email is under attack). */
  perEmail: number;
  /** Failures one address may make over all emails. */
  perIp: number;
  windowMs: number;
  /** Accounts one client IP may create per hour (open sign-up must not become a spam tap). */
  signupsPerIpHour: number;
}

export const defaultAttemptLimits: AttemptLimits = { perEmail: 10, perIp: 50, windowMs: 15 * 60_000, signupsPerIpHour: 20 };

/** Every 50 failures on an email (from anyone) halve each address's allowance on it, down to 3. */
const ATTACK_STEP = 50;
const FLOOR = 3;

/**
 * Wrong two-factor codes one user may enter in the window, from all addresses and pending
 * sign-ins together: the code is the last secret standing once the password is known, and
 * per-address limits alone let a password holder with many addresses guess on. Only someone who
 * knows the password can use this allowance up.
 */
export const TWO_FACTOR_FAILURES_PER_USER = 5;

/**
 * An account password checked in the account lane of the password checks' queue
 * (core/password-checks.ts). Past the queue it throws PASSWORD_CHECKS_BUSY: come back; a busy
 * answer is no guess, so the guard counts nothing.
 */
export async function accountPasswordRight(password: string, hash: string | Promise<string>): Promise<boolean> {
  const right = await verifyPasswordInTurn(password, hash, "account");
  if (right === null) throw new ApiError("PASSWORD_CHECKS_BUSY", "Pier is checking many passwords right now. Please try again in a few seconds.");
  return right;
}

/** The answer while an account's wrong-code allowance is used up (sign-in, turning two-factor off). */
export function tooManyTwoFactorCodes(wait: number): ApiError {
  const minutes = Math.ceil(wait / 60);
  return new ApiError(
    "TOO_MANY_ATTEMPTS",
    `Too many wrong two-factor codes for this account. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`,
    { retry_after: wait },
    wait,
  );
}

export class SigninGuard {
  private readonly guesses: GuessLimiter;
  private readonly signups = new FailureLog(3600_000);
  // Sign-ups between the check and their record (the argon2id hash runs in between): counted
  // against the allowance, or a burst sent side by side all passed the check.
  private readonly signupsInFlight = new PendingGuesses();
  private readonly codes: FailureLog;

  constructor(private readonly limits: AttemptLimits = defaultAttemptLimits) {
    const policy: GuessPolicy = {
      perPair: limits.perEmail,
      perAddress: limits.perIp,
      attackStep: ATTACK_STEP,
      floor: Math.min(FLOOR, limits.perEmail),
      windowMs: limits.windowMs,
    };
    this.guesses = new GuessLimiter(policy);
    this.codes = new FailureLog(limits.windowMs);
  }

  checkSignup(ip: string, now: number): void {
    const key = addressKey(ip);
    const wait = this.signups.waitFor(key, this.limits.signupsPerIpHour, now, this.signupsInFlight.of(key));
    if (wait > 0)
      throw new ApiError(
        "RATE_LIMIT_EXCEEDED",
        `Too many new accounts from your network address. Try again in ${Math.ceil(wait / 60)} minutes.`,
        { retry_after: wait },
        wait,
      );
  }

  /** checkSignup, then the sign-up counts against the allowance until the returned function runs (record it first if it succeeded). */
  beginSignup(ip: string, now: number): () => void {
    this.checkSignup(ip, now);
    return this.signupsInFlight.begin(addressKey(ip));
  }

  recordSignup(ip: string, now: number): void {
    this.signups.add(addressKey(ip), now, this.limits.signupsPerIpHour);
  }

  /** Seconds until this user may try a two-factor code again (0: now). */
  twoFactorWait(userId: string, now: number): number {
    return this.codes.waitFor(userId, TWO_FACTOR_FAILURES_PER_USER, now);
  }

  failTwoFactor(userId: string, now: number): void {
    this.codes.add(userId, now, TWO_FACTOR_FAILURES_PER_USER);
  }

  /** Throws TOO_MANY_ATTEMPTS before any password is checked when this address must wait. */
  check(email: string, ip: string, now: number): void {
    const { wait, reason } = this.guesses.check(email, ip, now);
    if (wait > 0) {
      const minutes = Math.ceil(wait / 60);
      const what = reason === "address" ? "from your network address" : "for this email from your network address";
      throw new ApiError(
        "TOO_MANY_ATTEMPTS",
        `Too many failed sign-in attempts ${what}. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`,
        { retry_after: wait },
        wait,
      );
    }
  }

  /**
   * One password guess: the limits are checked (429), then `verify` runs counted as a guess in
   * flight, and a false answer is recorded as a failure. Returns what `verify` said.
   */
  async guess(email: string, ip: string, now: () => number, verify: () => Promise<boolean>): Promise<boolean> {
    this.check(email, ip, now());
    const verifying = this.begin(email, ip);
    try {
      const ok = await verify();
      if (!ok) this.fail(email, ip, now());
      return ok;
    } finally {
      verifying();
    }
  }

  /** A password about to be verified: counted against the limits until the returned function runs. */
  begin(email: string, ip: string): () => void {
    return this.guesses.begin(email, ip);
  }

  fail(email: string, ip: string, now: number): void {
    this.guesses.fail(email, ip, now);
  }

  succeed(email: string, ip: string): void {
    this.guesses.succeed(email, ip);
  }
}

// One guard per running Pier (tests run several in one process), a field of Deps.
export function signinGuard(deps: Deps): SigninGuard {
  return deps.signinGuard;
}
