// The API reference at /docs, generated from the route schemas, working with no internet:
// Scalar's standalone script (sites/docs/scalar.js, scripts/vendor-scalar.ts) is embedded and
// served from /docs/assets, default web fonts off.
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import type { Deps } from "../core/context";
import { errorCatalogue } from "../core/errors";
import { serverVersion } from "../core/version";
import { siteAssets } from "../sites-assets.gen";
import { escapeHtml } from "./html";

export const openapiPlugin = () =>
  openapi({
    path: "/docs",
    specPath: "/docs/json",
    exclude: { paths: [/^\/docs/], staticFile: false }, // /.well-known/* are API documents, not static files
    // Offline and vendor-neutral: no request proxy (Scalar defaults to proxy.scalar.com), no
    // telemetry, and none of the vendor's AI agent or deploy/share toolbar (shown on localhost).
    scalar: {
      cdn: "/docs/assets/scalar.js",
      withDefaultFonts: false,
      proxyUrl: "",
      telemetry: false,
      showDeveloperTools: "never",
      agent: { disabled: true },
      hideClientButton: false,
    } as never,
    documentation: {
      info: {
        title: "Pier API",
        version: serverVersion,
        description:
          "Buckets, files, publishing, inbound email and agent access. Send `Authorization: Bearer pier_...`. " +
          "Every response is `{ data }` or `{ error: { message, code, request_id, docs_url, details? } }`. " +
          "Each operation's `x-pier-auth` names the scope it needs. Error codes: /docs/errors.",
      },
      components: {
        securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "API key (pier_...) or OAuth access token" } },
      },
      security: [{ bearer: [] }],
    },
  });

/**
 * /docs runs one script, Scalar's, from Pier itself; it fetches the spec from /docs/json and
 * styles itself inline. Nothing else may load, frame the page or post anywhere (Scalar's calls
 * to its own cloud search are refused too). The hash is the openapi plugin's configuration
 * `<script>` element, which holds only whitespace: allowed so the browser reports no violation.
 */
const EMPTY_CONFIG_SCRIPT_HASH = "'sha256-TcUB1mzXiQO4GxpTRZ0EMpOXKMU3u+n/q1WrgVIcs1I='";
export const DOCS_CSP = [
  "default-src 'none'",
  `script-src 'self' ${EMPTY_CONFIG_SCRIPT_HASH}`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

/** Headers of the API reference pages (HTML), set before the openapi plugin answers. */
export function docsPageHeaders(pathname: string): Record<string, string> | null {
  if (pathname !== "/docs" && pathname !== "/docs/" && pathname !== "/docs/errors") return null;
  return { "content-security-policy": DOCS_CSP, "x-content-type-options": "nosniff", "x-frame-options": "DENY", "referrer-policy": "same-origin" };
}

export function errorsPage(): string {
  const rows = Object.entries(errorCatalogue)
    .map(([code, e]) => `<tr id="${code}"><td><code>${code}</code></td><td>${e.status}</td><td>${escapeHtml(e.hint)}</td></tr>`)
    .join("\n");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Pier error codes</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}td,th{padding:.4rem .6rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}tr:target{background:#fff6c8}</style>
</head><body><h1>Pier error codes</h1><p>Every error response is <code>{ "error": { "message", "code", "request_id", "docs_url", "details"? } }</code>. Use <code>code</code> for recovery logic; quote <code>request_id</code> when reporting a problem.</p>
<table><thead><tr><th>Code</th><th>HTTP</th><th>What to do</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`;
}

export const docsRoutes = (_deps: Deps) =>
  new Elysia({ name: "docs" })
    .get(
      "/docs/assets/scalar.js",
      () =>
        new Response(Bun.file(siteAssets["docs/scalar.js"]!), {
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
        }),
      { detail: { hide: true } },
    )
    .get("/docs/errors", () => new Response(errorsPage(), { headers: { "content-type": "text/html; charset=utf-8" } }), { detail: { hide: true } });
