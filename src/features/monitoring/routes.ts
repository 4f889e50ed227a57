// /metrics, /livez and /readyz: on the API host (metrics only with --metrics-token) and on the
// loopback --metrics-port listener (no token: only this machine reaches it). /readyz on the API
// host tells anyone whether Pier is ready and which check fails, in a word; the details (free
// bytes, migration names, SQLite's reason) only to the operator (D246).
import type { Server } from "bun";
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import { safeEqual, sha256Hex } from "../../core/crypto";
import { ApiError } from "../../core/errors";
import { PROMETHEUS_CONTENT_TYPE } from "../../core/metrics";
import { serverVersion } from "../../core/version";
import { authenticate, bearerToken, type AuthOptions, type authPlugin } from "../../http/auth";
import { baseHeaders, errorResponse } from "../../http/envelope";
import { requestId } from "../../http/request-info";
import { hasAccountWideAdmin } from "../buckets";
import { checkReadiness, scrapeMetrics } from "./service";

const NO_STORE = { "cache-control": "no-store" };

async function metricsResponse(deps: Deps, req: Request): Promise<Response> {
  const body = await scrapeMetrics(deps);
  return new Response(req.method === "HEAD" ? null : body, {
    headers: { "content-type": PROMETHEUS_CONTENT_TYPE, ...NO_STORE, ...baseHeaders(requestId(req)) },
  });
}

function livez(req: Request): Response {
  return Response.json({ data: { status: "ok", server_version: serverVersion } }, { headers: { ...NO_STORE, ...baseHeaders(requestId(req)) } });
}

function readyz(deps: Deps, req: Request, detailed: boolean): Response {
  const r = checkReadiness(deps);
  const checks = detailed ? r.checks : r.summary;
  if (r.ready) return Response.json({ data: { status: "ready", checks } }, { headers: { ...NO_STORE, ...baseHeaders(requestId(req)) } });
  return errorResponse(new ApiError("NOT_READY", "Pier cannot take writes right now; see details.checks.", { checks }), requestId(req), deps.urls.baseUrl);
}

const isMetricsToken = (deps: Deps, given: string | null): boolean =>
  deps.config.metricsToken !== null && given !== null && safeEqual(sha256Hex(given), sha256Hex(deps.config.metricsToken));

/**
 * Whether /readyz on the API host may show its details: to the metrics token (the operator's
 * monitoring credential) or a credential of an instance admin over the whole account. Anything
 * else, a wrong or expired credential included, gets the public answer rather than a 401: a
 * probe answers whatever it was sent.
 */
function operatorAsks(deps: Deps, req: Request, authOptions: AuthOptions): boolean {
  if (isMetricsToken(deps, bearerToken(req))) return true;
  try {
    const actor = authenticate(deps, req, authOptions);
    return actor !== null && actor.isInstanceAdmin && hasAccountWideAdmin(actor);
  } catch {
    return false;
  }
}

/**
 * The metrics token, compared in constant time over both sides' SHA-256 (equal lengths, so
 * neither the token's length nor its content leaks through timing). No token configured:
 * /metrics does not exist on the API host.
 */
function metricsAllowed(deps: Deps, req: Request): boolean {
  if (deps.config.metricsToken === null) throw new ApiError("NOT_FOUND", "No such route. See the API reference at /docs.");
  return isMetricsToken(deps, bearerToken(req));
}

function unauthorized(deps: Deps, req: Request): Response {
  const res = errorResponse(new ApiError("UNAUTHORIZED", "Send the metrics token as Authorization: Bearer <token>."), requestId(req), deps.urls.baseUrl);
  res.headers.set("www-authenticate", 'Bearer realm="pier-metrics"');
  return res;
}

// /livez and /readyz declare "probe": public, and not counted against the anonymous per-IP
// limit (a load balancer probes every few seconds from one address). /readyz reads a credential
// itself, only to decide how much to say.
// /metrics declares "signed": like the storage URLs it carries its own credential (the metrics
// token), which is not an API key and must not be resolved as one.
export const monitoringRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>, authOptions: AuthOptions) =>
  new Elysia({ name: "monitoring" })
    .use(auth)
    .get("/livez", ({ request }) => livez(request), {
      auth: "probe",
      detail: { tags: ["Operations"], summary: "Liveness: 200 while the process serves requests" },
    })
    .get("/readyz", ({ request }) => readyz(deps, request, operatorAsks(deps, request, authOptions)), {
      auth: "probe",
      detail: {
        tags: ["Operations"],
        summary:
          "Readiness: 200 when the database is writable, the disk has room and migrations are applied; else 503 NOT_READY. Each check is a word; the metrics token or an instance admin's credential gets the details",
      },
    })
    .get("/metrics", ({ request }) => (metricsAllowed(deps, request) ? metricsResponse(deps, request) : unauthorized(deps, request)), {
      auth: "signed",
      detail: { tags: ["Operations"], summary: "Prometheus metrics (text format 0.0.4); needs Authorization: Bearer <--metrics-token>" },
    });

/** The --metrics-port listener: loopback only, the three endpoints, nothing else. */
export function startMetricsListener(deps: Deps, port: number): Server<unknown> {
  return Bun.serve({
    hostname: "127.0.0.1",
    port,
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method !== "GET" && req.method !== "HEAD") return new Response("Method not allowed", { status: 405, headers: { allow: "GET, HEAD" } });
      if (path === "/metrics") return metricsResponse(deps, req);
      if (path === "/livez") return livez(req);
      if (path === "/readyz") return readyz(deps, req, true);
      return new Response("Not found: this port serves /metrics, /livez and /readyz", { status: 404 });
    },
  });
}
