// The in-process worker: claims due jobs one at a time, runs their handler, retries failures
// with exponential backoff and jitter, and a sweeper recovers jobs whose worker died (lease
// expired) — after a crash or SIGKILL, queued work resumes on the next start.
import { and, eq, lte, sql } from "drizzle-orm";
import { randomToken } from "../core/ids";
import type { Deps } from "../core/context";
import { jobs } from "../db/schema";
import type { JobRow } from "./queue";

export interface JobHandler {
  run(deps: Deps, payload: Record<string, unknown>, job: JobRow): Promise<Record<string, unknown> | void>;
  /** Called once when the last attempt failed. */
  onFailure?(deps: Deps, payload: Record<string, unknown>, error: string): Promise<void> | void;
  maxAttempts?: number;
  /** How long a run may take before the sweeper assumes its worker died. */
  leaseMs?: number;
}

export interface PeriodicTask {
  kind: string;
  everyMs: number;
}

const DEFAULT_LEASE_MS = 5 * 60_000;

export function backoffMs(attempt: number): number {
  const base = Math.min(1000 * 2 ** (attempt - 1), 10 * 60_000);
  return base / 2 + Math.random() * (base / 2);
}

export class JobRunner {
  readonly workerId = `w_${randomToken(10)}`;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  /** One lease for every claim: long enough for the slowest kind. */
  private readonly leaseMs: number;

  constructor(
    private readonly deps: Deps,
    private readonly handlers: Record<string, JobHandler>,
    private readonly periodic: PeriodicTask[] = [],
    private readonly pollMs = 1000,
  ) {
    this.leaseMs = Math.max(DEFAULT_LEASE_MS, ...Object.values(handlers).map((h) => h.leaseMs ?? 0));
  }

  start(): void {
    this.stopped = false;
    this.sweep();
    this.schedulePeriodic();
    this.deps.jobs.onEnqueue = () => this.kick();
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private kick(): void {
    if (this.stopped || this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.running = this.loop().finally(() => {
      this.running = null;
      if (!this.stopped) this.timer = setTimeout(() => this.kick(), this.pollMs);
    });
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.sweep();
      if (!(await this.runOne())) return;
    }
  }

  /** Run every job that is due now (tests use this to drive background work deterministically). */
  async drain(max = 1000): Promise<number> {
    let n = 0;
    while (n < max && (await this.runOne())) n++;
    return n;
  }

  /** Recover jobs whose lease passed: their worker crashed or was killed mid-run. */
  sweep(): number {
    const now = this.deps.clock.now().toISOString();
    const rows = this.deps.db.update(jobs)
      .set({ status: "queued", leaseUntil: null, workerId: null, updatedAt: now, lastError: sql`coalesce(${jobs.lastError}, 'recovered after its worker stopped')` })
      .where(and(eq(jobs.status, "running"), lte(jobs.leaseUntil, now)))
      .returning({ id: jobs.id }).all();
    if (rows.length) this.deps.log.warn("recovered stuck jobs", { count: rows.length });
    return rows.length;
  }

  schedulePeriodic(): void {
    for (const task of this.periodic) {
      this.deps.jobs.enqueue(task.kind, {}, { uniqueKey: `periodic:${task.kind}`, maxAttempts: 1 });
    }
  }

  private claim(): JobRow | undefined {
    const now = this.deps.clock.now();
    const kinds = Object.keys(this.handlers);
    if (!kinds.length) return undefined;
    // One statement: a claimed job can never be taken by a second worker.
    return this.deps.db.update(jobs)
      .set({
        status: "running", workerId: this.workerId, attempts: sql`${jobs.attempts} + 1`, updatedAt: now.toISOString(),
        leaseUntil: new Date(now.getTime() + this.leaseMs).toISOString(),
      })
      .where(sql`${jobs.id} = (select id from jobs where status = 'queued' and run_at <= ${now.toISOString()} and kind in (${sql.join(kinds.map((k) => sql`${k}`), sql`, `)}) order by run_at limit 1)`)
      .returning().get();
  }

  private async runOne(): Promise<boolean> {
    const job = this.claim();
    if (!job) return false;
    const handler = this.handlers[job.kind]!;
    const started = Date.now();
    try {
      const result = await handler.run(this.deps, job.payload, job);
      this.finish(job, { status: "done", result: result ?? null });
      this.deps.log.debug("job done", { id: job.id, kind: job.kind, ms: Date.now() - started });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const max = handler.maxAttempts ?? job.maxAttempts;
      if (job.attempts >= max) {
        this.finish(job, { status: "failed", lastError: message });
        this.deps.log.error("job failed", { id: job.id, kind: job.kind, error: message });
        try {
          await handler.onFailure?.(this.deps, job.payload, message);
        } catch (e) {
          this.deps.log.error("job failure hook failed", { id: job.id, error: e });
        }
      } else {
        const runAt = new Date(this.deps.clock.now().getTime() + backoffMs(job.attempts)).toISOString();
        this.finish(job, { status: "queued", lastError: message, runAt });
        this.deps.log.warn("job will retry", { id: job.id, kind: job.kind, attempt: job.attempts, error: message });
      }
    }
    const periodic = this.periodic.find((p) => p.kind === job.kind);
    if (periodic) {
      const runAt = new Date(this.deps.clock.now().getTime() + periodic.everyMs);
      this.deps.jobs.enqueue(job.kind, {}, { uniqueKey: `periodic:${job.kind}`, maxAttempts: 1, runAt });
    }
    return true;
  }

  private finish(job: JobRow, patch: Partial<JobRow>): void {
    const now = this.deps.clock.now().toISOString();
    const final = patch.status === "done" || patch.status === "failed";
    this.deps.db.update(jobs)
      .set({ ...patch, leaseUntil: null, workerId: null, updatedAt: now, finishedAt: final ? now : null })
      .where(and(eq(jobs.id, job.id), eq(jobs.workerId, this.workerId))).run();
  }
}
