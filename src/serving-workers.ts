// Serving on every core (docs/deployment.md "Serving workers"): `pier serve --workers N` runs the
// primary (the full Pier: job worker, SMTP, ACME, API) plus N serving workers that bind the same
// HTTP and HTTPS ports with SO_REUSEPORT, so the kernel spreads connections over them; once they
// all listen, the primary stops accepting public connections (D227). A worker
// (src/serving-process.ts) answers site GET/HEAD requests from its own caches and relays every
// other request (API, dashboard, any POST) to the primary over a Unix socket in the data dir, so
// sessions, rate limits and anything else kept in memory live in exactly one place. When another
// process commits to the database (SQLite's `PRAGMA data_version`, polled), a process forgets
// what it caches about the sites that commit changed (the `site_changes` log kept by triggers,
// src/sites/changes.ts), which bounds how long a change takes to show; the primary's own site
// changes are announced to the workers at once over the spawn's IPC channel.
// With automatic HTTPS the same poll keeps a worker's certificates in step with the table the
// primary writes (CertificateManager.followStore), and the HTTP-01 challenge path is relayed to
// the primary, which runs every order and holds the answers.
// Metrics: a worker sends what its counters grew by to the primary over the spawn's IPC
// channel, so the primary's /metrics shows every process's requests. The relay itself is
// src/serving-relay.ts.
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { Config } from "./config";
import type { Deps } from "./core/context";
import type { Logger } from "./core/log";
import { settlesWithin } from "./core/deadline";
import { DeltaReader, type Metric, type MetricDeltas } from "./core/metrics";
import { siteChangeReader, type SiteChanges } from "./sites/changes";
import { forgetChangedSites, type SiteHandler } from "./sites/server";
import { RELAY_FETCH_ENV } from "./serving-relay";
import { WORKER_ENV } from "./worker-env";

/** How often each process checks for other processes' commits: the bound on a change's delay. */
export const CHANGE_POLL_MS = 200;

/** How often a worker sends what its counters grew by to the primary (a scrape also asks at once). */
export const METRICS_PUSH_MS = 1000;
/** How long a scrape waits for the workers' counters before it answers with what it has. */
export const METRICS_PULL_TIMEOUT_MS = 1000;

/** The primary asks a worker for its counters (over the spawn's IPC channel). */
interface MetricsAsk {
  type: "metrics?";
  id: number;
}
/** A worker's counter growth since its previous message; `id` answers an ask. */
interface MetricsReport {
  type: "metrics";
  id?: number;
  deltas: MetricDeltas | null;
}
/** A worker listens on the shared ports (sent once it can answer). */
interface ListeningReport {
  type: "listening";
}
/** The primary committed a site change: look at the change log now rather than at the next poll. */
interface ChangeAnnouncement {
  type: "changed";
}

/** How long the primary waits for its workers to listen before it hands them the public ports. */
export const WORKERS_LISTENING_TIMEOUT_MS = 30_000;
/**
 * A worker that dies is started again after at least 1 s from its own start, then 2, 4, 8 ... at
 * most 60 s while it keeps dying young (D267); one that stayed up WORKER_STABLE_MS starts over.
 */
export const WORKER_RESTART_MIN_MS = 1_000;
export const WORKER_RESTART_MAX_MS = 60_000;
export const WORKER_STABLE_MS = 60_000;

/** How long to wait before starting slot's next worker: `failures` early deaths in a row so far. */
export function restartDelay(failures: number, upMs: number): number {
  return Math.max(0, Math.min(WORKER_RESTART_MAX_MS, WORKER_RESTART_MIN_MS * 2 ** Math.min(failures, 16)) - upMs);
}

/** After its shutdown timeout, how long a worker has to exit before it is killed. */
const WORKER_EXIT_GRACE_MS = 2_000;

/** A worker's side of the primary's announcements (ServingWorkers.announceChange). Returns a stop. */
export function followAnnouncedChanges(onAnnounced: () => void): () => void {
  const onMessage = (m: ChangeAnnouncement) => {
    if (m?.type === "changed") onAnnounced();
  };
  process.on("message", onMessage);
  return () => process.off("message", onMessage);
}

/** A serving worker tells the primary it listens (see spawnServingWorkers' `listening`). */
export function reportListening(): void {
  try {
    process.send?.({ type: "listening" } satisfies ListeningReport);
  } catch {
    // the primary is gone: this worker is about to exit (it watches its parent)
  }
}

export { WORKER_ENV };

export interface WorkerSettings {
  config: Config;
  httpPort: number;
  httpsPort: number | null;
  relaySocket: string;
  index: number;
  /** The primary's pid: a worker whose parent is not (or no longer) this process stops. */
  primaryPid: number;
  /** How often the worker polls for other processes' commits (CHANGE_POLL_MS unless a test proves the announcements alone). */
  changePollMs?: number;
}

/**
 * `--workers auto` stops here: past 8 processes a small server gains little (the primary's relay
 * and SQLite's single writer bound the rest) while each worker holds its own file cache.
 */
export const MAX_AUTO_WORKERS = 8;

/** How many serving processes `--workers` asks for (0 = auto: one per core, at most MAX_AUTO_WORKERS). */
export function workerCount(config: Pick<Config, "workers">, cores = navigator.hardwareConcurrency || 1): number {
  return config.workers > 0 ? config.workers : Math.min(MAX_AUTO_WORKERS, Math.max(1, cores));
}

export interface CommitWatch {
  /** Look now instead of at the next poll (the primary announced a change). */
  check(): void;
  stop(): void;
}

/**
 * Calls `onChange` whenever another connection (another process) committed to the database.
 * One `PRAGMA data_version` per poll: an integer read, no table touched.
 */
export function watchOtherCommits(deps: Pick<Deps, "sqlite" | "log">, onChange: () => void, intervalMs = CHANGE_POLL_MS): CommitWatch {
  const read = () => (deps.sqlite.query("PRAGMA data_version").get() as { data_version: number }).data_version;
  let last = read();
  const check = () => {
    try {
      const now = read();
      if (now !== last) {
        last = now;
        onChange();
      }
    } catch (e) {
      deps.log.warn("data_version poll failed", { error: (e as Error).message });
    }
  };
  const timer = setInterval(check, intervalMs);
  timer.unref?.();
  return { check, stop: () => clearInterval(timer) };
}

export interface ServingWorkers {
  /** Ask every worker for its counters now (they arrive through `onMetrics`); bounded by METRICS_PULL_TIMEOUT_MS. */
  collectMetrics(): Promise<void>;
  /** True once every worker started here has listened at least once; false after `timeoutMs` without. */
  listening(timeoutMs: number): Promise<boolean>;
  /**
   * Tell every worker this process just committed a site change (a publish, an access change, a
   * rename): they read the change log at once, so an API client that saw the change done finds
   * the site changed too. The poll stays the bound for other writers (admin commands).
   */
  announceChange(): void;
  /** How many workers listen now. */
  listeningNow(): number;
  stop(timeoutMs: number): Promise<void>;
}

/**
 * Start `count` serving processes (the same executable, so the compiled binary works too), and
 * start a replacement when one dies unexpectedly (after 1 s, backing off to 60 s while they keep
 * dying: restartDelay). What their counters grew by comes back through `onMetrics` (pushed every
 * second, and whenever asked); `onListening` hears how many workers listen whenever that changes.
 */
export function spawnServingWorkers(
  settings: Omit<WorkerSettings, "index" | "primaryPid">,
  count: number,
  log: Logger,
  onMetrics: (deltas: MetricDeltas) => void = () => {},
  onListening: (listening: number) => void = () => {},
): ServingWorkers {
  const procs = new Map<number, Subprocess>();
  // Slots whose current worker listens, and each slot's early deaths in a row (the backoff).
  const listeningNow = new Set<number>();
  const failures = new Map<number, number>();
  const restarts = new Set<ReturnType<typeof setTimeout>>();
  const asks = new Map<number, () => void>();
  let nextAsk = 0;
  let stopping = false;
  // Settled once every worker started here has said it listens (a restarted one says it again).
  const notListened = new Set(Array.from({ length: count }, (_, i) => i + 1));
  const listened = Promise.withResolvers<void>();
  const heard = (index: number) => {
    notListened.delete(index);
    if (notListened.size === 0) listened.resolve();
  };
  // Compiled: Bun.main is inside the binary ("/$bunfs/..."): the executable alone runs Pier.
  const compiled = Bun.main.startsWith("/$bunfs") || Bun.main.startsWith("B:/~BUN");
  const cmd = compiled ? [process.execPath, "serve"] : [process.execPath, join(import.meta.dir, "main.ts"), "serve"];
  const start = (index: number) => {
    const env = { ...RELAY_FETCH_ENV, ...process.env, [WORKER_ENV]: JSON.stringify({ ...settings, index, primaryPid: process.pid } satisfies WorkerSettings) };
    const startedAt = Date.now();
    const proc = Bun.spawn(cmd, {
      env,
      stdin: "ignore",
      stdout: "inherit",
      stderr: "inherit",
      serialization: "json",
      ipc(message: MetricsReport | ListeningReport) {
        if (message?.type === "listening") {
          if (!listeningNow.has(index)) {
            listeningNow.add(index);
            onListening(listeningNow.size);
          }
          return heard(index);
        }
        if (message?.type !== "metrics") return;
        if (message.deltas) onMetrics(message.deltas);
        if (message.id !== undefined) asks.get(message.id)?.();
      },
      onExit(_p, code, signal) {
        procs.delete(index);
        const wasListening = listeningNow.delete(index);
        if (stopping) return;
        if (wasListening) onListening(listeningNow.size);
        const upMs = Date.now() - startedAt;
        const failed = upMs >= WORKER_STABLE_MS ? 0 : (failures.get(index) ?? 0);
        failures.set(index, failed + 1);
        const delay = restartDelay(failed, upMs);
        log.error("serving worker exited; starting another", { worker: index, code, signal, restart_in_s: Math.round(delay / 100) / 10 });
        const timer = setTimeout(() => {
          restarts.delete(timer);
          if (!stopping) start(index);
        }, delay);
        restarts.add(timer);
      },
    });
    procs.set(index, proc);
  };
  for (let i = 1; i <= count; i++) start(i);
  const ask = (proc: Subprocess) =>
    new Promise<void>((resolve) => {
      const id = ++nextAsk;
      const done = () => {
        clearTimeout(timer);
        asks.delete(id);
        resolve();
      };
      const timer = setTimeout(done, METRICS_PULL_TIMEOUT_MS);
      asks.set(id, done);
      try {
        proc.send({ type: "metrics?", id } satisfies MetricsAsk);
      } catch {
        done(); // exiting: what it counted last came with its final report
      }
    });
  if (count === 0) listened.resolve();
  return {
    async collectMetrics() {
      await Promise.all([...procs.values()].map(ask));
    },
    announceChange() {
      for (const proc of procs.values()) {
        try {
          proc.send({ type: "changed" } satisfies ChangeAnnouncement);
        } catch {
          // exiting: a replacement reads the change log when it starts
        }
      }
    },
    listening: (timeoutMs) => settlesWithin(listened.promise, timeoutMs),
    listeningNow: () => listeningNow.size,
    async stop(timeoutMs) {
      stopping = true;
      for (const t of restarts) clearTimeout(t);
      const all = [...procs.values()];
      for (const p of all) p.kill("SIGTERM");
      await Promise.all(
        all.map((p) =>
          Promise.race([
            p.exited,
            // A worker drains for up to the shutdown timeout itself; this is for one that hangs.
            Bun.sleep(timeoutMs + WORKER_EXIT_GRACE_MS).then(() => {
              p.kill("SIGKILL");
              return p.exited;
            }),
          ]),
        ),
      );
    },
  };
}

/**
 * A worker's side of the metrics: what its counters and histograms grew by goes to the primary
 * every METRICS_PUSH_MS and whenever the primary asks (a scrape), so /metrics shows every
 * process's requests. Returns a stop that sends the last growth.
 */
export function reportMetricsToPrimary(metrics: Metric[]): () => void {
  const send = process.send?.bind(process);
  if (!send) return () => {};
  const reader = new DeltaReader(metrics);
  const report = (id?: number) => {
    const deltas = reader.take();
    try {
      if (deltas || id !== undefined) send({ type: "metrics", id, deltas } satisfies MetricsReport);
    } catch {
      // the primary is gone (this worker is about to exit: it watches its parent)
    }
  };
  const onMessage = (m: MetricsAsk) => {
    if (m?.type === "metrics?") report(m.id);
  };
  process.on("message", onMessage);
  const timer = setInterval(() => report(), METRICS_PUSH_MS);
  timer.unref?.();
  return () => {
    clearInterval(timer);
    process.off("message", onMessage);
    report();
  };
}

/** This process's settings when it was started as a serving worker, else null. */
export function readWorkerSettings(): WorkerSettings | null {
  const raw = process.env[WORKER_ENV];
  if (!raw) return null;
  return JSON.parse(raw) as WorkerSettings;
}

/** What runs when another process committed: its site changes are forgotten here, then `also`. */
export function followSiteChanges(deps: Deps, sites: SiteHandler, also: () => void): () => void {
  const read = siteChangeReader(deps.sqlite);
  const resets = deps.metrics.siteCacheResets;
  const one = resets.slotOf("publication");
  const all = resets.slotOf("all");
  return () => {
    // Should the log be unreadable (read throws), what changed is unknown, so every site is.
    let changes: SiteChanges | null = { all: true };
    try {
      changes = read();
    } finally {
      if (changes !== null) {
        forgetChangedSites(sites, changes);
        if (changes.all) resets.inc(all);
        else resets.inc(one, changes.publicationIds.length);
      }
      also();
    }
  };
}
