// Start and stop a whole Pier (the primary): config -> db -> migrate -> listeners -> jobs. Used by
// `pier serve` and by the tests (in-process, free ports, temp data dir). Serving workers start
// from src/serving-process.ts instead, which loads only the site server.
import type { Server } from "bun";
import { buildApp, type App } from "./app";
import { relaySocketPath, startRelay } from "./serving-relay";
import { spawnServingWorkers, watchOtherCommits, followSiteChanges, WORKERS_LISTENING_TIMEOUT_MS, type ServingWorkers } from "./serving-workers";
import type { Config } from "./config";
import type { Deps } from "./core/context";
import { createDeps, type DepsOptions } from "./deps";
import { JobRunner } from "./jobs/runner";
import { jobHandlers, periodicTasks } from "./jobs/tasks";
import { makeFetch, type Dispatch } from "./http/server";
import { createSiteHandler } from "./sites/server";
import { startMailReceiver, type MailReceiver } from "./features/mail/receiver";
import { actorFromOAuthToken } from "./features/oauth/grants";
import { acmeFront, acmeManager, apiHostname, mxHostname, type CertificateManager } from "./acme";
import { onSiteChange } from "./features/publish";
import type { HttpsListener } from "./http/https-listener";
import { listenerFetch, startHttp, startHttps, stopGracefully, wireHttpsCertificates } from "./listeners";
import { newRequestNote, requestMeter } from "./http/request-metrics";
import { gatherBeforeScrape, startMetricsListener, startMonitoring, stopMonitoring } from "./features/monitoring";
import { addDeltas } from "./core/metrics";

export { createDeps, openData } from "./deps";

export interface StartOptions extends DepsOptions {
  /** Tests drive the worker themselves (runner.drain()) when false. */
  startWorker?: boolean;
  /** DNS for the inbound mail authentication checks (tests: a local table); default the system resolver. */
  mailResolver?: import("mailauth").DNSResolver;
  /** Inbound filing knobs (group commit, reading on the event loop): benchmarks compare them. */
  mailFiling?: Omit<import("./features/mail/filer").InboundOptions, "resolver">;
  /**
   * Serving processes (`--workers`): more than 1 starts that many serving workers sharing the
   * ports with SO_REUSEPORT, and this process hands them the ports once they listen
   * (src/serving-workers.ts). Default 1: this process alone.
   */
  servingWorkers?: number;
  /** Tests: the serving workers' poll for other processes' commits (default CHANGE_POLL_MS). */
  changePollMs?: number;
}

export interface Pier {
  deps: Deps;
  app: App;
  runner: JobRunner;
  http: Server<unknown>;
  httpPort: number;
  /** Ports actually bound (port 0 resolved); null = listener off. The start-up banner prints these. */
  ports: { http: number; https: number | null; smtp: number | null; metrics: number | null };
  /** The HTTPS listener (same handler as HTTP), null when --https-port is off. */
  https: HttpsListener | null;
  /** The SMTP receiver, null when --smtp-port is off. */
  smtp: MailReceiver | null;
  /** Graceful: in-flight work finishes, bounded by `timeoutMs` (default --shutdown-timeout). */
  stop(timeoutMs?: number): Promise<void>;
}

export async function startPier(config: Config, opts: StartOptions = {}): Promise<Pier> {
  let dispatch: Dispatch | null = null;
  let deps: (Deps & { close(): void }) | null = null;
  const note = newRequestNote();
  // One handler once deps exist (not a new closure per request: it showed in the site benchmark).
  const fetch = listenerFetch(note, () => {
    if (deps === null) return null;
    const acme = acmeManager(deps);
    return { handler: makeFetch(deps, () => dispatch, acme ? acmeFront(deps, acme, null) : null, null, note), meter: requestMeter(deps) };
  });
  const workersWanted = Math.max(1, opts.servingWorkers ?? 1);
  const shared = workersWanted > 1;
  // SO_REUSEPORT would let this process share a port another program (or another Pier) holds with
  // it too: the primary first checks that the port is free (the workers then join it).
  if (shared && config.httpPort !== 0) await assertPortFree(config.host, config.httpPort);
  // Bound first so port 0 resolves to the real port before URLs are derived from it.
  let http = startHttp(config, fetch, shared);
  try {
    deps = await createDeps(config, http.port!, opts);
  } catch (e) {
    http.stop(true);
    throw e;
  }
  const d = deps;
  const app = buildApp(d, { resolvers: [actorFromOAuthToken] });
  const sites = createSiteHandler(d, note);
  dispatch = { app, sites };
  const acme = acmeManager(d);
  // Another process's commit may be a publish, an access change or a rename: the publications
  // the change log names are forgotten (commits that change no site, such as analytics roll-ups,
  // name none).
  const watch = shared
    ? watchOtherCommits(
        d,
        followSiteChanges(d, sites, () => {}),
      )
    : null;
  let smtp: MailReceiver | null = null;
  let https: HttpsListener | null = null;
  try {
    if (config.httpsPort !== null) https = await startHttps(d, fetch);
    if (config.smtpPort !== null) smtp = await startMailReceiver(d, { ...opts.mailFiling, resolver: opts.mailResolver });
  } catch (e) {
    http.stop(true);
    https?.stop(true);
    acme?.close();
    d.close();
    throw e;
  }
  if (acme) wireAutomaticHttps(d, acme, https, smtp);
  let metricsListener: Server<unknown> | null = null;
  try {
    if (config.metricsPort !== null) metricsListener = startMetricsListener(d, config.metricsPort);
  } catch (e) {
    http.stop(true);
    https?.stop(true);
    await smtp?.stop(0);
    acme?.close();
    d.close();
    throw e;
  }
  startMonitoring(d);
  const runner = new JobRunner(d, jobHandlers, periodicTasks);
  if (opts.startWorker !== false) runner.start();
  d.analytics.start();
  const ports = { http: http.port!, https: https?.port ?? null, smtp: smtp?.port ?? null, metrics: metricsListener?.port ?? null };
  let stopped = false;
  let relay: Server<unknown> | null = null;
  let workers: ServingWorkers | null = null;
  if (shared) {
    const relaySocket = relaySocketPath(config.dataDir);
    relay = startRelay(relaySocket, fetch, config.idleTimeoutSeconds);
    const metrics = d.metrics.all();
    const settings = { config, httpPort: ports.http, httpsPort: ports.https, relaySocket, changePollMs: opts.changePollMs };
    // Once the ports are handed over, this process takes them back while no worker listens
    // (all of them dying and restarting with backoff) and hands them over again when one does
    // (D267): otherwise the ports stayed dark while the primary lived, and no supervisor
    // restarts a process that is still running.
    let handedOver = false;
    let onPorts = false;
    const followWorkers = (listening: number) => {
      if (!handedOver || stopped) return;
      if (listening === 0 && !onPorts) {
        try {
          http = startHttp({ ...config, httpPort: ports.http }, fetch, true);
          onPorts = true;
          void https?.resume();
          d.log.warn("no serving worker listens; this process serves the ports until one does");
        } catch (e) {
          d.log.error("could not take the ports back while no serving worker listens", { error: (e as Error).message });
        }
      } else if (listening > 0 && onPorts) {
        onPorts = false;
        void http.stop();
        void https?.pause();
        d.log.info("a serving worker listens again; this process hands it the ports");
      }
    };
    workers = spawnServingWorkers(settings, workersWanted, d.log, (deltas) => addDeltas(metrics, deltas), followWorkers);
    const serving = workers;
    gatherBeforeScrape(d, () => serving.collectMetrics());
    onSiteChange(d, () => serving.announceChange());
    // nginx's model: once every worker listens, this process stops taking public connections
    // and answers only what the workers relay (D227). The whole app it loads makes its garbage
    // collections several times longer than a worker's, and with it on the port a share of
    // every site's traffic had that tail. Connections it holds finish as usual.
    if (await workers.listening(WORKERS_LISTENING_TIMEOUT_MS)) {
      void http.stop();
      void https?.pause();
      handedOver = true;
      followWorkers(workers.listeningNow()); // one may have died meanwhile
    } else {
      d.log.warn("serving workers did not start listening in time; this process keeps serving the ports too", {
        timeout_s: WORKERS_LISTENING_TIMEOUT_MS / 1000,
      });
    }
  }
  return {
    deps: d,
    app,
    runner,
    get http() {
      return http;
    },
    httpPort: ports.http,
    smtp,
    https,
    ports,
    async stop(timeoutMs = config.shutdownTimeoutSeconds * 1000) {
      if (stopped) return;
      stopped = true;
      // One budget for the whole stop: the workers drain within it (relaying what they still
      // have to this process), then what is left here finishes in the time remaining.
      const deadline = Date.now() + timeoutMs;
      // SMTP takes no new connections and the runner no new jobs from now on, not once the
      // workers have drained: the drain may take the whole budget, and a job claimed meanwhile
      // would be cut off with what is left of it.
      const finishing = [smtp?.stop(timeoutMs), runner.stop()];
      await workers?.stop(timeoutMs);
      const left = Math.max(0, deadline - Date.now());
      // What is in flight (requests, relayed requests of the workers, SMTP transactions, the
      // running job) finishes, up to the shutdown timeout.
      await stopGracefully(d, [http, relay, https], finishing, left);
      watch?.stop();
      metricsListener?.stop(true);
      stopMonitoring(d);
      acme?.close();
      // Counts since the last flush are written before the database closes.
      d.analytics.stop();
      d.close();
    },
  };
}

/**
 * Automatic HTTPS: new and renewed certificates go to the HTTPS listener (swapped without a
 * restart) and, for the MX host, to SMTP STARTTLS unless the operator gave --smtp-tls-cert; the
 * API and MX hosts are ordered at start, sites when they go live.
 */
function wireAutomaticHttps(deps: Deps, acme: CertificateManager, https: HttpsListener | null, smtp: MailReceiver | null): void {
  const mxHost = mxHostname(deps);
  const smtpFollowsAcme = smtp !== null && deps.config.smtpTlsCert === null;
  const applyMx = () => {
    const c = acme.certificateFor(mxHost);
    if (smtpFollowsAcme && c) smtp!.updateTls({ cert: c.cert, key: c.key });
  };
  applyMx();
  wireHttpsCertificates(deps, acme, https);
  acme.onChange(applyMx);
  onSiteChange(deps, ({ publicationId }) => acme.publicationChanged(publicationId));
  acme.requestEagerHosts([apiHostname(deps), ...(smtp ? [mxHost] : [])]);
}

/**
 * EADDRINUSE unless the port can be bound alone. A worker left by a primary that was killed
 * exits within a tenth of a second, so a busy port is asked again for two seconds first.
 */
async function assertPortFree(hostname: string, port: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      Bun.serve({ hostname, port, fetch: () => new Response(null) }).stop(true);
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== "EADDRINUSE" || attempt >= 20) throw e;
      await Bun.sleep(100);
    }
  }
}
