// /metrics, /livez and /readyz: on the API host (metrics only with --metrics-token) and on the
// loopback --metrics-port listener (no token: only this machine reaches it).
import type { Server } from "bun";
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import { safeEqual, sha256Hex } from "../../core/crypto";
import { ApiError } from "../../core/errors";
import { PROMETHEUS_CONTENT_TYPE } from "../../core/metrics";
import { serverVersion } from "../../core/version";
import { bearerToken, type authPlugin } from "../../http/auth";
import { baseHeaders, errorResponse } from "../../http/envelope";
import { requestId } from "../../http/request-info";
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

function readyz(deps: Deps, req: Request): Response {
  const r = checkReadiness(deps);
  if (r.ready) return Response.json({ data: { status: "ready", checks: r.checks } }, { headers: { ...NO_STORE, ...baseHeaders(requestId(req)) } });
  return errorResponse(
    new ApiError("NOT_READY", "Pier cannot take writes right now; see details.checks.", { checks: r.checks }),
    requestId(req),
    deps.urls.baseUrl,
  );
}

/**
 * The metrics token, compared in constant time over both sides' SHA-256 (equal lengths, so
 * neither the token's length nor its content leaks through timing). No token configured:
 * /metrics does not exist on the API host.
 */
function metricsAllowed(deps: Deps, req: Request): boolean {
  const token = deps.config.metricsToken;
  if (token === null) throw new ApiError("NOT_FOUND", "No such route. See the API reference at /docs.");
  const given = bearerToken(req);
  if (given === null || !safeEqual(sha256Hex(given), sha256Hex(token))) return false;
  return true;
}

function unauthorized(deps: Deps, req: Request): Response {
  const res = errorResponse(new ApiError("UNAUTHORIZED", "Send the metrics token as Authorization: Bearer <token>."), requestId(req), deps.urls.baseUrl);
  res.headers.set("www-authenticate", 'Bearer realm="pier-metrics"');
  return res;
}

// /livez and /readyz declare "probe": public, and not counted against the anonymous per-IP
// limit (a load balancer probes every few seconds from one address).
// /metrics declares "signed": like the storage URLs it carries its own credential (the metrics
// token), which is not an API key and must not be resolved as one.
export const monitoringRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "monitoring" })
    .use(auth)
    .get("/livez", ({ request }) => livez(request), {
      auth: "probe",
      detail: { tags: ["Operations"], summary: "Liveness: 200 while the process serves requests" },
    })
    .get("/readyz", ({ request }) => readyz(deps, request), {
      auth: "probe",
      detail: {
        tags: ["Operations"],
        summary: "Readiness: 200 when the database is writable, the disk has room and migrations are applied; else 503 NOT_READY",
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
      if (path === "/readyz") return readyz(deps, req);
      return new Response("Not found: this port serves /metrics, /livez and /readyz", { status: 404 });
    },
  });
}
