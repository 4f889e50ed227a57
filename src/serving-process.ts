// A serving worker's process (`pier serve --workers N` starts N of them; src/serving-workers.ts
// says how they share the ports and relay to the primary). It loads the site server and the
// listeners, not the API, dashboard, MCP, mail receiver or job handlers: the code a process
// loads sets what each of its garbage collections costs, and a worker that loads the whole app
// answers with about three times the p99 and half again the memory (bench/README.md).
// main.ts imports this module, and nothing else of Pier, when the process is started as a worker.
import type { Server } from "bun";
import { acmeFront, acmeManager } from "./acme";
import type { Config } from "./config";
import { createDeps } from "./deps";
import type { HttpsListener } from "./http/https-listener";
import { newRequestNote, requestMeter, type RequestMeter } from "./http/request-metrics";
import { makeFetch } from "./http/server";
import { listenerFetch, startHttp, startHttps, stopGracefully, wireHttpsCertificates } from "./listeners";
import {
  followAnnouncedChanges,
  followSiteChanges,
  readWorkerSettings,
  reportListening,
  reportMetricsToPrimary,
  watchOtherCommits,
  type WorkerSettings,
} from "./serving-workers";
import { relayToPrimary } from "./serving-relay";
import { createSiteHandler } from "./sites/server";

export interface ServingWorker {
  http: Server<unknown>;
  https: HttpsListener | null;
  /** Graceful: in-flight requests finish, bounded by `timeoutMs` (default --shutdown-timeout). */
  stop(timeoutMs?: number): Promise<void>;
}

/**
 * Serve the primary's ports: site reads answered here from this process's caches, everything
 * else relayed to the primary. Binds only once it can answer (bound earlier, the kernel would
 * hand it some of the port's connections while it still says "Pier is starting").
 */
export async function startServingWorker(settings: WorkerSettings): Promise<ServingWorker> {
  // The --metrics-port listener is the primary's (it adds the workers' counters): a worker
  // binding it too would fail to start on a fixed port.
  const config: Config = { ...settings.config, httpPort: settings.httpPort, httpsPort: settings.httpsPort, smtpPort: null, metricsPort: null };
  const deps = await createDeps(config, settings.httpPort, { servingWorker: true });
  const note = newRequestNote();
  const sites = createSiteHandler(deps, note);
  // Relayed answers are counted and logged by the primary, which answered them.
  const relayed = new WeakSet<Response>();
  const forward = relayToPrimary(settings.relaySocket, relayed, config.idleTimeoutSeconds);
  const acme = acmeManager(deps);
  const dispatch = { app: null, sites };
  const handler = makeFetch(deps, () => dispatch, acme ? acmeFront(deps, acme, forward) : null, forward, note);
  const fetch = listenerFetch(note, () => ({ handler, meter: skipRelayed(requestMeter(deps), relayed) }));
  // The primary's commits (a publish, an access change, a rename, a new certificate) reach this
  // process through the database: what they changed is forgotten here. Watched from before the
  // first request, so nothing cached can miss a commit.
  const watch = watchOtherCommits(deps, followSiteChanges(deps, sites, acme ? () => acme.followStore() : () => {}), settings.changePollMs);
  const stopFollowing = followAnnouncedChanges(watch.check);
  let http: Server<unknown> | null = null;
  let https: HttpsListener | null = null;
  try {
    http = startHttp(config, fetch, true);
    // With automatic HTTPS, the certificates the primary stored (CertificateManager.followStore).
    if (config.httpsPort !== null) https = await startHttps(deps, fetch);
  } catch (e) {
    http?.stop(true);
    stopFollowing();
    watch.stop();
    acme?.close();
    deps.close();
    throw e;
  }
  if (acme) wireHttpsCertificates(deps, acme, https);
  deps.analytics.start();
  const stopReporting = reportMetricsToPrimary(deps.metrics.all());
  const listening = http;
  let stopped = false;
  return {
    http: listening,
    https,
    async stop(timeoutMs = config.shutdownTimeoutSeconds * 1000) {
      if (stopped) return;
      stopped = true;
      await stopGracefully(deps, [listening, https], [], timeoutMs);
      stopFollowing();
      watch.stop();
      stopReporting();
      acme?.close();
      // Counts since the last flush are written before the database closes.
      deps.analytics.stop();
      deps.close();
    },
  };
}

/** A worker's meter: what it relayed was counted (and logged) by the primary already. */
function skipRelayed(meter: RequestMeter, relayed: WeakSet<Response>): RequestMeter {
  return (req, res, started, server, hostKind, pathname) => (relayed.has(res) ? res : meter(req, res, started, server, hostKind, pathname));
}

/**
 * The worker process: no banner, no running file; it stops on SIGTERM and also when its primary
 * is gone (it must not keep the port).
 */
export async function runServingWorker(): Promise<void> {
  const settings = readWorkerSettings();
  if (settings === null) throw new Error("not started as a serving worker");
  // Watched from the first moment, also while starting: a worker left behind by a killed primary
  // must let go of the shared ports before a new primary starts on them. The primary's pid comes
  // with the settings: a primary killed while this process was still booting has already handed
  // it to init, and `process.ppid` read now would look like a live parent.
  const parent = settings.primaryPid;
  let worker: ServingWorker | null = null;
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await worker?.stop().catch(() => {});
    process.exit(0);
  };
  setInterval(() => {
    if (process.ppid !== parent) void shutdown();
  }, 100);
  process.on("SIGINT", () => void shutdown());
  process.on("SIGTERM", () => void shutdown());
  try {
    worker = await startServingWorker(settings);
  } catch (e) {
    console.error(`pier: serving worker ${settings.index} could not start: ${(e as Error).message}`);
    process.exit(1);
  }
  if (stopping || process.ppid !== parent) await worker.stop().then(() => process.exit(0));
  reportListening();
}
