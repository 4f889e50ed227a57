// Server-rendered pages on the API host: HTML responses and redirects with the headers every
// Pier page carries (no caching of personal pages, no framing, no third-party anything).
import type { ApiError } from "../core/errors";
import { errorCatalogue } from "../core/errors";

/** Pier's own pages (API host and site hosts) run no script at all and load nothing from elsewhere; forms only post back to Pier itself. */
export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const pageHeaders = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "content-security-policy": PAGE_CSP,
};

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text or a quoted attribute value made safe to put into HTML (the one escaper for hand-built pages). */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

export interface PageOptions {
  /** HTTP status from the error catalogue when the page reports an ApiError. */
  error?: ApiError;
  cookies?: string[];
  /** Status for pages that report no ApiError (e.g. OAuth's RFC-shaped refusals). */
  status?: number;
  /** A page-specific Content-Security-Policy instead of PAGE_CSP. */
  csp?: string;
}

export function htmlResponse(html: string, opts: PageOptions = {}): Response {
  const headers = new Headers(pageHeaders);
  if (opts.csp) headers.set("content-security-policy", opts.csp);
  for (const c of opts.cookies ?? []) headers.append("set-cookie", c);
  if (opts.error?.retryAfter !== undefined) headers.set("retry-after", String(Math.max(1, Math.ceil(opts.error.retryAfter))));
  return new Response(html, { status: opts.error ? errorCatalogue[opts.error.code].status : (opts.status ?? 200), headers });
}

/** 303 See Other: after a form POST the browser follows with GET (no re-submission on reload). */
export function redirectResponse(location: string, cookies: string[] = []): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const c of cookies) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}
