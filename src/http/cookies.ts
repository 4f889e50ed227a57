// Reading and writing Pier's cookies, on the API host and on site hosts alike. Every cookie Pier
// sets is host-only (no Domain attribute, so it never reaches a sibling host), Path=/, HttpOnly
// and SameSite=Lax, and Secure when the host is served over https.
import type { Deps } from "../core/context";

export interface CookieOptions {
  /** Omitted: a browser-session cookie, gone when the browser closes. 0 deletes the cookie. */
  maxAgeSeconds?: number;
  secure: boolean;
}

export function setCookie(name: string, value: string, opts: CookieOptions): string {
  const maxAge = opts.maxAgeSeconds === undefined ? "" : `; Max-Age=${opts.maxAgeSeconds}`;
  return `${name}=${value}; Path=/${maxAge}; HttpOnly; SameSite=Lax${opts.secure ? "; Secure" : ""}`;
}

/** Cookies for the API host's pages are Secure exactly when its public URL is https. */
export const apiHostIsHttps = (deps: Deps): boolean => deps.urls.baseUrl.startsWith("https:");

/** Every raw value sent under `name`: a browser sends several when cookies of that name were set for other paths or hosts. */
export function cookieValues(req: Request, name: string): string[] {
  const raw = req.headers.get("cookie");
  if (!raw) return [];
  const values: string[] = [];
  for (const part of raw.split(";")) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) values.push(part.slice(i + 1).trim());
  }
  return values;
}

/**
 * The name of a cookie of the API host's own pages. On https it carries the `__Host-` prefix:
 * browsers accept such a cookie only from this exact host, Secure, with Path=/ and no Domain,
 * so a published site on a sibling or child host cannot plant ("toss") one, not even with a
 * longer Path. Over plain http (local development) browsers do not reliably accept `__Host-`
 * cookies (Safari refuses Secure cookies on http://localhost), so the plain name is used; plain
 * http has no integrity against the network anyway.
 */
export function apiCookieName(deps: Deps, base: string): string {
  return apiHostIsHttps(deps) ? `__Host-${base}` : base;
}

/**
 * The one value sent under `name`, URI-decoded. Two or more values mean a cookie of that name
 * was also set for another path or a parent domain (cookie tossing): Pier cannot tell which one
 * it set, so it trusts none of them and the request reads as carrying no such cookie.
 */
export function soleCookieValue(req: Request, name: string): string | undefined {
  const values = cookieValues(req, name);
  if (values.length !== 1) return undefined;
  try {
    return decodeURIComponent(values[0]!);
  } catch {
    return undefined;
  }
}
