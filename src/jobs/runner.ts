// The in-process worker: claims due jobs one at a time in each lane (publishes beside the rest),
// runs their handler, retries failures with exponential backoff and jitter, and a sweeper
// recovers jobs whose worker died (lease expired) — after a crash or SIGKILL, queued work resumes on the next start. While a handler
// runs, its lease is renewed (heartbeat), so only a dead worker's jobs are ever recovered; a job
// whose worker died during its last allowed attempt fails instead of being retried forever.
import { and, eq, lte, sql } from "drizzle-orm";
import { randomToken } from "../core/ids";
import type { Deps } from "../core/context";
import { jobs } from "../db/schema";
import type { JobRow } from "./queue";
import { isoAfter } from "../core/clock";

export interface JobHandler {
  run(deps: Deps, payload: Record<string, unknown>, job: JobRow): Promise<Record<string, unknown> | void>;
  /** Called once when the last attempt failed. */
  onFailure?(deps: Deps, payload: Record<string, unknown>, error: string): Promise<void> | void;
  maxAttempts?: number;
  /** How long a run may take before the sweeper assumes its worker died. */
  leaseMs?: number;
  /**
   * The lane it runs in (default "background"). Each lane runs its jobs one at a time, lanes
   * side by side: a publish someone waits for is not queued behind a backup, a blob
   * collection or a large git sync (D306).
   */
  lane?: JobLane;
}

export type JobLane = "publish" | "background";
const LANES: JobLane[] = ["publish", "background"];

export interface PeriodicTask {
  kind: string;
  everyMs: number;
}

/** The publish build's job kind (src/features/publish): its run times are also pier_publish_build_seconds. */
const BUILD_JOB_KIND = "publish.build";
const DEFAULT_LEASE_MS = 5 * 60_000;
const DEFAULT_HEARTBEAT_MS = 60_000;
const DIED_ERROR = "its worker stopped during the last attempt";

export function backoffMs(attempt: number): number {
  const base = Math.min(1000 * 2 ** (attempt - 1), 10 * 60_000);
  return base / 2 + Math.random() * (base / 2);
}

export class JobRunner {
  readonly workerId = `w_${randomToken(10)}`;
  private readonly timers = new Map<JobLane, ReturnType<typeof setTimeout>>();
  private readonly running = new Map<JobLane, Promise<void>>();
  /** Each lane's job kinds (lanes without a handler are left out). */
  private readonly lanes = new Map<JobLane, string[]>();
  private stopped = true;
  /** One lease for every claim: long enough for the slowest kind. */
  private readonly leaseMs: number;

  constructor(
    private readonly deps: Deps,
    private readonly handlers: Record<string, JobHandler>,
    private readonly periodic: PeriodicTask[] = [],
    private readonly pollMs = 1000,
    /** How often a running job's lease is renewed (real time); well under the lease. */
    private readonly heartbeatMs = DEFAULT_HEARTBEAT_MS,
  ) {
    this.leaseMs = Math.max(DEFAULT_LEASE_MS, ...Object.values(handlers).map((h) => h.leaseMs ?? 0));
    for (const lane of LANES) {
      const kinds = Object.keys(handlers).filter((k) => (handlers[k]!.lane ?? "background") === lane);
      if (kinds.length) this.lanes.set(lane, kinds);
    }
  }

  start(): void {
    this.stopped = false;
    // One job worker per data dir (DESIGN): at start every running job belongs to a worker
    // that died (SIGKILL, power loss), so it resumes now rather than when its lease runs out.
    this.sweep(true);
    this.schedulePeriodic();
    this.deps.jobs.onEnqueue = () => this.kick();
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await Promise.all(this.running.values());
  }

  private kick(): void {
    for (const lane of this.lanes.keys()) this.kickLane(lane);
  }

  private kickLane(lane: JobLane): void {
    if (this.stopped || this.running.has(lane)) return;
    clearTimeout(this.timers.get(lane));
    this.timers.delete(lane);
    const kinds = this.lanes.get(lane)!;
    // Marked running before the loop starts: a handler that enqueues (kick) must not start a
    // second loop in its own lane.
    this.running.set(
      lane,
      Promise.resolve()
        .then(() => this.loop(kinds))
        .finally(() => {
          this.running.delete(lane);
          if (!this.stopped)
            this.timers.set(
              lane,
              setTimeout(() => this.kickLane(lane), this.pollMs),
            );
        }),
    );
  }

  private async loop(kinds: string[]): Promise<void> {
    while (!this.stopped) {
      this.sweep();
      if (!(await this.runOne(kinds))) return;
    }
  }

  /** Run every job that is due now, one at a time whatever its lane (tests use this to drive background work deterministically). */
  async drain(max = 1000): Promise<number> {
    let n = 0;
    while (n < max && (await this.runOne(Object.keys(this.handlers)))) n++;
    return n;
  }

  /** Recover jobs whose lease passed: their worker crashed or was killed mid-run (orphans: every running job of another worker). */
  sweep(orphans = false): number {
    const now = this.deps.clock.now().toISOString();
    const expired = orphans
      ? and(eq(jobs.status, "running"), sql`coalesce(${jobs.workerId}, '') <> ${this.workerId}`)
      : and(eq(jobs.status, "running"), lte(jobs.leaseUntil, now));
    const stuck = this.deps.db.select().from(jobs).where(expired).all();
    if (!stuck.length) return 0;
    const exhausted: JobRow[] = [];
    for (const job of stuck) {
      const max = this.handlers[job.kind]?.maxAttempts ?? job.maxAttempts;
      // The same conditions again in the UPDATE: another process may have swept it meanwhile.
      const where = and(eq(jobs.id, job.id), expired);
      if (job.attempts >= max) {
        const done = this.deps.db
          .update(jobs)
          .set({ status: "failed", leaseUntil: null, workerId: null, updatedAt: now, finishedAt: now, lastError: DIED_ERROR })
          .where(where)
          .returning({ id: jobs.id })
          .all();
        if (done.length) exhausted.push(job);
      } else {
        this.deps.db
          .update(jobs)
          .set({
            status: "queued",
            leaseUntil: null,
            workerId: null,
            updatedAt: now,
            lastError: sql`coalesce(${jobs.lastError}, 'recovered after its worker stopped')`,
          })
          .where(where)
          .run();
      }
    }
    this.deps.log.warn("recovered stuck jobs", { count: stuck.length, failed: exhausted.length });
    for (const job of exhausted) void this.callFailureHook(job, DIED_ERROR);
    return stuck.length;
  }

  private async callFailureHook(job: JobRow, message: string): Promise<void> {
    try {
      await this.handlers[job.kind]?.onFailure?.(this.deps, job.payload, message);
    } catch (e) {
      this.deps.log.error("job failure hook failed", { id: job.id, error: e });
    }
  }

  /** Extend the lease of a job this worker is still running. */
  private renewLease(job: JobRow): void {
    try {
      const now = this.deps.clock.now();
      this.deps.db
        .update(jobs)
        .set({ leaseUntil: isoAfter(now, this.leaseMs), updatedAt: now.toISOString() })
        .where(and(eq(jobs.id, job.id), eq(jobs.workerId, this.workerId), eq(jobs.status, "running")))
        .run();
    } catch (e) {
      this.deps.log.warn("job lease renewal failed", { id: job.id, error: e });
    }
  }

  schedulePeriodic(): void {
    for (const task of this.periodic) {
      this.deps.jobs.enqueue(task.kind, {}, { uniqueKey: `periodic:${task.kind}`, maxAttempts: 1 });
    }
  }

  private claim(kinds: string[]): JobRow | undefined {
    const now = this.deps.clock.now();
    if (!kinds.length) return undefined;
    // One statement: a claimed job can never be taken by a second worker.
    return this.deps.db
      .update(jobs)
      .set({
        status: "running",
        workerId: this.workerId,
        attempts: sql`${jobs.attempts} + 1`,
        updatedAt: now.toISOString(),
        leaseUntil: isoAfter(now, this.leaseMs),
      })
      .where(
        sql`${jobs.id} = (select id from jobs where status = 'queued' and run_at <= ${now.toISOString()} and kind in (${sql.join(
          kinds.map((k) => sql`${k}`),
          sql`, `,
        )}) order by run_at limit 1)`,
      )
      .returning()
      .get();
  }

  private async runOne(kinds: string[]): Promise<boolean> {
    const job = this.claim(kinds);
    if (!job) return false;
    const handler = this.handlers[job.kind]!;
    const started = Date.now();
    const heartbeat = setInterval(() => this.renewLease(job), this.heartbeatMs);
    let failed = false;
    try {
      const result = await handler.run(this.deps, job.payload, job);
      this.finish(job, { status: "done", result: result ?? null });
      this.deps.log.debug("job done", { id: job.id, kind: job.kind, ms: Date.now() - started });
    } catch (err) {
      failed = true;
      const message = err instanceof Error ? err.message : String(err);
      const max = handler.maxAttempts ?? job.maxAttempts;
      if (job.attempts >= max) {
        clearInterval(heartbeat);
        if (this.finish(job, { status: "failed", lastError: message })) {
          this.deps.log.error("job failed", { id: job.id, kind: job.kind, error: message });
          await this.callFailureHook(job, message);
        }
      } else {
        const runAt = new Date(this.deps.clock.now().getTime() + backoffMs(job.attempts)).toISOString();
        this.finish(job, { status: "queued", lastError: message, runAt });
        this.deps.log.warn("job will retry", { id: job.id, kind: job.kind, attempt: job.attempts, error: message });
      }
    } finally {
      clearInterval(heartbeat);
      this.count(job, started, failed);
    }
    const periodic = this.periodic.find((p) => p.kind === job.kind);
    if (periodic) {
      const runAt = new Date(this.deps.clock.now().getTime() + periodic.everyMs);
      this.deps.jobs.enqueue(job.kind, {}, { uniqueKey: `periodic:${job.kind}`, maxAttempts: 1, runAt });
    }
    return true;
  }

  /** Run time and outcome into the metrics (real time: a test's manual clock does not move during a run). */
  private count(job: JobRow, startedMs: number, failed: boolean): void {
    const m = this.deps.metrics;
    if (!m) return;
    const seconds = (Date.now() - startedMs) / 1000;
    const slot = m.jobSlot(job.kind);
    m.jobRuns.inc(slot);
    m.jobDuration.observe(slot, seconds);
    if (failed) m.jobFailures.inc(slot);
    else if (job.kind === BUILD_JOB_KIND) m.buildDuration.observe(0, seconds);
  }

  /** Record the outcome; false when this worker no longer holds the job (it was swept). */
  private finish(job: JobRow, patch: Partial<JobRow>): boolean {
    const now = this.deps.clock.now().toISOString();
    const final = patch.status === "done" || patch.status === "failed";
    return (
      this.deps.db
        .update(jobs)
        .set({ ...patch, leaseUntil: null, workerId: null, updatedAt: now, finishedAt: final ? now : null })
        .where(and(eq(jobs.id, job.id), eq(jobs.workerId, this.workerId), eq(jobs.status, "running")))
        .returning({ id: jobs.id })
        .all().length > 0
    );
  }
}
