import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { jobs } from "../../src/db/schema";
import { transaction } from "../../src/db/tx";
import { backoffMs, JobRunner, type JobHandler } from "../../src/jobs/runner";
import { jobHandlers } from "../../src/jobs/tasks";
import { BUILD_JOB, UNPUBLISH_JOB } from "../../src/features/publish";
import { testDeps, type TestDeps } from "../helpers/deps";

let t: TestDeps;
beforeEach(async () => {
  t = await testDeps();
});
afterEach(() => t.close());

const allJobs = () => t.deps.db.select().from(jobs).all();
const job = (id: string) => t.deps.jobs.get(id)!;
const MINUTE = 60_000;

describe("job queue", () => {
  test("a job enqueued in a transaction that rolls back does not exist", () => {
    expect(() =>
      transaction(t.deps.db, (tx) => {
        t.deps.jobs.enqueue("test.work", { n: 1 }, {}, tx);
        throw new Error("the change that needed the job failed");
      }),
    ).toThrow("the change that needed the job failed");
    expect(allJobs()).toEqual([]);
  });

  test("a job enqueued in a committed transaction exists, queued and due now", () => {
    const id = transaction(t.deps.db, (tx) => t.deps.jobs.enqueue("test.work", { n: 1 }, {}, tx));
    const j = job(id);
    expect(j).toMatchObject({ kind: "test.work", payload: { n: 1 }, status: "queued", attempts: 0, maxAttempts: 5 });
    expect(new Date(j.runAt).getTime()).toBeLessThanOrEqual(t.clock.now().getTime());
  });

  test("prune forgets done jobs after its first limit and failed ones after its second; queued and running stay", async () => {
    const ids: Record<string, string> = {};
    for (const status of ["done", "cancelled", "failed", "queued", "running"] as const) {
      ids[status] = t.deps.jobs.enqueue("test.work", { status });
      const finished = status === "queued" || status === "running" ? null : t.clock.now().toISOString();
      t.deps.db.update(jobs).set({ status, finishedAt: finished }).where(eq(jobs.id, ids[status]!)).run();
    }
    expect(t.deps.jobs.prune(7 * 24 * 3600_000, 30 * 24 * 3600_000)).toBe(0);
    t.clock.advance(8 * 24 * 3600_000);
    expect(t.deps.jobs.prune(7 * 24 * 3600_000, 30 * 24 * 3600_000)).toBe(2);
    expect(
      allJobs()
        .map((j) => j.status)
        .sort(),
    ).toEqual(["failed", "queued", "running"]);
    t.clock.advance(30 * 24 * 3600_000);
    expect(t.deps.jobs.prune(7 * 24 * 3600_000, 30 * 24 * 3600_000)).toBe(1);
    expect(
      allJobs()
        .map((j) => j.status)
        .sort(),
    ).toEqual(["queued", "running"]);
  });

  test("uniqueKey: one queued/running job per key; a new one once the first finished", async () => {
    const a = t.deps.jobs.enqueue("test.work", {}, { uniqueKey: "bucket:1" });
    const b = t.deps.jobs.enqueue("test.work", { other: true }, { uniqueKey: "bucket:1" });
    expect(b).toBe(a);
    expect(allJobs()).toHaveLength(1);
    const runner = new JobRunner(t.deps, { "test.work": { run: async () => {} } });
    expect(await runner.drain()).toBe(1);
    const c = t.deps.jobs.enqueue("test.work", {}, { uniqueKey: "bucket:1" });
    expect(c).not.toBe(a);
    expect(job(a).status).toBe("done");
    expect(job(c).status).toBe("queued");
  });

  test("jobs whose run_at is in the future wait", async () => {
    const id = t.deps.jobs.enqueue("test.work", {}, { runAt: new Date(t.clock.now().getTime() + 10 * MINUTE) });
    const runner = new JobRunner(t.deps, { "test.work": { run: async () => ({ ok: true }) } });
    expect(await runner.drain()).toBe(0);
    t.clock.advance(10 * MINUTE);
    expect(await runner.drain()).toBe(1);
    expect(job(id)).toMatchObject({ status: "done", result: { ok: true }, attempts: 1 });
    expect(job(id).finishedAt).not.toBeNull();
  });
});

describe("job runner", () => {
  test("backoff grows exponentially with jitter and is capped", () => {
    for (let attempt = 1; attempt <= 5; attempt++) {
      const base = 1000 * 2 ** (attempt - 1);
      const ms = backoffMs(attempt);
      expect(ms).toBeGreaterThanOrEqual(base / 2);
      expect(ms).toBeLessThanOrEqual(base);
    }
    expect(backoffMs(40)).toBeLessThanOrEqual(10 * MINUTE);
  });

  test("a failing job is retried with backoff up to maxAttempts, then failed and onFailure called once", async () => {
    const failures: string[] = [];
    let runs = 0;
    const handler: JobHandler = {
      run: async () => {
        runs++;
        throw new Error(`boom ${runs}`);
      },
      onFailure: (_deps, payload, error) => void failures.push(`${payload.name}: ${error}`),
    };
    const runner = new JobRunner(t.deps, { "test.flaky": handler });
    const id = t.deps.jobs.enqueue("test.flaky", { name: "x" }, { maxAttempts: 3 });

    expect(await runner.drain()).toBe(1);
    let j = job(id);
    expect(j).toMatchObject({ status: "queued", attempts: 1, lastError: "boom 1" });
    const delay = new Date(j.runAt).getTime() - t.clock.now().getTime();
    expect(delay).toBeGreaterThan(400); // backoff for attempt 1 is 0.5-1 s
    expect(delay).toBeLessThanOrEqual(1000);
    expect(await runner.drain()).toBe(0); // not due yet

    t.clock.advance(1000);
    expect(await runner.drain()).toBe(1);
    j = job(id);
    expect(j).toMatchObject({ status: "queued", attempts: 2, lastError: "boom 2" });

    t.clock.advance(2000);
    expect(await runner.drain()).toBe(1);
    j = job(id);
    expect(j).toMatchObject({ status: "failed", attempts: 3, lastError: "boom 3" });
    expect(j.finishedAt).not.toBeNull();
    expect(failures).toEqual(["x: boom 3"]);

    t.clock.advance(60 * MINUTE);
    expect(await runner.drain()).toBe(0);
    expect(runs).toBe(3);
  });

  test("a job that fails once and then succeeds ends done with its result", async () => {
    let runs = 0;
    const runner = new JobRunner(t.deps, {
      "test.once": { run: async () => (++runs === 1 ? Promise.reject(new Error("transient")) : { runs }) },
    });
    const id = t.deps.jobs.enqueue("test.once");
    await runner.drain();
    t.clock.advance(1000);
    await runner.drain();
    expect(job(id)).toMatchObject({ status: "done", attempts: 2, result: { runs: 2 } });
  });

  test("the sweeper recovers a job whose worker crashed mid-run (lease expired)", async () => {
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    // Worker A claims the job and then "crashes": its handler never returns.
    const crashed = new JobRunner(t.deps, { "test.long": { run: () => stuck } });
    const id = t.deps.jobs.enqueue("test.long", { step: 1 });
    const aDrain = crashed.drain(1);
    await Bun.sleep(10);
    expect(job(id)).toMatchObject({ status: "running", workerId: crashed.workerId, attempts: 1 });

    // A second worker (a restarted process) sees the job running and leaves it while the lease holds.
    const done: string[] = [];
    const fresh = new JobRunner(t.deps, { "test.long": { run: async (_d, p) => void done.push(`step ${p.step}`) } });
    expect(fresh.sweep()).toBe(0);
    expect(await fresh.drain()).toBe(0);
    t.clock.advance(4 * MINUTE);
    expect(fresh.sweep()).toBe(0);

    // Past the lease (5 minutes by default) the sweeper puts it back in the queue.
    t.clock.advance(2 * MINUTE);
    expect(fresh.sweep()).toBe(1);
    expect(job(id)).toMatchObject({ status: "queued", workerId: null, leaseUntil: null, lastError: "recovered after its worker stopped" });
    expect(await fresh.drain()).toBe(1);
    expect(done).toEqual(["step 1"]);
    expect(job(id)).toMatchObject({ status: "done", attempts: 2 });

    // If the "crashed" worker comes back late, it cannot overwrite the outcome.
    release();
    await aDrain;
    expect(job(id)).toMatchObject({ status: "done", attempts: 2 });
  });

  test("a job whose worker died during its last allowed attempt fails (onFailure called) instead of looping", async () => {
    const failures: string[] = [];
    const crashed = new JobRunner(t.deps, { "test.crashy": { run: () => new Promise(() => {}) } });
    const id = t.deps.jobs.enqueue("test.crashy", { name: "y" }, { maxAttempts: 2 });
    void crashed.drain(1);
    await Bun.sleep(10);
    t.clock.advance(6 * MINUTE);
    const restarted = new JobRunner(t.deps, {
      "test.crashy": { run: () => new Promise(() => {}), onFailure: (_d, p, e) => void failures.push(`${p.name}: ${e}`) },
    });
    expect(restarted.sweep()).toBe(1); // attempt 1 of 2 died: queued again
    expect(job(id)).toMatchObject({ status: "queued", attempts: 1 });
    void restarted.drain(1); // attempt 2 dies too
    await Bun.sleep(10);
    t.clock.advance(6 * MINUTE);
    const third = new JobRunner(t.deps, {
      "test.crashy": { run: async () => {}, onFailure: (_d, p, e) => void failures.push(`${p.name}: ${e}`) },
    });
    expect(third.sweep()).toBe(1);
    await Bun.sleep(1);
    expect(job(id)).toMatchObject({ status: "failed", attempts: 2, lastError: "its worker stopped during the last attempt" });
    expect(job(id).finishedAt).not.toBeNull();
    expect(failures).toEqual(["y: its worker stopped during the last attempt"]);
    expect(await third.drain()).toBe(0);
  });

  test("a live worker renews its lease while the handler runs, so a slow job is not taken from it", async () => {
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    const runner = new JobRunner(t.deps, { "test.slow": { run: () => slow } }, [], 1000, 20);
    const id = t.deps.jobs.enqueue("test.slow");
    const p = runner.drain(1);
    await Bun.sleep(10);
    t.clock.advance(6 * MINUTE); // past the first lease
    await Bun.sleep(60); // a heartbeat renews it from the (advanced) clock
    expect(runner.sweep()).toBe(0);
    expect(new Date(job(id).leaseUntil!).getTime()).toBeGreaterThan(t.clock.now().getTime());
    release();
    await p;
    expect(job(id)).toMatchObject({ status: "done", attempts: 1 });
  });

  test("a handler's own leaseMs lengthens the lease", async () => {
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    const runner = new JobRunner(t.deps, { "test.slow": { run: () => stuck, leaseMs: 60 * MINUTE } });
    const id = t.deps.jobs.enqueue("test.slow");
    const p = runner.drain(1);
    await Bun.sleep(10);
    t.clock.advance(30 * MINUTE);
    expect(runner.sweep()).toBe(0);
    t.clock.advance(31 * MINUTE);
    expect(runner.sweep()).toBe(1);
    release();
    await p;
    expect(job(id).status).toBe("queued"); // the late finish of the stale run is ignored
  });

  test("a periodic task is scheduled once and re-schedules itself after each run, even after a failure", async () => {
    let runs = 0;
    const runner = new JobRunner(t.deps, { "test.tick": { run: async () => (++runs === 2 ? Promise.reject(new Error("tick failed")) : undefined) } }, [
      { kind: "test.tick", everyMs: 10 * MINUTE },
    ]);
    runner.schedulePeriodic();
    runner.schedulePeriodic(); // a restart does not duplicate it
    expect(allJobs()).toHaveLength(1);

    expect(await runner.drain()).toBe(1);
    expect(runs).toBe(1);
    expect(await runner.drain()).toBe(0);
    const next = allJobs().find((j) => j.status === "queued")!;
    expect(new Date(next.runAt).getTime() - t.clock.now().getTime()).toBeGreaterThan(9 * MINUTE);

    t.clock.advance(10 * MINUTE);
    expect(await runner.drain()).toBe(1); // fails (periodic tasks get one attempt) ...
    expect(allJobs().filter((j) => j.status === "failed")).toHaveLength(1);
    t.clock.advance(10 * MINUTE);
    expect(await runner.drain()).toBe(1); // ... and still runs on schedule
    expect(runs).toBe(3);
    expect(allJobs().filter((j) => j.status === "queued")).toHaveLength(1);
  });

  test("a started worker picks up newly enqueued jobs by itself and stops cleanly", async () => {
    const seen: unknown[] = [];
    const runner = new JobRunner(t.deps, { "test.live": { run: async (_d, p) => void seen.push(p.n) } }, [], 50);
    runner.start();
    try {
      t.deps.jobs.enqueue("test.live", { n: 1 });
      t.deps.jobs.enqueue("test.live", { n: 2 });
      for (let i = 0; i < 100 && seen.length < 2; i++) await Bun.sleep(10);
      expect(seen).toEqual([1, 2]);
    } finally {
      await runner.stop();
    }
    t.deps.jobs.enqueue("test.live", { n: 3 });
    await Bun.sleep(100);
    expect(seen).toEqual([1, 2]);
    expect(t.deps.db.select().from(jobs).where(eq(jobs.status, "queued")).all()).toHaveLength(1);
  });

  test("a publish runs while a long background job holds its own lane; each lane stays one job at a time", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const order: string[] = [];
    const runner = new JobRunner(
      t.deps,
      {
        "test.backup": {
          run: async (_d, p) => {
            order.push(`backup ${p.n} start`);
            if (p.n === 1) await held;
          },
        },
        "test.build": { lane: "publish", run: async (_d, p) => void order.push(`build ${p.n}`) },
      },
      [],
      20,
    );
    runner.start();
    try {
      const backup = t.deps.jobs.enqueue("test.backup", { n: 1 });
      const second = t.deps.jobs.enqueue("test.backup", { n: 2 });
      for (let i = 0; i < 100 && job(backup).status !== "running"; i++) await Bun.sleep(10);
      const builds = [t.deps.jobs.enqueue("test.build", { n: 1 }), t.deps.jobs.enqueue("test.build", { n: 2 })];
      for (let i = 0; i < 100 && builds.some((id) => job(id).status !== "done"); i++) await Bun.sleep(10);
      // Both builds finished while the first background job still runs, and the second waits for it.
      expect(builds.map((id) => job(id).status)).toEqual(["done", "done"]);
      expect(job(backup).status).toBe("running");
      expect(job(second).status).toBe("queued");
      release();
      for (let i = 0; i < 100 && job(second).status !== "done"; i++) await Bun.sleep(10);
      expect(order).toEqual(["backup 1 start", "build 1", "build 2", "backup 2 start"]);
    } finally {
      release();
      await runner.stop();
    }
  });

  test("publish builds and unpublishes run in the publish lane, everything else in the background lane", () => {
    const publishLane = Object.entries(jobHandlers)
      .filter(([, h]) => h.lane === "publish")
      .map(([kind]) => kind)
      .sort();
    expect(publishLane).toEqual([BUILD_JOB, UNPUBLISH_JOB].sort());
  });

  test("jobs of kinds this runner has no handler for are left alone", async () => {
    const id = t.deps.jobs.enqueue("test.unknown");
    const runner = new JobRunner(t.deps, { "test.other": { run: async () => {} } });
    expect(await runner.drain()).toBe(0);
    expect(job(id).status).toBe("queued");
  });
});
