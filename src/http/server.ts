// The HTTP listener: captures the client IP, classifies the Host and dispatches.
import type { Server } from "bun";
import type { AcmeFront } from "../acme/http";
import type { Deps } from "../core/context";
import { notSentBody } from "../features/forms";
import { ApiError, errorCatalogue } from "../core/errors";
import { isComplete } from "../sites/files";
import { loadSiteTemplates, pageResponse } from "../sites/pages";
import type { SiteHandler } from "../sites/server";
import { bodyLimitFor, endBodyTimer, isFormPost, readBoundedBody, readRelayBody, siteBodyLimitFor, type BodyRules, type RelayBody } from "./body-limit";
import { baseHeaders, errorResponse } from "./envelope";
import { classifyHost } from "./host-router";
import { checkJsonDepth, mayBeJsonContainer } from "./json-guard";
import { sessionTokenOf } from "./session-cookie";
import { requestId, setClientIp, wantsJson } from "./request-info";
import type { RequestNote } from "./request-metrics";
import { guardStalls } from "./upload-stall";

export interface Dispatch {
  /** null in a serving worker (src/serving-process.ts): what is not a site read is relayed (`forward`). */
  app: { fetch(req: Request): Response | Promise<Response> } | null;
  sites: SiteHandler;
}

/** Large enough for the storage endpoint's uploads; every other route has its own limit (body-limit.ts). */
export const MAX_BODY_BYTES = 64 * 1024 ** 3;

/** Per app: does a request carry a valid credential? Set by buildApp; asked before reading a large body. */
export const credentialChecks = new WeakMap<object, (req: Request) => boolean>();

/**
 * The client's address. Behind trusted proxies it is read from the right of X-Forwarded-For:
 * proxies append the peer they saw, so everything left of what the trusted hops added was sent
 * by the client itself and would let it pick any address (and so any address-keyed limit).
 */
export function clientAddress(req: Request, server: Server<unknown>, proxy: { trustProxy: boolean; trustedProxyHops: number }): string {
  if (proxy.trustProxy) {
    const entries = (req.headers.get("x-forwarded-for") ?? "")
      .split(",")
      .map((e) => e.trim())
      .filter(Boolean);
    if (entries.length > 0) return entries[Math.max(0, entries.length - proxy.trustedProxyHops)]!;
  }
  return server.requestIP(req)?.address ?? "unknown";
}

/** While Pier opens its data (or before routes are mounted): come back in a second. */
export const startingResponse = (req: Request): Response =>
  new Response("Pier is starting", { status: 503, headers: { "retry-after": "1", ...baseHeaders(requestId(req)) } });

/** A serving worker's relay to the primary (src/serving-workers.ts): what it does not answer itself. */
export type Forward = (req: Request, server: Server<unknown>, ip: () => string, read?: RelayBody) => Promise<Response>;

export function makeFetch(
  deps: Deps,
  getDispatch: () => Dispatch | null,
  acme: AcmeFront | null = null,
  forward: Forward | null = null,
  /** Where the host's kind is noted for the request's meter (src/http/request-metrics.ts). */
  note: RequestNote | null = null,
) {
  // Not async, and the client address resolved only when asked: the site server's hot path
  // (a cached small file) then costs no promise and no socket lookup (see bench/README.md).
  return (req: Request, server: Server<unknown>): Response | Promise<Response> => {
    const ip = () => clientAddress(req, server, deps.config);
    const d = getDispatch();
    if (!d) return startingResponse(req);
    const host = classifyHost(req.headers.get("host"), deps.urls, deps.config.baseUrl !== null);
    if (note !== null) note.host = host.kind;
    if (acme) {
      // ACME challenges, on-demand orders and the redirect to HTTPS (automatic HTTPS only).
      const answer = acme(req, host, server, ip);
      if (answer) return answer;
    }
    switch (host.kind) {
      case "api":
        // Sessions, rate limits and every write path live in the primary (a worker has no app).
        if (forward) return relayApi(deps, req, ip, server, forward);
        if (d.app === null) return startingResponse(req);
        setClientIp(req, ip);
        return dispatchApi(deps, d.app, req, ip, server);
      case "site":
      case "custom": {
        const method = req.method;
        if (method !== "GET" && method !== "HEAD") {
          if (req.body !== null) return dispatchSiteWithBody(deps, d, req, host, ip, server, forward);
          // A worker answers reads of sites; gate and form posts (and their limits) are the primary's.
          if (forward) return forward(req, server, ip);
        }
        const res = d.sites(req, host, ip);
        return res instanceof Promise ? res.then((r) => withBaseHeaders(r, req)) : withBaseHeaders(res, req);
      }
      default:
        return errorResponse(new ApiError("BAD_REQUEST", "The Host header is missing or malformed."), requestId(req), deps.urls.baseUrl);
    }
  };
}

// The method first: a GET's body is never looked at (reading req.body is a native call).
const hasBody = (req: Request) => req.method !== "GET" && req.method !== "HEAD" && req.body !== null;

/**
 * Bun's idle timer does not see a request body arriving (a steady upload is cut after
 * idleTimeout), so while a body is read the request gets a timer of its own: long enough for
 * the body deadline, which is what cuts slow bodies.
 */
function allowBodyTime(deps: Deps, req: Request, server: Server<unknown>): void {
  server.timeout(req, deps.config.bodyTimeoutSeconds + 5);
}

/** The body is read here, whole and bounded, so no route, parser or credential check ever sees an unbounded one. */
type App = NonNullable<Dispatch["app"]>;

async function dispatchApi(deps: Deps, app: App, req: Request, ip: () => string, server: Server<unknown>): Promise<Response> {
  if (!hasBody(req)) return app.fetch(req);
  const limit = bodyLimitFor(req.method, new URL(req.url).pathname);
  if (limit === null) {
    // Storage PUTs stream to disk for as long as bytes keep coming (size bounded by the signed token).
    const streamed = guardStalls(req, server, deps.config.bodyTimeoutSeconds);
    setClientIp(streamed, ip);
    const res = await app.fetch(streamed);
    // Bun's idle timer is off once the route reads the body (upload-stall.ts). A refused
    // upload's body may not have been read: bound what the client may still send.
    if (res.status >= 400) return endRefused(deps, res, req, server);
    endBodyTimer(req, server, false, deps.config.idleTimeoutSeconds);
    return res;
  }
  const checkCredential = credentialChecks.get(app);
  const rules: BodyRules = { limit, timeoutSeconds: deps.config.bodyTimeoutSeconds, credentialed: () => checkCredential?.(req) ?? false };
  let api: Request;
  try {
    allowBodyTime(deps, req, server);
    const bytes = await readBoundedBody(req, rules);
    // Whatever the Content-Type says: some parser downstream may read the body as JSON anyway.
    if (bytes && mayBeJsonContainer(bytes)) checkJsonDepth(bytes);
    api = new Request(req, { body: bytes });
  } catch (e) {
    return refusedBody(deps, req, e, server);
  }
  setClientIp(api, ip);
  const res = await app.fetch(api);
  endBodyTimer(req, server, false, deps.config.idleTimeoutSeconds);
  return res;
}

/**
 * A serving worker's API request (D265): a body is read here first, bounded like the primary's
 * listener reads it (readRelayBody), and relayed whole; a relay request then lasts as long as the
 * primary takes to answer, not as long as the client takes to send. Storage PUTs (and bodies
 * over the anonymous limit) still stream, under the relay's cap of such requests.
 */
async function relayApi(deps: Deps, req: Request, ip: () => string, server: Server<unknown>, forward: Forward): Promise<Response> {
  if (!hasBody(req)) return forward(req, server, ip);
  const limit = bodyLimitFor(req.method, new URL(req.url).pathname);
  if (limit === null) return forward(req, server, ip);
  let read: RelayBody;
  try {
    allowBodyTime(deps, req, server);
    // Whether the request presents a credential (the primary checks whether it is valid).
    const credentialed = () => req.headers.has("authorization") || sessionTokenOf(deps, req) !== undefined;
    read = await readRelayBody(req, { limit, timeoutSeconds: deps.config.bodyTimeoutSeconds, credentialed });
  } catch (e) {
    return refusedBody(deps, req, e, server);
  }
  const res = await forward(req, server, ip, read);
  // A streamed body's timer is the relay's (off while it streams, then back on or lingering).
  if (read.bytes !== undefined) endBodyTimer(req, server, false, deps.config.idleTimeoutSeconds);
  return res;
}

/**
 * Site hosts take only small form posts (gates, and the built-in forms with a limit of their
 * own); everything else is answered without its body mattering. A serving worker bounds the body
 * too, before relaying it to the primary (which answers the post): relaying an oversized body
 * streamed it until the primary hung up on the relay, and the worker's client then sometimes got
 * a connection reset instead of the 413.
 */
async function dispatchSiteWithBody(
  deps: Deps,
  d: Dispatch,
  req: Request,
  host: Parameters<Dispatch["sites"]>[1],
  ip: () => string,
  server: Server<unknown>,
  forward: Forward | null,
): Promise<Response> {
  const pathname = new URL(req.url).pathname;
  const limit = siteBodyLimitFor(req.method, pathname);
  let bytes: Buffer<ArrayBuffer> | null;
  try {
    allowBodyTime(deps, req, server);
    bytes = await readBoundedBody(req, { limit, timeoutSeconds: deps.config.bodyTimeoutSeconds, credentialed: () => false });
  } catch (e) {
    if (isFormPost(req.method, pathname) && !wantsJson(req)) return refusedFormPage(deps, req, e, server);
    return refusedBody(deps, req, e, server);
  }
  if (forward) {
    // The relay sends what was read; the client's own connection gets its idle timer back here.
    const relayed = await forward(req, server, ip, { bytes });
    endBodyTimer(req, server, false, deps.config.idleTimeoutSeconds);
    return relayed;
  }
  const site = new Request(req, { body: bytes });
  setClientIp(site, ip);
  const res = await d.sites(site, host, ip);
  endBodyTimer(req, server, false, deps.config.idleTimeoutSeconds);
  return withBaseHeaders(res, req);
}

/** Why a body was not read whole, as the API error it is answered with. */
const asBodyError = (e: unknown): ApiError => (e instanceof ApiError ? e : new ApiError("BAD_REQUEST", "The request body could not be read."));

/** The 413, 408 or 400 for a body that was not read whole. */
function refusedBody(deps: Deps, req: Request, e: unknown, server: Server<unknown>): Response {
  return endRefused(deps, errorResponse(asBodyError(e), requestId(req), deps.urls.baseUrl), req, server);
}

/**
 * A plain (no-script) post to a built-in form that was not read gets a page in the site's Pier
 * look, as the form endpoint answers plain posts, not an error envelope the visitor cannot read.
 */
async function refusedFormPage(deps: Deps, req: Request, e: unknown, server: Server<unknown>): Promise<Response> {
  const err = asBodyError(e);
  const why =
    err.code === "PAYLOAD_TOO_LARGE"
      ? "It is longer than this form takes. Go back, shorten it and send it again."
      : "It did not arrive whole. Go back and send it again.";
  const page = pageResponse(await loadSiteTemplates(), errorCatalogue[err.code].status, "Not sent", notSentBody(why), {
    "x-pier-error-code": err.code,
  });
  return endRefused(deps, withBaseHeaders(page, req), req, server);
}

/** How the connection of a refused body ends: lingering (body-limit.ts), or at once after a 408. */
function endRefused(deps: Deps, res: Response, req: Request, server: Server<unknown>): Response {
  // A body that timed out trickles or has stopped: no flood of unread bytes to make way for.
  if (res.status === 408) return withHeader(res, "connection", "close");
  endBodyTimer(req, server, true, deps.config.idleTimeoutSeconds);
  return res;
}

function withHeader(res: Response, name: string, value: string): Response {
  try {
    res.headers.set(name, value);
    return res;
  } catch {
    const copy = new Response(res.body, res);
    copy.headers.set(name, value);
    return copy;
  }
}

/** Site responses carry the request id and version headers like API ones (every response does). */
function withBaseHeaders(res: Response, req: Request): Response {
  if (isComplete(res) || res.headers.has("x-request-id")) return res;
  const extra = Object.entries(baseHeaders(requestId(req)));
  try {
    for (const [k, v] of extra) res.headers.set(k, v);
    return res;
  } catch {
    // Immutable headers (a Response that came from fetch): copy it.
    const copy = new Response(res.body, res);
    for (const [k, v] of extra) copy.headers.set(k, v);
    return copy;
  }
}
