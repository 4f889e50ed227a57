// Start and stop a whole Pier: config -> db -> migrate -> listeners -> jobs. Used by
// `pier serve` and by the tests (in-process, free ports, temp data dir).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Server } from "bun";
import { buildApp, type App } from "./app";
import {
  relaySocketPath,
  relayToPrimary,
  reportMetricsToPrimary,
  spawnServingWorkers,
  startRelay,
  watchOtherCommits,
  followSiteChanges,
  type ServingWorkers,
  type WorkerSettings,
} from "./serving-workers";
import { DiskBlobStore } from "./blobs/disk";
import { ensureSecretKey, resolveUrls, type Config } from "./config";
import { systemClock, type Clock } from "./core/clock";
import type { Deps } from "./core/context";
import { SecretBox } from "./core/crypto";
import { createLogger, type Logger } from "./core/log";
import { openDatabase } from "./db/client";
import { migrate } from "./db/migrate";
import { PlanCatalog } from "./features/accounts/plans";
import { SigninGuard } from "./features/accounts/signin-limits";
import { newUsedTotpSteps } from "./features/accounts/totp";
import { ActivityRecorder } from "./features/agent-auth/activity";
import { newEmailCodeLog } from "./features/agent-auth/email-code";
import { newMailer } from "./features/mail/outbound";
import { recordMessageRead } from "./features/mail/messages";
import { newPublishLimiters } from "./features/publish/limits";
import type { SiteChangeListener } from "./features/publish/events";
import { JobQueue } from "./jobs/queue";
import { JobRunner } from "./jobs/runner";
import { jobHandlers, periodicTasks } from "./jobs/tasks";
import { makeFetch, MAX_BODY_BYTES, startingResponse, type Dispatch } from "./http/server";
import { createSiteHandler } from "./sites/server";
import { loadTlsMaterial, TlsConfigError } from "./tls/material";
import { startMailReceiver, type MailReceiver } from "./features/mail/receiver";
import { actorFromOAuthToken } from "./features/oauth/grants";
import { activeCustomDomain, activeCustomDomains } from "./features/domains";

import { acmeFront, acmeManager, apiHostname, createCertificateManager, mxHostname, withHsts, type CertificateManager } from "./acme";
import { onSiteChange } from "./features/publish";
import { HttpsListener } from "./http/https-listener";
import { AnalyticsRecorder, checkGeoDb } from "./features/analytics";
import { bucketSyncFields } from "./features/gitsync";
import { ConfigError } from "./config";
import { prepareUpgrade, type UpgradePlan } from "./features/operations";

import { PierMetrics } from "./core/pier-metrics";
import { newRequestNote, requestMeter, type RequestMeter } from "./http/request-metrics";
import { gatherBeforeScrape, startMetricsListener, startMonitoring, stopMonitoring } from "./features/monitoring";
import { addDeltas } from "./core/metrics";

export interface StartOptions {
  clock?: Clock;
  log?: Logger;
  /** Tests drive the worker themselves (runner.drain()) when false. */
  startWorker?: boolean;
  /** DNS for the inbound mail authentication checks (tests: a local table); default the system resolver. */
  mailResolver?: import("mailauth").DNSResolver;
  /** Inbound filing knobs (group commit, reading on the event loop): benchmarks compare them. */
  mailFiling?: Omit<import("./features/mail/filer").InboundOptions, "resolver">;

  /** false for admin commands: a server on the same data dir may be writing upload temp files. */
  clearTempFiles?: boolean;
  /**
   * Serving processes in all (`--workers`): more than 1 binds the ports with SO_REUSEPORT and
   * starts the others (src/serving-workers.ts). Default 1: this process alone.
   */
  servingWorkers?: number;
  /** This process is a serving worker of another Pier (site requests only; the rest is relayed). */
  worker?: WorkerSettings;
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

/** Open the data dir and database and apply migrations (also used by `pier admin`). */
export function openData(config: Config) {
  // 0700: the database and secret.key are for Pier's user only (applies when Pier creates it).
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const handle = openDatabase(join(config.dataDir, "pier.db"));
  let upgrade: UpgradePlan;
  try {
    upgrade = prepareUpgrade(handle.sqlite, config.dataDir);
  } catch (e) {
    handle.close();
    throw e;
  }
  const applied = migrate(handle.sqlite);
  return { handle, applied, preMigrateBackup: upgrade.backup };
}

/** Dependencies without listeners (CLI admin commands use these directly). */
export async function createDeps(config: Config, httpPort: number, opts: StartOptions = {}): Promise<Deps & { close(): void }> {
  const log = opts.log ?? createLogger(config.logLevel, undefined, config.logFormat);
  const geoProblem = checkGeoDb(config.geoipDb);
  if (geoProblem) throw new ConfigError(geoProblem);
  const plans = PlanCatalog.load(config.plansFile, config.defaultPlan, config.ownerPlan);
  const { handle, applied, preMigrateBackup } = openData(config);
  if (preMigrateBackup) log.info("database backed up before migrating", { backup: preMigrateBackup, pending: applied });
  if (applied.length) log.info("migrations applied", { migrations: applied });
  const blobs = new DiskBlobStore(join(config.dataDir, "blobs"));
  // Admin commands and serving workers must not clear the blob store's temp folder: a running
  // server's (the primary's) uploads are in it.
  await blobs.init(!opts.worker && (opts.clearTempFiles ?? true));
  const clock = opts.clock ?? systemClock;
  // The recorder and the mailer hold Deps themselves: they are attached once the rest exists.
  const base = {
    config,
    urls: resolveUrls(config, httpPort),
    db: handle.db,
    sqlite: handle.sqlite,
    blobs,
    jobs: new JobQueue(handle.db, clock),
    clock,
    log,
    secrets: new SecretBox(ensureSecretKey(config)),
    plans,
    emailCodesSent: newEmailCodeLog(),
    publishLimiters: newPublishLimiters(config),
    usedTotpSteps: newUsedTotpSteps(),
    signinGuard: new SigninGuard(),
    onFileRead: [recordMessageRead],
    certificates: null,
    close: () => handle.close(),
    siteChangeListeners: new Set<SiteChangeListener>(),
    metrics: new PierMetrics(Object.keys(jobHandlers)),
  };
  const deps = base as typeof base & Pick<Deps, "agentActivity" | "mailer" | "customDomainOf" | "customDomainsOf" | "analytics" | "gitSyncOf">;
  deps.agentActivity = new ActivityRecorder(deps);
  deps.mailer = newMailer(deps);
  deps.customDomainOf = (bucketId) => activeCustomDomain(deps, bucketId);
  deps.customDomainsOf = (bucketIds) => activeCustomDomains(deps, bucketIds);
  deps.analytics = new AnalyticsRecorder(deps);
  deps.gitSyncOf = (bucket) => bucketSyncFields(deps, bucket);
  (deps as Deps).certificates = createCertificateManager(deps, opts.worker !== undefined);
  return deps;
}

export async function startPier(config: Config, opts: StartOptions = {}): Promise<Pier> {
  let dispatch: Dispatch | null = null;
  let deps!: Deps & { close(): void };
  // One handler once deps exist (not a new closure per request: it showed in the site benchmark).
  let handler: ReturnType<typeof makeFetch> | null = null;
  let meter: RequestMeter | null = null;
  const fetch = (req: Request, server: Server<unknown>) => {
    if (!handler && deps) {
      const acme = acmeManager(deps);
      handler = makeFetch(deps, () => dispatch, acme ? acmeFront(deps, acme, forward) : null, forward, note);
      meter = requestMeter(deps);
      if (relayed) meter = skipRelayed(meter, relayed);
    }
    if (!handler) return startingResponse(req);
    // The one metrics call per request: counted when the response (headers) is ready.
    // What the dispatcher and the site server learned on the way (host kind, path) is read before
    // any other request runs: the meter does not read the Host header or req.url again.
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
  const note = newRequestNote();
  const worker = opts.worker ?? null;
  // A worker's relayed answers are counted and logged by the primary, which answered them.
  const relayed = worker ? new WeakSet<Response>() : null;
  if (worker) {
    // A serving worker binds the primary's resolved ports and runs nothing but the site server
    // (with automatic HTTPS, the certificates the primary stored: CertificateManager.followStore).
    // The --metrics-port listener is the primary's (it adds the workers' counters): a worker
    // binding it too would fail to start on a fixed port.
    config = { ...config, httpPort: worker.httpPort, httpsPort: worker.httpsPort, smtpPort: null, metricsPort: null };
  }
  const workersWanted = worker ? 1 : Math.max(1, opts.servingWorkers ?? 1);
  const shared = worker !== null || workersWanted > 1;
  const forward = worker ? relayToPrimary(worker.relaySocket, relayed!) : null;
  // SO_REUSEPORT would let this process share a port another program (or another Pier) holds with
  // it too: the primary first checks that the port is free (the workers then join it).
  if (shared && !worker && config.httpPort !== 0) await assertPortFree(config.host, config.httpPort);
  const bind = () =>
    Bun.serve({ hostname: config.host, port: config.httpPort, fetch, maxRequestBodySize: MAX_BODY_BYTES, idleTimeout: 120, reusePort: shared });
  // The primary binds first so port 0 resolves to the real port before URLs are derived from it.
  // A worker already knows its port and joins it only once it can answer: bound earlier, the
  // kernel would hand it some of the port's connections while it still says "Pier is starting".
  const early = worker ? null : bind();
  try {
    deps = await createDeps(config, early?.port ?? config.httpPort, opts);
  } catch (e) {
    early?.stop(true);
    throw e;
  }
  const app = buildApp(deps, { resolvers: [actorFromOAuthToken] });
  const sites = createSiteHandler(deps, note);
  dispatch = { app, sites };
  const http = early ?? bind();
  const acme = acmeManager(deps);
  // Another process's commit may be a publish, an access change or a rename: the publications
  // the change log names are forgotten (commits that change no site, such as analytics roll-ups,
  // name none). A worker's certificates follow their table on any commit (a new or renewed one,
  // a forgotten one).
  const follow = worker && acme ? () => acme.followStore() : () => {};
  const stopWatching = shared ? watchOtherCommits(deps, followSiteChanges(deps, sites, follow)) : () => {};
  let smtp: MailReceiver | null = null;
  let https: HttpsListener | null = null;
  try {
    if (config.httpsPort !== null) https = await startHttps(deps, fetch);
    if (config.smtpPort !== null) smtp = await startMailReceiver(deps, { ...opts.mailFiling, resolver: opts.mailResolver });
  } catch (e) {
    http.stop(true);
    https?.stop(true);
    acme?.close();
    deps.close();
    throw e;
  }
  if (acme && worker) wireHttpsCertificates(deps, acme, https);
  else if (acme) wireAutomaticHttps(deps, acme, https, smtp);
  let metricsListener: Server<unknown> | null = null;
  try {
    if (config.metricsPort !== null) metricsListener = startMetricsListener(deps, config.metricsPort);
  } catch (e) {
    http.stop(true);
    https?.stop(true);
    await smtp?.stop(0);
    acme?.close();
    deps.close();
    throw e;
  }
  startMonitoring(deps);
  const runner = new JobRunner(deps, jobHandlers, periodicTasks);
  if (opts.startWorker !== false && !worker) runner.start();
  deps.analytics.start();
  let relay: Server<unknown> | null = null;
  let workers: ServingWorkers | null = null;
  if (workersWanted > 1) {
    const relaySocket = relaySocketPath(config.dataDir);
    relay = startRelay(relaySocket, fetch);
    const metrics = deps.metrics.all();
    workers = spawnServingWorkers({ config, httpPort: http.port!, httpsPort: https?.port ?? null, relaySocket }, workersWanted - 1, deps.log, (deltas) =>
      addDeltas(metrics, deltas),
    );
    const serving = workers;
    gatherBeforeScrape(deps, () => serving.collectMetrics());
  }
  const stopReporting = worker ? reportMetricsToPrimary(deps.metrics.all()) : () => {};
  let stopped = false;
  return {
    deps,
    app,
    runner,
    http,
    httpPort: http.port!,
    smtp,
    https,
    ports: { http: http.port!, https: https?.port ?? null, smtp: smtp?.port ?? null, metrics: metricsListener?.port ?? null },
    async stop(timeoutMs = config.shutdownTimeoutSeconds * 1000) {
      if (stopped) return;
      stopped = true;
      await workers?.stop();
      // Stop accepting everywhere at once; what is in flight (requests, relayed requests of the
      // workers, SMTP transactions, the running job) finishes, up to the shutdown timeout, after
      // which connections are cut.
      const graceful = Promise.all([http.stop(), relay?.stop(), https?.stop(), smtp?.stop(timeoutMs), runner.stop()]).then(() => true);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
      const finished = await Promise.race([graceful, deadline]);
      clearTimeout(timer);
      if (!finished) {
        deps.log.warn("shutdown timeout reached: cutting the connections still open", { timeout_s: timeoutMs / 1000 });
        await Promise.all([http.stop(true), https?.stop(true)]);
      }
      stopWatching();
      stopReporting();
      metricsListener?.stop(true);
      stopMonitoring(deps);
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
 * The HTTPS listener: the same Host-routed handler as HTTP, with the operator's certificate or
 * a self-signed one for the API host and *.<sites-domain> (kept in <data-dir>/https-tls) as the
 * fallback, and every automatic certificate by SNI.
 */
async function startHttps(deps: Deps, fetch: (req: Request, server: Server<unknown>) => Response | Promise<Response>): Promise<HttpsListener> {
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
    { hostname: deps.config.host, port: deps.config.httpsPort!, fetch: withHsts(fetch, deps.config.hsts), fallback: { cert: tls.cert, key: tls.key } },
    entries,
  );
}

const sniEntries = (acme: CertificateManager) => acme.servedCertificates().map((c) => ({ serverName: c.host, cert: c.cert, key: c.key }));

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
 * What every process serving HTTPS does with automatic certificates: redirect to the bound port
 * and swap the listener when the served set changes. In a serving worker that is all: the
 * changes come from the table (followStore, at each of the primary's commits), and orders,
 * SMTP and the eager hosts are the primary's.
 */
function wireHttpsCertificates(deps: Deps, acme: CertificateManager, https: HttpsListener | null): void {
  acme.httpsPort = https?.port ?? null;
  acme.onChange(() => {
    if (https) https.update(sniEntries(acme)).catch((e) => deps.log.error("https certificate swap failed", { error: e }));
  });
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
