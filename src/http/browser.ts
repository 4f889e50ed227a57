// Browser plumbing for Pier's pages: who is asking (client meta), cookies of the API host's
// pages, CSRF for forms before sign-in (double-submit cookie), safe redirects and form fields.
// The signed-in session behind a request is the accounts feature's (browserSession).
import type { Deps } from "../core/context";
import { randomSecret, safeEqual } from "../core/crypto";
import { ApiError } from "../core/errors";
import { apiCookieName, apiHostIsHttps, setCookie, soleCookieValue } from "./cookies";
import { clientIp } from "./request-info";
import { safeNext as sameHostPath } from "./safe-next";

/** The client facts a sign-in records with the session it makes. */
export function clientMeta(req: Request): { ip: string; userAgent: string } {
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

/** The one answer to a form whose CSRF proof is missing or wrong, before or after sign-in. */
export const formExpired = () => new ApiError("CSRF_FAILED", "This form expired or was sent from another site. Reload the page and try again.");

export function checkPreSessionCsrf(deps: Deps, req: Request, field: string | undefined): void {
  const cookie = soleCookieValue(req, preCsrfCookieName(deps));
  if (!cookie || !field || !safeEqual(cookie, field)) throw formExpired();
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
