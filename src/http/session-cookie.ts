// The browser-session cookie: a random token in a host-only, HttpOnly, SameSite=Lax cookie on the
// API host (never a Domain attribute, so published sites under the sites domain never see it),
// named `__Host-pier_session` on https so no other host can plant one, and ignored when a
// request carries two (see apiCookieName, soleCookieValue). The accounts feature makes and
// checks the token (accounts/sessions.ts); this file only carries it.
import type { Deps } from "../core/context";
import { apiCookieName, apiHostIsHttps, setCookie, soleCookieValue } from "./cookies";

export const SESSION_COOKIE = "pier_session";

/** `__Host-pier_session` when the API host is https, `pier_session` over plain http. */
export const sessionCookieName = (deps: Deps): string => apiCookieName(deps, SESSION_COOKIE);

/** The session token the request carries: none when it carries none, or two (cookie tossing). */
export const sessionTokenOf = (deps: Deps, req: Request): string | undefined => soleCookieValue(req, sessionCookieName(deps));

/** `persistent: false` (no "remember me") makes a browser-session cookie: gone when the browser closes. */
export function sessionCookie(deps: Deps, token: string, maxAgeSeconds: number, persistent = true): string {
  return setCookie(sessionCookieName(deps), token, { maxAgeSeconds: persistent ? maxAgeSeconds : undefined, secure: apiHostIsHttps(deps) });
}

export function clearSessionCookie(deps: Deps): string {
  return setCookie(sessionCookieName(deps), "", { maxAgeSeconds: 0, secure: apiHostIsHttps(deps) });
}
