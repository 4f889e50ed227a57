// Optional TOTP two-factor (RFC 6238, 6 digits, 30 s, SHA-1: what every authenticator app
// understands), through the `otpauth` library. The seed is sealed at rest with the `totp` key,
// bound to its user row. Enrollment is two steps: a seed is stored but inactive until the user
// proves their app works by entering a code; disabling also needs a current code.
import { eq } from "drizzle-orm";
import { LRUCache } from "lru-cache";
import * as OTPAuth from "otpauth";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { users } from "../../db/schema";
import { transaction } from "../../db/tx";
import { endOtherSessions } from "./sessions";
import { signinGuard, tooManyTwoFactorCodes } from "./signin-limits";
import type { UserRow } from "./service";

const PERIOD = 30;

/** "Pier (host)": tells instances apart in the app. No colon: it separates issuer and label in URIs. */
function issuer(deps: Deps): string {
  return `Pier (${new URL(deps.urls.baseUrl).hostname.replace(/[:[\]]/g, "")})`;
}

function totpFor(deps: Deps, user: UserRow, secretBase32: string): OTPAuth.TOTP {
  return new OTPAuth.TOTP({
    issuer: issuer(deps),
    label: user.email,
    algorithm: "SHA1",
    digits: 6,
    period: PERIOD,
    secret: OTPAuth.Secret.fromBase32(secretBase32),
  });
}

function openSeed(deps: Deps, user: UserRow): string | null {
  return user.totpSealed ? deps.secrets.open("totp", user.totpSealed, user.id) : null;
}

// Codes already accepted, per running Pier, so one observed code cannot be replayed within
// its validity window. A field of Deps, built by this function.
export const newUsedTotpSteps = () => new LRUCache<string, true>({ max: 100_000, ttl: 3 * PERIOD * 1000 });

/** Check a code against the user's seed (one step of clock drift either way), once only. */
export function verifyTotp(deps: Deps, user: UserRow, code: string): boolean {
  const seed = openSeed(deps, user);
  const token = code.replace(/\s+/g, "");
  if (!seed || !/^\d{6}$/.test(token)) return false;
  const timestamp = deps.clock.now().getTime();
  const delta = totpFor(deps, user, seed).validate({ token, timestamp, window: 1 });
  if (delta === null) return false;
  const used = deps.usedTotpSteps;
  const key = `${user.id}:${Math.floor(timestamp / 1000 / PERIOD) + delta}`;
  if (used.has(key)) return false;
  used.set(key, true);
  return true;
}

export function twoFactorEnabled(user: UserRow): boolean {
  return !!user.totpSealed && !!user.totpEnabledAt;
}

export interface Enrollment {
  secret: string;
  uri: string;
}

/** Start (or show the pending) enrollment: a fresh seed, stored sealed and not yet active. */
export function beginTotpEnrollment(deps: Deps, user: UserRow, opts: { fresh?: boolean } = {}): Enrollment {
  if (twoFactorEnabled(user)) throw new ApiError("CONFLICT", "Two-factor authentication is already on.");
  let seed = opts.fresh ? null : openSeed(deps, user);
  if (!seed) {
    seed = new OTPAuth.Secret({ size: 20 }).base32;
    deps.db
      .update(users)
      .set({ totpSealed: deps.secrets.seal("totp", seed, user.id), totpEnabledAt: null, updatedAt: deps.clock.now().toISOString() })
      .where(eq(users.id, user.id))
      .run();
  }
  return { secret: seed, uri: totpFor(deps, user, seed).toString() };
}

/**
 * Turn two-factor on. Every other browser session of the user ends (the one that confirmed stays):
 * a user securing the account may be doing it because a session cookie leaked, and a session
 * made with the password alone must not outlive the new rule. API keys and agent connections stay (D251).
 */
export function confirmTotpEnrollment(deps: Deps, user: UserRow, code: string, currentSessionId: string): { endedSessions: number } {
  if (twoFactorEnabled(user)) throw new ApiError("CONFLICT", "Two-factor authentication is already on.");
  if (!user.totpSealed) throw new ApiError("CONFLICT", "Start two-factor set-up first.");
  if (!verifyTotp(deps, user, code))
    throw new ApiError("INVALID_TWO_FACTOR_CODE", "That code did not match. Check the time on your phone and enter the current 6-digit code.", {
      field: "code",
    });
  const now = deps.clock.now().toISOString();
  return transaction(deps.db, (tx) => {
    tx.update(users).set({ totpEnabledAt: now, updatedAt: now }).where(eq(users.id, user.id)).run();
    return { endedSessions: endOtherSessions(tx, user.id, currentSessionId) };
  });
}

/**
 * Turn two-factor off with a current code. The code is what stops a signed-in browser in sudo mode
 * (a stolen session plus the password) from removing the second factor for good, so wrong codes
 * use up the account's allowance as at sign-in (D119, D285); without a cap a million codes take minutes.
 */
export function disableTotp(deps: Deps, user: UserRow, code: string): void {
  if (!twoFactorEnabled(user)) throw new ApiError("CONFLICT", "Two-factor authentication is not on.");
  const guard = signinGuard(deps);
  const now = deps.clock.now().getTime();
  const wait = guard.twoFactorWait(user.id, now);
  if (wait > 0) throw tooManyTwoFactorCodes(wait);
  if (!verifyTotp(deps, user, code)) {
    guard.failTwoFactor(user.id, now);
    throw new ApiError("INVALID_TWO_FACTOR_CODE", "That code did not match; two-factor authentication stays on.", { field: "code" });
  }
  deps.db.update(users).set({ totpSealed: null, totpEnabledAt: null, updatedAt: deps.clock.now().toISOString() }).where(eq(users.id, user.id)).run();
}
