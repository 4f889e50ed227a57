// One call per finished request, at the listener (src/runtime.ts): counts it into the
// preallocated HTTP metrics and, when the access log is on, writes its one log line. The
// classification reads the Host header and the start of the URL in place: no URL object, no
// label strings, no allocation on the site server's hot path (bench/README.md, "Metrics cost").
import type { Server } from "bun";
import type { Deps } from "../core/context";
import { HOST_KINDS, ROUTE_GROUPS, STATUS_CLASSES } from "../core/pier-metrics";
import { classifyHost, type HostKind } from "./host-router";
import { clientAddress } from "./server";

const H = { api: HOST_KINDS.indexOf("api"), site: HOST_KINDS.indexOf("site"), storage: HOST_KINDS.indexOf("storage"), other: HOST_KINDS.indexOf("other") };
const G = Object.fromEntries(ROUTE_GROUPS.map((g, i) => [g, i])) as Record<(typeof ROUTE_GROUPS)[number], number>;
const STATUSES = STATUS_CLASSES.length;

/** The path's first bytes decide the API route group (prefix → group, first match wins). */
const API_PREFIXES: [string, number][] = [
  ["/api/", G.api],
  ["/_storage/", G.storage],
  ["/mcp", G.mcp],
  ["/oauth/", G.oauth],
  ["/.well-known/oauth", G.oauth],
  ["/.well-known/acme-challenge/", G.acme],
  ["/docs", G.docs],
  ["/metrics", G.ops],
  ["/livez", G.ops],
  ["/readyz", G.ops],
];

/** Offset of the path in an absolute URL string ("http://host:port/path" → index of "/path"). */
function pathStart(url: string): number {
  const p = url.indexOf("/", url.indexOf("//") + 2);
  return p < 0 ? url.length : p;
}

export type RequestMeter = (
  req: Request,
  res: Response,
  startedMs: number,
  server: Server<unknown>,
  /** The host's kind as the dispatcher classified it (null: classify the Host header again). */
  hostKind?: HostKind["kind"] | null,
  /** The request's path as the site server split it (null: read it from req.url). */
  pathname?: string | null,
) => Response;

/**
 * What dispatching one request learned, for its meter: the listener clears it, the dispatcher
 * (host kind) and the site server (path) fill it, and the listener reads it as soon as the handler
 * returns, before any other request runs. A late write (an answer finished asynchronously) lands
 * between requests and is cleared before the next one.
 */
export interface RequestNote {
  host: HostKind["kind"] | null;
  pathname: string | null;
}
export const newRequestNote = (): RequestNote => ({ host: null, pathname: null });

export function requestMeter(deps: Deps): RequestMeter {
  const m = deps.metrics;
  const stride = ROUTE_GROUPS.length * STATUSES;
  const baseUrlConfigured = deps.config.baseUrl !== null;
  const access = deps.config.accessLog ? accessLogger(deps) : null;
  return (req, res, startedMs, server, hostKind = null, pathname = null) => {
    const seconds = (performance.now() - startedMs) / 1000;
    const kind = hostKind ?? classifyHost(req.headers.get("host"), deps.urls, baseUrlConfigured).kind;
    // The site server's own split of the URL when it answered: a cached file's answer does not
    // read req.url again (Bun builds that string on each read).
    const url = pathname ?? req.url;
    const at = pathname === null ? pathStart(url) : 0;
    let host: number;
    let group: number;
    if (kind === "site" || kind === "custom") {
      host = H.site;
      group = url.startsWith("/_pier/", at) ? G.site_internal : url.startsWith("/.well-known/acme-challenge/", at) ? G.acme : G.page;
    } else if (kind === "api") {
      host = H.api;
      group = G.dashboard;
      for (const [prefix, g] of API_PREFIXES) {
        if (url.startsWith(prefix, at)) {
          group = g;
          break;
        }
      }
      if (group === G.storage) host = H.storage;
    } else {
      host = H.other;
      group = url.startsWith("/.well-known/acme-challenge/", at) ? G.acme : G.other;
    }
    const status = res.status;
    const cls = status < 100 ? 4 : status >= 600 ? 4 : ((status / 100) | 0) - 1;
    const slot = host * stride + group * STATUSES + cls;
    m.httpRequests.inc(slot);
    m.httpDuration.observe(slot, seconds);
    if (access) access(req, res, server, host, group, seconds);
    return res;
  };
}

/**
 * The access log line: request id, host kind, route group, method, status, duration, bytes and
 * the client address as --log-client-ip says. Never the path or query (signed storage tokens and
 * email addresses travel there), never a header value.
 */
function accessLogger(deps: Deps) {
  const mode = deps.config.logClientIp;
  return (req: Request, res: Response, server: Server<unknown>, host: number, group: number, seconds: number) => {
    const length = res.headers.get("content-length");
    const fields: Record<string, unknown> = {
      request_id: res.headers.get("x-request-id"),
      host_kind: HOST_KINDS[host],
      route: ROUTE_GROUPS[group],
      method: req.method,
      status: res.status,
      ms: Math.round(seconds * 10_000) / 10,
      bytes: length === null ? null : Number(length),
    };
    if (mode !== "off") {
      const ip = clientAddress(req, server, deps.config);
      fields.client = mode === "full" ? ip : truncateIp(ip);
    }
    deps.log.info("request", fields);
  };
}

/** An address without its host part: IPv4 to its /24, IPv6 to its /48 (enough to see networks, not people). */
export function truncateIp(ip: string): string {
  const v4 = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.\d+$/i.exec(ip);
  if (v4) return `${v4[1]}.${v4[2]}.${v4[3]}.0/24`;
  if (!ip.includes(":")) return "unknown";
  const [head = "", tail = ""] = ip.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const full = ip.includes("::") ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right] : left;
  return `${full
    .slice(0, 3)
    .map((h) => h.replace(/^0+(?=.)/, ""))
    .join(":")}::/48`;
}
