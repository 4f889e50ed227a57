// Sign-up and sign-in rules for browsers: sign-up modes and invites, password checks behind
// attempt limits, and the second step for users with two-factor on. Pages call these; they
// return a new session (token + lifetime) for the page to put in a cookie.
import { count, eq } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { safeEqual } from "../../core/crypto";
import { ApiError } from "../../core/errors";
import { users } from "../../db/schema";
import { transaction, type DbOrTx } from "../../db/tx";
import { accountPasswordRight, signinGuard, tooManyTwoFactorCodes } from "./signin-limits";
import { consumeInvite, usableInvite } from "./invites";
import { createSession } from "./sessions";
import {
  checkPasswordStrength,
  findUserByEmail,
  getUser,
  hashPassword,
  insertUserWithAccount,
  normalizeEmail,
  type CreatedUser,
  type UserRow,
} from "./service";
import { twoFactorEnabled, verifyTotp } from "./totp";

export interface ClientMeta {
  ip: string;
  userAgent: string;
}

export interface NewSession {
  token: string;
  sessionId: string;
  maxAgeSeconds: number;
  remember: boolean;
}

function startSession(deps: Deps, user: UserRow, remember: boolean, meta: ClientMeta): NewSession {
  const { token, session, maxAgeSeconds } = createSession(deps, user.id, { remember, userAgent: meta.userAgent, ip: meta.ip });
  deps.db.update(users).set({ lastLoginAt: deps.clock.now().toISOString() }).where(eq(users.id, user.id)).run();
  return { token, sessionId: session.id, maxAgeSeconds, remember };
}

/** Whether the sign-up page should ask for an invite code. */
export function signupNeedsInvite(deps: Deps): boolean {
  return deps.config.signupMode === "invite" && deps.db.select({ n: count() }).from(users).get()!.n > 0;
}

export function signupClosed(deps: Deps): boolean {
  return deps.config.signupMode === "closed" && deps.db.select({ n: count() }).from(users).get()!.n > 0;
}

/**
 * Every reason to refuse a sign-up, read-only: the mode, then the invite, then a taken email.
 * Run before the argon2id hash (a refused attempt must not cost 64 MiB and a tenth of a second
 * of CPU, uncounted) and again inside the write transaction. The invite comes before the email,
 * so without a valid invite nobody learns which emails have users.
 */
function admitSignup(deps: Deps, email: string, inviteCode: string | undefined, db: DbOrTx): void {
  const mode = deps.config.signupMode;
  if (db.select({ n: count() }).from(users).get()!.n === 0) return; // the first user: always
  if (mode === "closed") throw new ApiError("SIGNUP_CLOSED", "This Pier instance does not accept new sign-ups. Ask its operator for an account.");
  if (mode === "invite") {
    if (!inviteCode) throw new ApiError("INVITE_REQUIRED", "Sign-up on this instance needs an invite code.", { field: "invite" });
    usableInvite(deps, inviteCode, email, db);
  }
  if (findUserByEmail(deps, email, db)) throw new ApiError("CONFLICT", "A user with this email already exists.", { field: "email" });
}

export async function signUp(
  deps: Deps,
  input: { email: string; password: string; invite?: string; remember: boolean },
  meta: ClientMeta,
): Promise<CreatedUser & { session: NewSession }> {
  const email = normalizeEmail(input.email);
  checkPasswordStrength(input.password);
  const inviteCode = input.invite?.trim() || undefined;
  admitSignup(deps, email, inviteCode, deps.db);
  const guard = signinGuard(deps);
  // Counted from here, not from success: sign-ups sent side by side are all being hashed at once.
  const signingUp = guard.beginSignup(meta.ip, deps.clock.now().getTime());
  let created: CreatedUser;
  try {
    const passwordHash = await hashPassword(input.password);
    // Checked again inside the write transaction: two racing "first" sign-ups cannot both get
    // past a closed instance, and an invite is used once.
    created = transaction(deps.db, (tx) => {
      admitSignup(deps, email, inviteCode, tx);
      const first = tx.select({ n: count() }).from(users).get()!.n === 0;
      const result = insertUserWithAccount(deps, { email, passwordHash }, tx);
      if (!first && deps.config.signupMode === "invite") consumeInvite(deps, inviteCode!, email, result.user.id, tx);
      return result;
    });
    guard.recordSignup(meta.ip, deps.clock.now().getTime());
  } finally {
    signingUp();
  }
  return { ...created, session: startSession(deps, created.user, input.remember, meta) };
}

// A real argon2id hash of a random password: unknown emails cost the same verification time
// as known ones, so response time does not reveal which emails have accounts.
let dummyHash: Promise<string> | null = null;

export type SigninResult = { kind: "session"; session: NewSession; user: UserRow } | { kind: "two_factor"; pending: string; maxAgeSeconds: number };

export async function signIn(deps: Deps, input: { email: string; password: string; remember: boolean }, meta: ClientMeta): Promise<SigninResult> {
  const email = input.email.trim().toLowerCase().slice(0, 254);
  const guard = signinGuard(deps);
  let user: UserRow | undefined;
  const ok = await guard.guess(
    email,
    meta.ip,
    () => deps.clock.now().getTime(),
    async () => {
      user = email ? findUserByEmail(deps, email) : undefined;
      dummyHash ??= hashPassword(crypto.randomUUID());
      const right = await accountPasswordRight(input.password.slice(0, 1024), user?.passwordHash ?? dummyHash);
      return user !== undefined && right;
    },
  );
  if (!user || !ok) throw new ApiError("INVALID_CREDENTIALS", "Email or password is wrong.");
  // Said only to someone who knew the password, like the two-factor step.
  if (user.disabledAt) throw new ApiError("USER_DISABLED", "This user was disabled by the instance's admin.");
  if (twoFactorEnabled(user)) {
    // Told only to someone who knew the password: the account's code allowance is used up.
    const wait = guard.twoFactorWait(user.id, deps.clock.now().getTime());
    if (wait > 0) throw tooManyTwoFactorCodes(wait);
    return { kind: "two_factor", pending: pendingToken(deps, user.id, input.remember), maxAgeSeconds: PENDING_MS / 1000 };
  }
  guard.succeed(email, meta.ip);
  return { kind: "session", session: startSession(deps, user, input.remember, meta), user };
}

// Between the password and the code, the browser holds a short-lived signed token naming the
// user (in an HttpOnly cookie); no session exists until the code is right.
const PENDING_MS = 10 * 60_000;

export function pendingToken(deps: Deps, userId: string, remember: boolean): string {
  const body = `${userId}.${remember ? 1 : 0}.${deps.clock.now().getTime() + PENDING_MS}`;
  return `${body}.${deps.secrets.sign("signin", `2fa-pending:${body}`)}`;
}

export function readPendingToken(deps: Deps, token: string | undefined): { userId: string; remember: boolean } | null {
  const parts = (token ?? "").split(".");
  if (parts.length !== 4) return null;
  const [userId, remember, exp, sig] = parts as [string, string, string, string];
  if (!safeEqual(deps.secrets.sign("signin", `2fa-pending:${userId}.${remember}.${exp}`), sig)) return null;
  if (Number(exp) <= deps.clock.now().getTime()) return null;
  return { userId, remember: remember === "1" };
}

export function completeTwoFactor(deps: Deps, pending: string | undefined, code: string, meta: ClientMeta): { session: NewSession; user: UserRow } {
  const p = readPendingToken(deps, pending);
  const user = p ? getUser(deps, p.userId) : undefined;
  if (!p || !user || !twoFactorEnabled(user))
    throw new ApiError("TWO_FACTOR_REQUIRED", "Your sign-in expired. Enter your email and password again.", { restart: true });
  // Disabled during the step: no session row, which would wake up if the user were enabled again.
  if (user.disabledAt) throw new ApiError("USER_DISABLED", "This user was disabled by the instance's admin.");
  const guard = signinGuard(deps);
  const now = deps.clock.now().getTime();
  guard.check(user.email, meta.ip, now);
  // Over the account's allowance every pending sign-in ends: the password is asked again (and
  // answered with the wait), so guessing cannot go on from other addresses or older cookies.
  if (guard.twoFactorWait(user.id, now) > 0)
    throw new ApiError("TWO_FACTOR_REQUIRED", "Too many wrong codes. Sign in again with your email and password later.", { restart: true });
  if (!verifyTotp(deps, user, code)) {
    guard.fail(user.email, meta.ip, now);
    guard.failTwoFactor(user.id, now);
    throw new ApiError("INVALID_TWO_FACTOR_CODE", "That code did not match. Enter the current 6-digit code from your authenticator app.", { field: "code" });
  }
  guard.succeed(user.email, meta.ip);
  return { session: startSession(deps, user, p.remember, meta), user };
}
