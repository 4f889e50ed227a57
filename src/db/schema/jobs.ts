import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const jobs = sqliteTable(
  "jobs",
  {
    id: text("id").primaryKey(),
    kind: text("kind").notNull(),
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    status: text("status", { enum: ["queued", "running", "done", "failed", "cancelled"] }).notNull(),
    /** Deduplication key: at most one queued/running job per key (periodic tasks, per-bucket work). */
    uniqueKey: text("unique_key"),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull().default(5),
    runAt: text("run_at").notNull(),
    /** Worker lease: a running job whose lease passed is recovered by the sweeper. */
    leaseUntil: text("lease_until"),
    workerId: text("worker_id"),
    lastError: text("last_error"),
    result: text("result", { mode: "json" }).$type<Record<string, unknown>>(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    finishedAt: text("finished_at"),
  },
  (t) => [index("jobs_due").on(t.status, t.runAt), uniqueIndex("jobs_unique_active").on(t.uniqueKey).where(sql`status in ('queued','running')`)],
);
