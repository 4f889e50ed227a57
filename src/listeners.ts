// What every Pier process that answers HTTP shares, the primary (src/runtime.ts) and the serving
// workers (src/serving-process.ts): the listeners' fetch with its one metrics call per request,
// the HTTPS listener, and automatic certificates swapped into it.
import type { Server } from "bun";
import { acmeManager, withHsts, type CertificateManager } from "./acme";
import type { Deps } from "./core/context";
import { settlesWithin } from "./core/deadline";
import { HttpsListener } from "./http/https-listener";
import type { RequestMeter, RequestNote } from "./http/request-metrics";
import { MAX_BODY_BYTES, startingResponse } from "./http/server";
import { loadTlsMaterial, TlsConfigError } from "./tls/material";

export type Fetch = (req: Request, server: Server<unknown>) => Response | Promise<Response>;

/**
 * The listeners' fetch. `ready` gives the dispatcher and the meter once the process can answer
 * (null: "Pier is starting"); asked until it gives them, then never again. The one metrics call
 * per request happens when the response (headers) is ready. What the dispatcher and the site
 * server learned on the way (host kind, path) is read from `note` before any other request runs:
 * the meter does not read the Host header or req.url again.
 */
export function listenerFetch(note: RequestNote, ready: () => { handler: Fetch; meter: RequestMeter } | null): Fetch {
  let handler: Fetch | null = null;
  let meter: RequestMeter | null = null;
  return (req, server) => {
    if (handler === null) {
      const parts = ready();
      if (parts === null) return startingResponse(req);
      handler = parts.handler;
      meter = parts.meter;
    }
    note.host = null;
    note.pathname = null;
    const started = performance.now();
    const res = handler(req, server);
    const hostKind = note.host;
    const pathname = note.pathname;
    return res instanceof Promise
      ? res.then((r) => meter!(req, r, started, server, hostKind, pathname))
      : meter!(req, res, started, server, hostKind, pathname);
  };
}

/** The HTTP listener, the primary's and every worker's (`reusePort` when they share the port). */
export function startHttp(config: Deps["config"], fetch: Fetch, reusePort: boolean): Server<unknown> {
  return Bun.serve({
    hostname: config.host,
    port: config.httpPort,
    fetch,
    maxRequestBodySize: MAX_BODY_BYTES,
    idleTimeout: config.idleTimeoutSeconds,
    reusePort,
  });
}

/**
 * The HTTPS listener: the same Host-routed handler as HTTP, with the operator's certificate or
 * a self-signed one for the API host and *.<sites-domain> (kept in <data-dir>/https-tls) as the
 * fallback, and every automatic certificate by SNI.
 */
export async function startHttps(deps: Deps, fetch: Fetch): Promise<HttpsListener> {
  const apiHost = new URL(deps.urls.baseUrl).hostname;
  const names = [...new Set([apiHost, deps.urls.sitesDomain, `*.${deps.urls.sitesDomain}`])];
  const tls = await loadTlsMaterial({
    certFile: deps.config.tlsCert,
    keyFile: deps.config.tlsKey,
    dataDir: deps.config.dataDir,
    names,
    dirName: "https-tls",
    flags: ["--tls-cert", "--tls-key"],
  });
  if (!tls) throw new TlsConfigError("--tls-cert off is not valid: turn HTTPS off with --https-port off instead");
  deps.log.info("https listener", { certificate: tls.source });
  const acme = acmeManager(deps);
  // The operator's certificate wins for the names it covers: those are never ordered.
  acme?.setOperatorCertificate(tls.source === "configured" ? tls.cert : null);
  const entries = acme ? sniEntries(acme) : [];
  return new HttpsListener(
    {
      hostname: deps.config.host,
      port: deps.config.httpsPort!,
      fetch: withHsts(fetch, deps.config.hsts),
      fallback: { cert: tls.cert, key: tls.key },
      idleTimeoutSeconds: deps.config.idleTimeoutSeconds,
    },
    entries,
  );
}

const sniEntries = (acme: CertificateManager) => acme.servedCertificates().map((c) => ({ serverName: c.host, cert: c.cert, key: c.key }));

/**
 * What every process serving HTTPS does with automatic certificates: redirect to the bound port
 * and swap the listener when the served set changes. In a serving worker that is all: the
 * changes come from the table (followStore, at each of the primary's commits), and orders,
 * SMTP and the eager hosts are the primary's.
 */
export function wireHttpsCertificates(deps: Deps, acme: CertificateManager, https: HttpsListener | null): void {
  acme.httpsPort = https?.port ?? null;
  acme.onChange(() => {
    if (https) https.update(sniEntries(acme)).catch((e) => deps.log.error("https certificate swap failed", { error: e }));
  });
}

/**
 * Stop accepting everywhere at once; what is in flight finishes, up to `timeoutMs`, after which
 * the listeners' connections are cut. `drain` is the rest of the process's in-flight work.
 */
export async function stopGracefully(
  deps: Deps,
  listeners: ({ stop(force?: boolean): Promise<void> | void } | null)[],
  drain: (Promise<unknown> | undefined)[],
  timeoutMs: number,
): Promise<void> {
  if (!(await settlesWithin(Promise.all([...listeners.map((l) => l?.stop()), ...drain]), timeoutMs))) {
    deps.log.warn("shutdown timeout reached: cutting the connections still open", { timeout_s: timeoutMs / 1000 });
    await Promise.all(listeners.map((l) => l?.stop(true)));
  }
}
