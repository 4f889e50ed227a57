// A durable job queue in SQLite. Enqueue is synchronous so it can join the caller's
// transaction: the job exists if and only if the change that needs it committed.
import { and, eq, sql } from "drizzle-orm";
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
}
