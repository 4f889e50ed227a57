// The data dir's serve lock (D266) in-process: a live holder (another process, with its start
// time) refuses; a dead pid, a reused pid and this process's own pid do not; release removes
// only this process's lock. The compiled binary's side is test/e2e/data-dir-lock.test.ts.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { acquireServeLock, DataDirInUseError, processStart, serveLockPath } from "../../src/cli/serve-lock";

const work = mkdtempSync(join(tmpdir(), "pier-serve-lock-"));
const live = Bun.spawn(["sleep", "60"]);
afterAll(() => {
  live.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

let n = 0;
const dataDir = () => join(work, `d${++n}`);
const holder = (pid: number, start: string | null) => JSON.stringify({ pid, start, started_at: "2026-11-28T00:00:00.000Z" });
const place = (dir: string, content: string) => {
  mkdirSync(join(dir, "run"), { recursive: true });
  writeFileSync(serveLockPath(dir), content);
};

describe("serve lock", () => {
  test("a live holder refuses, naming its pid; the lock is left as it was", () => {
    const dir = dataDir();
    const content = holder(live.pid, processStart(live.pid));
    place(dir, content);
    let err: unknown;
    try {
      acquireServeLock(dir);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DataDirInUseError);
    expect((err as Error).message).toContain(`pid ${live.pid}`);
    expect(readFileSync(serveLockPath(dir), "utf8")).toBe(content);
    expect(readdirSync(join(dir, "run"))).toEqual(["serve.lock"]);
  });

  test("a dead pid, a reused pid (another start time), this process's pid and an unreadable file are stale", async () => {
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    for (const content of [holder(dead.pid, "1"), holder(live.pid, "1"), holder(process.pid, processStart(process.pid)), "{half"]) {
      const dir = dataDir();
      place(dir, content);
      const lock = acquireServeLock(dir);
      expect(JSON.parse(readFileSync(serveLockPath(dir), "utf8")).pid).toBe(process.pid);
      lock.release();
      expect(existsSync(serveLockPath(dir))).toBe(false);
      expect(readdirSync(join(dir, "run"))).toEqual([]);
    }
  });

  test("the lock is taken once; release leaves another holder's lock alone", () => {
    const dir = dataDir();
    const lock = acquireServeLock(dir);
    expect(readFileSync(serveLockPath(dir), "utf8")).toContain(`"pid":${process.pid}`);
    // Replaced behind its back (by hand): release does not remove what is not its own.
    const other = holder(live.pid, processStart(live.pid));
    writeFileSync(serveLockPath(dir), other);
    lock.release();
    expect(readFileSync(serveLockPath(dir), "utf8")).toBe(other);
  });
});
