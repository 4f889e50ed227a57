// What /metrics, /livez and /readyz report. Counters are kept where things happen (HTTP at the
// listener, SMTP in the receiver, jobs in the runner); here the gauges that describe state are
// read when a scrape asks: job queue, database and WAL size, free disk, blob store size (walked
// in the background, at most once a minute), certificate expiry, memory and event-loop lag.
import { statfsSync, statSync } from "node:fs";
import { stat } from "node:fs/promises";
import { walkTree } from "../../core/walk";
import { join } from "node:path";
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import type { Deps } from "../../core/context";
import { renderMetrics } from "../../core/metrics";
import { migrations } from "../../db/migrations";
import { apiHostname, mxHostname } from "../../acme";

const BLOB_WALK_EVERY_MS = 60_000;

interface ScrapeState {
  loopDelay: IntervalHistogram | null;
  blobWalk: Promise<void> | null;
  blobWalkedAt: number;
  /** Brings other processes' counters in before a scrape (serving workers), when there are any. */
  gather: (() => Promise<void>) | null;
}
const states = new WeakMap<Deps, ScrapeState>();

function stateOf(deps: Deps): ScrapeState {
  let s = states.get(deps);
  if (!s) {
    let loopDelay: IntervalHistogram | null = null;
    try {
      loopDelay = monitorEventLoopDelay({ resolution: 20 });
      loopDelay.enable();
    } catch {
      // not every runtime has it; the lag gauge then stays 0
    }
    states.set(deps, (s = { loopDelay, blobWalk: null, blobWalkedAt: 0, gather: null }));
  }
  return s;
}

/** Starts the event-loop delay monitor, so the first scrape already has an interval behind it. */
export function startMonitoring(deps: Deps): void {
  stateOf(deps);
}

/**
 * With serving workers, a scrape first asks them for what their counters grew by (added to this
 * process's), so /metrics counts the requests every process answered.
 */
export function gatherBeforeScrape(deps: Deps, gather: () => Promise<void>): void {
  stateOf(deps).gather = gather;
}

export function stopMonitoring(deps: Deps): void {
  states.get(deps)?.loopDelay?.disable();
  states.delete(deps);
}

const fileSize = (path: string): number => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/** Bytes the data dir's file system still lets Pier write (null when the system cannot say). */
export function freeBytes(dataDir: string): { free: number; total: number } | null {
  try {
    const s = statfsSync(dataDir);
    return { free: s.bavail * s.bsize, total: s.blocks * s.bsize };
  } catch {
    return null;
  }
}

async function walkBlobs(deps: Deps): Promise<void> {
  let bytes = 0;
  let count = 0;
  for await (const { path, entry } of walkTree(join(deps.config.dataDir, "blobs"))) {
    if (!entry.isFile() || entry.name.includes(".tmp")) continue;
    try {
      bytes += (await stat(path)).size;
      count++;
    } catch {
      // removed by garbage collection meanwhile
    }
  }
  deps.metrics.blobBytes.set(0, bytes);
  deps.metrics.blobCount.set(0, count);
}

/** The blob totals: walked on the first scrape, then refreshed in the background when older than a minute. */
async function refreshBlobTotals(deps: Deps, s: ScrapeState): Promise<void> {
  if (s.blobWalk) return s.blobWalkedAt === 0 ? s.blobWalk : undefined;
  if (s.blobWalkedAt !== 0 && Date.now() - s.blobWalkedAt < BLOB_WALK_EVERY_MS) return;
  const first = s.blobWalkedAt === 0;
  s.blobWalk = walkBlobs(deps).finally(() => {
    s.blobWalk = null;
    s.blobWalkedAt = Date.now();
  });
  if (first) await s.blobWalk;
}

function readStateGauges(deps: Deps, s: ScrapeState): void {
  const m = deps.metrics;
  const jobs = deps.sqlite
    .query<{ status: string; n: number }, []>("SELECT status, count(*) AS n FROM jobs WHERE status IN ('queued','running','failed') GROUP BY status")
    .all();
  for (const state of ["queued", "running", "failed"]) m.jobDepth.set(m.jobDepth.slotOf(state), jobs.find((j) => j.status === state)?.n ?? 0);

  const db = join(deps.config.dataDir, "pier.db");
  m.dbBytes.set(0, fileSize(db));
  m.walBytes.set(0, fileSize(`${db}-wal`));
  m.diskFree.set(0, freeBytes(deps.config.dataDir)?.free ?? 0);

  const certs = deps.sqlite.query<{ host: string; status: string; not_after: string | null }, []>("SELECT host, status, not_after FROM certificates").all();
  for (const state of ["pending", "issued", "failed"]) m.certificates.set(m.certificates.slotOf(state), certs.filter((c) => c.status === state).length);
  const expiry = (host: string) => {
    const c = certs.find((x) => x.host === host && x.not_after);
    return c ? Date.parse(c.not_after!) / 1000 : 0;
  };
  const api = apiHostname(deps);
  const mx = mxHostname(deps);
  const others = certs.filter((c) => c.not_after && c.host !== api && c.host !== mx).map((c) => Date.parse(c.not_after!) / 1000);
  m.certExpiry.set(m.certExpiry.slotOf("api"), expiry(api));
  m.certExpiry.set(m.certExpiry.slotOf("mx"), expiry(mx));
  m.certExpiry.set(m.certExpiry.slotOf("earliest_other"), others.length ? Math.min(...others) : 0);

  const mem = process.memoryUsage();
  m.memory.set(m.memory.slotOf("rss"), mem.rss);
  m.memory.set(m.memory.slotOf("heap_used"), mem.heapUsed);
  m.memory.set(m.memory.slotOf("heap_total"), mem.heapTotal);
  m.memory.set(m.memory.slotOf("external"), mem.external);

  const h = s.loopDelay;
  if (h && h.count > 0) {
    // The monitor reports nanoseconds; the interval is the time since the previous scrape.
    m.eventLoopLag.set(m.eventLoopLag.slotOf("mean"), h.mean / 1e9);
    m.eventLoopLag.set(m.eventLoopLag.slotOf("p99"), h.percentile(99) / 1e9);
    m.eventLoopLag.set(m.eventLoopLag.slotOf("max"), h.max / 1e9);
    h.reset();
  }
}

/** The Prometheus text exposition of every metric (this process's, plus its serving workers' counters). */
export async function scrapeMetrics(deps: Deps): Promise<string> {
  const s = stateOf(deps);
  await Promise.all([refreshBlobTotals(deps, s), s.gather?.()]);
  readStateGauges(deps, s);
  return renderMetrics(deps.metrics.all());
}

export type CheckResult = "ok" | string;

type Checks = { database: CheckResult; disk: CheckResult; migrations: CheckResult };

export interface Readiness {
  ready: boolean;
  /** Each failing check in a sentence with what the operator needs (free bytes, migration names, SQLite's reason). */
  checks: Checks;
  /**
   * The same checks as a fixed word each ("ok", "not_writable", "full", "not_applied", "unknown"):
   * what anyone may see. The sentences above stay with the operator (D246).
   */
  summary: Checks;
}

/** Below this much free space the server says it is not ready (64 MiB, or 5% of a small disk). */
export function lowSpaceThreshold(totalBytes: number): number {
  return Math.min(64 * 1024 * 1024, Math.floor(totalBytes * 0.05));
}

/** How long a write-lock check's answer is reused: /readyz is not rate limited (load balancers probe it). */
const WRITE_CHECK_REUSE_MS = 1_000;
const writeChecks = new WeakMap<Deps, { at: number; result: CheckResult }>();

/**
 * Whether the database takes a write transaction. It briefly holds SQLite's one write lock, so a
 * flood of /readyz takes it at most once a second: the answer is reused for WRITE_CHECK_REUSE_MS.
 */
function writeCheck(deps: Deps): CheckResult {
  const now = performance.now();
  const last = writeChecks.get(deps);
  if (last && now - last.at < WRITE_CHECK_REUSE_MS) return last.result;
  let result: CheckResult = "ok";
  try {
    deps.sqlite.exec("BEGIN IMMEDIATE");
    deps.sqlite.exec("ROLLBACK");
  } catch (e) {
    result = `not writable: ${(e as Error).message}`;
  }
  writeChecks.set(deps, { at: now, result });
  return result;
}

/**
 * Ready = can take writes: the database accepts a write transaction (not read-only, the write
 * lock can be had within the busy timeout), the data dir's disk has room, and every migration
 * this binary carries has been applied.
 */
export function checkReadiness(deps: Deps): Readiness {
  const checks: Checks = { database: writeCheck(deps), disk: "ok", migrations: "ok" };
  const summary: Checks = { database: checks.database === "ok" ? "ok" : "not_writable", disk: "ok", migrations: "ok" };
  const space = freeBytes(deps.config.dataDir);
  if (space && space.free < lowSpaceThreshold(space.total)) {
    checks.disk = `full: ${space.free} bytes free on the data dir's file system`;
    summary.disk = "full";
  }
  try {
    const applied = new Set(
      deps.sqlite
        .query<{ name: string }, []>("SELECT name FROM __pier_migrations")
        .all()
        .map((r) => r.name),
    );
    const missing = migrations.filter((m) => !applied.has(m.name)).map((m) => m.name);
    if (missing.length) {
      checks.migrations = `not applied: ${missing.join(", ")}`;
      summary.migrations = "not_applied";
    }
  } catch (e) {
    checks.migrations = `unknown: ${(e as Error).message}`;
    summary.migrations = "unknown";
  }
  return { ready: Object.values(checks).every((c) => c === "ok"), checks, summary };
}
