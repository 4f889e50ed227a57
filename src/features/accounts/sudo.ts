// Sudo mode: the account-security actions of a browser session (API keys, two-factor, agent
// connections) need the password to have been entered in this very session within the last
// SUDO_TTL_S seconds, as GitHub's sudo mode does. A session opened by a browser login link never
// saw the password, so it must confirm it first: a link minted by an agent's credential cannot be
// turned into new keys or a second factor that locks the owner out.
//
// Proof of a recent password is a cookie holding the time of the check and an HMAC over that
// time and the session id: bound to one session, worthless in any other, and it needs no state
// on the server (every serving worker can check it).
import type { Actor, Deps } from "../../core/context";
import { safeEqual } from "../../core/crypto";
import { ApiError } from "../../core/errors";
import { apiCookieName, apiHostIsHttps, setCookie, soleCookieValue } from "../../http/cookies";
import { accountPasswordRight, signinGuard } from "./signin-limits";
import type { UserRow } from "./service";

export const SUDO_TTL_S = 600;
export const CONFIRM_PASSWORD_PATH = "/account/confirm-password";

const cookieName = (deps: Deps) => apiCookieName(deps, "pier_sudo");
const signature = (deps: Deps, sessionId: string, at: number) => deps.secrets.sign("signin", `sudo:${sessionId}:${at}`);

/** The Set-Cookie that opens sudo mode for SUDO_TTL_S seconds in this session. */
export function sudoCookie(deps: Deps, sessionId: string): string {
  const at = deps.clock.now().getTime();
  return setCookie(cookieName(deps), `${at}.${signature(deps, sessionId, at)}`, { maxAgeSeconds: SUDO_TTL_S, secure: apiHostIsHttps(deps) });
}

export function clearSudoCookie(deps: Deps): string {
  return setCookie(cookieName(deps), "", { maxAgeSeconds: 0, secure: apiHostIsHttps(deps) });
}

/** Did this session's user enter the password in the last SUDO_TTL_S seconds? */
export function inSudoMode(deps: Deps, req: Request, sessionId: string): boolean {
  const [atRaw, sig] = (soleCookieValue(req, cookieName(deps)) ?? "").split(".");
  const at = Number(atRaw);
  if (!sig || !Number.isSafeInteger(at)) return false;
  const age = deps.clock.now().getTime() - at;
  return age >= 0 && age <= SUDO_TTL_S * 1000 && safeEqual(signature(deps, sessionId, at), sig);
}

/**
 * Refuse an account-security action of a browser session outside sudo mode. Bearer credentials
 * pass: what they may do is settled by their scope (see assertCanManageKeys and friends).
 */
export function requireSudo(deps: Deps, req: Request, actor: Actor): void {
  if (actor.kind !== "session" || inSudoMode(deps, req, actor.credentialId)) return;
  throw new ApiError("REAUTHENTICATION_REQUIRED", "Confirm your password to change sign-in security, API keys or connections.", {
    reauthenticate_url: `${deps.urls.baseUrl}${CONFIRM_PASSWORD_PATH}`,
    valid_for_seconds: SUDO_TTL_S,
  });
}

/** Check the signed-in user's password for sudo mode; wrong guesses count like sign-in failures. */
export async function confirmPassword(deps: Deps, user: UserRow, password: string, ip: string): Promise<void> {
  const guard = signinGuard(deps);
  const ok = await guard.guess(
    user.email,
    ip,
    () => deps.clock.now().getTime(),
    async () => !!password && password.length <= 1024 && (await accountPasswordRight(password, user.passwordHash)),
  );
  if (!ok) throw new ApiError("INVALID_CREDENTIALS", "That password is not right.", { field: "password" });
  guard.succeed(user.email, ip);
}
