// A durable job queue in SQLite. Enqueue is synchronous so it can join the caller's
// transaction: the job exists if and only if the change that needs it committed.
import { and, count, desc, eq, sql } from "drizzle-orm";
import { ApiError } from "../core/errors";
import type { Clock } from "../core/clock";
import { newId } from "../core/ids";
import type { DbOrTx } from "../db/tx";
import { jobs } from "../db/schema";

export type JobRow = typeof jobs.$inferSelect;

export interface EnqueueOptions {
  runAt?: Date;
  /** At most one queued/running job per key; a second enqueue returns the existing job's id. */
  uniqueKey?: string;
  maxAttempts?: number;
}

export class JobQueue {
  /** Called after enqueue so an idle worker wakes up at once. */
  onEnqueue: () => void = () => {};

  constructor(
    private readonly db: DbOrTx,
    private readonly clock: Clock,
  ) {}

  enqueue(kind: string, payload: Record<string, unknown> = {}, opts: EnqueueOptions = {}, db: DbOrTx = this.db): string {
    const now = this.clock.now().toISOString();
    const id = newId("job");
    const inserted = db
      .insert(jobs)
      .values({
        id,
        kind,
        payload,
        status: "queued",
        uniqueKey: opts.uniqueKey ?? null,
        maxAttempts: opts.maxAttempts ?? 5,
        runAt: (opts.runAt ?? this.clock.now()).toISOString(),
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning({ id: jobs.id })
      .all();
    queueMicrotask(() => this.onEnqueue());
    if (inserted.length) return id;
    const existing = db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.uniqueKey, opts.uniqueKey!), sql`${jobs.status} in ('queued','running')`))
      .get();
    return existing!.id;
  }

  get(id: string, db: DbOrTx = this.db): JobRow | undefined {
    return db.select().from(jobs).where(eq(jobs.id, id)).get();
  }

  /** How many jobs are in each state (the admin's health page). */
  countsByStatus(): Record<JobRow["status"], number> {
    const counts: Record<JobRow["status"], number> = { queued: 0, running: 0, done: 0, failed: 0, cancelled: 0 };
    for (const r of this.db.select({ status: jobs.status, n: count() }).from(jobs).groupBy(jobs.status).all()) counts[r.status] = r.n;
    return counts;
  }

  /** The most recently updated jobs of one kind (a periodic task's recent runs). */
  recentOfKind(kind: string, limit: number): JobRow[] {
    return this.db.select().from(jobs).where(eq(jobs.kind, kind)).orderBy(desc(jobs.updatedAt)).limit(limit).all();
  }

  /**
   * Forget finished jobs: done and cancelled ones after `doneMs`, failed ones (which the admin's
   * health page lists, and may retry) after `failedMs`. A periodic task alone adds a row a
   * minute, so without this the table grows by ~17,000 rows a day. Bounded batches of 5,000.
   */
  prune(doneMs: number, failedMs: number): number {
    const now = this.clock.now().getTime();
    const doneBefore = new Date(now - doneMs).toISOString();
    const failedBefore = new Date(now - failedMs).toISOString();
    let removed = 0;
    for (;;) {
      const res = this.db.run(sql`DELETE FROM jobs WHERE rowid IN (SELECT rowid FROM jobs WHERE
        (status IN ('done', 'cancelled') AND finished_at < ${doneBefore}) OR (status = 'failed' AND finished_at < ${failedBefore}) LIMIT 5000)`);
      const changes = Number((res as unknown as { changes?: number }).changes ?? 0);
      removed += changes;
      if (changes < 5000) return removed;
    }
  }

  /** Failed jobs, most recently finished first. */
  failed(limit: number, offset = 0): JobRow[] {
    return this.db.select().from(jobs).where(eq(jobs.status, "failed")).orderBy(desc(jobs.finishedAt), desc(jobs.id)).limit(limit).offset(offset).all();
  }

  /**
   * Run a failed job again: queued now with a fresh set of attempts. Only a failed job is
   * retried (a done or cancelled one stays as it is), and not when another job with the same
   * unique key is already queued or running (that one does the same work).
   */
  retry(id: string): JobRow {
    const job = this.get(id);
    if (!job) throw new ApiError("NOT_FOUND", `No job ${id.slice(0, 64)}.`);
    if (job.status !== "failed") throw new ApiError("CONFLICT", `Job ${job.id} is ${job.status}, not failed: only a failed job can be retried.`);
    const now = this.clock.now().toISOString();
    try {
      const row = this.db
        .update(jobs)
        .set({ status: "queued", attempts: 0, runAt: now, leaseUntil: null, workerId: null, finishedAt: null, updatedAt: now })
        .where(and(eq(jobs.id, job.id), eq(jobs.status, "failed")))
        .returning()
        .get();
      if (!row) throw new ApiError("CONFLICT", `Job ${job.id} changed meanwhile; reload to see its state.`);
      queueMicrotask(() => this.onEnqueue());
      return row;
    } catch (e) {
      if (e instanceof Error && /UNIQUE/i.test(e.message))
        throw new ApiError("CONFLICT", `The same work (${job.uniqueKey}) is already queued or running; that job does it.`);
      throw e;
    }
  }
}
