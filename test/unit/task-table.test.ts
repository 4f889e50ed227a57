// The task table (src/jobs/tasks.ts) is the one list of background work: a job kind enqueued
// anywhere in src/ without a row there would sit in the queue forever, unhandled.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { jobHandlers, periodicTasks, tasks } from "../../src/jobs/tasks";

const SRC = join(import.meta.dir, "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

const sources = sourceFiles(SRC).map((path) => ({ path: relative(SRC, path), text: readFileSync(path, "utf8") }));

/** Every `export const NAME = "kind"` in src/, so an enqueue through a constant resolves. */
const stringConstants = new Map<string, string>();
for (const { text } of sources) {
  for (const m of text.matchAll(/export const ([A-Z0-9_]+) = "([^"]+)"/g)) stringConstants.set(m[1]!, m[2]!);
}

/** The first argument of every `jobs.enqueue(...)` in src/, resolved to its kind. */
function enqueuedKinds(): { kind: string; where: string }[] {
  const found: { kind: string; where: string }[] = [];
  for (const { path, text } of sources) {
    for (const m of text.matchAll(/jobs\.enqueue\(\s*([^,\s]+)\s*,/g)) {
      const arg = m[1]!;
      const literal = /^["'`]([^"'`$]+)["'`]$/.exec(arg);
      // The runner enqueues the periodic rows of the table itself (task.kind / job.kind).
      if (/^(task|job)\.kind$/.test(arg)) continue;
      const kind = literal ? literal[1]! : stringConstants.get(arg);
      found.push({ kind: kind ?? `<unresolved ${arg}>`, where: path });
    }
  }
  return found;
}

describe("the task table", () => {
  test("every job kind enqueued anywhere in src/ has a handler row", () => {
    const kinds = enqueuedKinds();
    // The features that enqueue today: bucket deletes, publish builds and unpublishes.
    expect(kinds.length).toBeGreaterThanOrEqual(4);
    const missing = kinds.filter(({ kind }) => !(kind in jobHandlers)).map(({ kind, where }) => `${kind} (enqueued in ${where})`);
    expect(missing).toEqual([]);
  });

  test("every row has a unique kind, a handler and a one-line description", () => {
    const kinds = tasks.map((t) => t.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    for (const t of tasks) {
      expect(typeof t.handler.run).toBe("function");
      expect(t.description.length).toBeGreaterThan(10);
      expect(t.description).not.toContain("\n");
    }
  });

  test("periodic tasks are exactly the rows with a period, each a positive interval", () => {
    expect(periodicTasks.map((p) => p.kind)).toEqual(tasks.filter((t) => t.everyMs !== undefined).map((t) => t.kind));
    for (const p of periodicTasks) expect(p.everyMs).toBeGreaterThan(0);
    // The housekeeping the appliance relies on runs on a timer.
    expect(periodicTasks.map((p) => p.kind)).toEqual(expect.arrayContaining(["blobs.gc", "uploads.expire", "oauth.purge", "publish.sweep"]));
  });
});
