// Browser plumbing for Pier's pages: the signed-in session behind a request, CSRF for forms
// before sign-in (double-submit cookie) and after (session-bound token), and safe redirects.
import type { Actor, Deps } from "../../../core/context";
import { randomSecret, safeEqual } from "../../../core/crypto";
import { ApiError } from "../../../core/errors";
import { apiCookieName, setCookie, soleCookieValue, apiHostIsHttps } from "../../../http/cookies";
import { clientIp } from "../../../http/request-info";
import { safeNext as sameHostPath } from "../../../http/safe-next";
import type { ClientMeta } from "../signin";
import { actorFromSession, checkCsrf, csrfToken, findSession, sessionTokenOf, type SessionRow } from "../sessions";
import { getUser, type UserRow } from "../service";
import { inSudoMode } from "../sudo";

export interface BrowserSession {
  session: SessionRow;
  actor: Actor;
  user: UserRow;
  /** The token forms of this session must echo (hidden field `csrf`). */
  csrf: string;
  /** The password was entered in this session in the last few minutes (sudo.ts). */
  sudo: boolean;
}

export function browserSession(deps: Deps, req: Request): BrowserSession | null {
  const session = findSession(deps, sessionTokenOf(deps, req));
  if (!session) return null;
  const actor = actorFromSession(deps, session);
  const user = getUser(deps, session.userId);
  if (!actor || !user) return null;
  return { session, actor, user, csrf: csrfToken(deps, session.id), sudo: inSudoMode(deps, req, session.id) };
}

export function clientMeta(req: Request): ClientMeta {
  return { ip: clientIp(req), userAgent: req.headers.get("user-agent") ?? "" };
}

/** A cookie of the API host's pages that expires after `maxAgeSeconds` (0 deletes it). */
export function hostCookie(deps: Deps, name: string, value: string, maxAgeSeconds: number): string {
  return setCookie(name, value, { maxAgeSeconds, secure: apiHostIsHttps(deps) });
}

// Pre-session forms (sign-in, sign-up): a random value in a cookie that must equal the form's
// hidden field. On https the cookie carries the __Host- prefix, which browsers only accept
// from this exact host, so a page on a sibling domain cannot plant one (cookie tossing).
export function preCsrfCookieName(deps: Deps): string {
  return apiCookieName(deps, "pier_csrf");
}

/** The double-submit value for a pre-session form, plus the Set-Cookie when it is new. */
export function preSessionCsrf(deps: Deps, req: Request): { token: string; cookies: string[] } {
  const existing = soleCookieValue(req, preCsrfCookieName(deps));
  if (existing && /^[A-Za-z0-9_-]{20,100}$/.test(existing)) return { token: existing, cookies: [] };
  const token = randomSecret(24);
  return { token, cookies: [hostCookie(deps, preCsrfCookieName(deps), token, 2 * 3600)] };
}

const formExpired = () => new ApiError("CSRF_FAILED", "This form expired or was sent from another site. Reload the page and try again.");

export function checkPreSessionCsrf(deps: Deps, req: Request, field: string | undefined): void {
  const cookie = soleCookieValue(req, preCsrfCookieName(deps));
  if (!cookie || !field || !safeEqual(cookie, field)) throw formExpired();
}

export function checkSessionCsrf(deps: Deps, s: BrowserSession, field: string | undefined): void {
  if (!checkCsrf(deps, s.session.id, field)) throw formExpired();
}

/** Only same-site paths: never `//host`, `/\host` or absolute URLs (no open redirects). */
export function safeNext(next: unknown, fallback = "/dashboard"): string {
  return sameHostPath(next, fallback);
}

/** A string field of a parsed form body (missing, repeated or non-string fields read as ""). */
export function field(body: unknown, name: string): string {
  const v = body && typeof body === "object" ? (body as Record<string, unknown>)[name] : undefined;
  return typeof v === "string" ? v : "";
}
