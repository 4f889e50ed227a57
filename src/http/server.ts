// The HTTP listener: captures the client IP, classifies the Host and dispatches.
import type { Server } from "bun";
import type { Deps } from "../core/context";
import { ApiError } from "../core/errors";
import type { SiteHandler } from "../sites/server";
import { bufferUndeclaredBody } from "./body-limit";
import { baseHeaders, errorResponse } from "./envelope";
import { classifyHost } from "./host-router";
import { requestId, setClientIp } from "./request-info";

export interface Dispatch {
  app: { fetch(req: Request): Response | Promise<Response> };
  sites: SiteHandler;
}

/** Large enough for the storage endpoint's uploads; JSON routes enforce their own limits. */
export const MAX_BODY_BYTES = 64 * 1024 ** 3;

export function clientAddress(req: Request, server: Server<unknown>, trustProxy: boolean): string {
  if (trustProxy) {
    const fwd = req.headers.get("x-forwarded-for");
    if (fwd) return fwd.split(",")[0]!.trim();
  }
  return server.requestIP(req)?.address ?? "unknown";
}

/** While Pier opens its data (or before routes are mounted): come back in a second. */
export const startingResponse = (req: Request): Response =>
  new Response("Pier is starting", { status: 503, headers: { "retry-after": "1", ...baseHeaders(requestId(req)) } });

export function makeFetch(deps: Deps, getDispatch: () => Dispatch | null) {
  // Not async, and the client address resolved only when asked: the site server's hot path
  // (a cached small file) then costs no promise and no socket lookup (see bench/README.md).
  return (req: Request, server: Server<unknown>): Response | Promise<Response> => {
    const ip = () => clientAddress(req, server, deps.config.trustProxy);
    const d = getDispatch();
    if (!d) return startingResponse(req);
    const host = classifyHost(req.headers.get("host"), deps.urls, deps.config.baseUrl !== null);
    switch (host.kind) {
      case "api":
        setClientIp(req, ip);
        return dispatchApi(deps, d, req, ip);
      case "site":
      case "custom": {
        const res = d.sites(req, host, ip);
        return res instanceof Promise ? res.then((r) => withBaseHeaders(r, req)) : withBaseHeaders(res, req);
      }
      default:
        return errorResponse(new ApiError("BAD_REQUEST", "The Host header is missing or malformed."), requestId(req), deps.urls.baseUrl);
    }
  };
}

/** API requests with a body of undeclared length are read (up to the JSON limit) before the app sees them. */
async function dispatchApi(deps: Deps, d: Dispatch, req: Request, ip: () => string): Promise<Response> {
  let api: Request;
  try {
    api = await bufferUndeclaredBody(req);
  } catch (e) {
    const err = e instanceof ApiError ? e : new ApiError("BAD_REQUEST", "The request body could not be read.");
    return errorResponse(err, requestId(req), deps.urls.baseUrl);
  }
  if (api !== req) setClientIp(api, ip);
  return d.app.fetch(api);
}

/** Site responses carry the request id and version headers like API ones (every response does). */
function withBaseHeaders(res: Response, req: Request): Response {
  if (res.headers.has("x-request-id")) return res;
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
