// One `pier serve` per data dir (D266), with the compiled binary: a second server started on a
// data dir another one serves exits with DATA_DIR_IN_USE before touching anything, and the first
// keeps its relay socket, its running.json and its answers; a lock left by a server that is gone
// (a dead pid, or a pid now used by another process) does not block a start.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary, collectOutput, startBinary, type RunningBinary } from "../helpers/binary";

const SECRET = "e2e-lock-secret-0123456789-0123456789-0123";
let work: string;
let dataDir: string;
let bin: string;
const running = new Set<RunningBinary>();
const strays: Bun.Subprocess[] = [];

const env = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, PIER_SECRET_KEY: SECRET, PIER_DATA_DIR: dataDir });

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "pier-e2e-lock-"));
  dataDir = join(work, "data");
  bin = await buildBinary();
}, 240_000);

afterAll(() => {
  for (const s of running) s.proc.kill("SIGKILL");
  for (const p of strays) p.kill("SIGKILL");
  if (work) rmSync(work, { recursive: true, force: true });
});

async function start(args: string[] = []): Promise<RunningBinary> {
  const s = await startBinary(bin, { dataDir, cwd: work, env: env(), args: ["--workers", "2", ...args] });
  running.add(s);
  return s;
}

async function stop(s: RunningBinary): Promise<void> {
  expect(await s.stop()).toBe(0);
  running.delete(s);
}

const status = async (s: RunningBinary) => ((await (await fetch(`${s.url}/api/v1/status`)).json()) as { data: { urls: { base_url: string } } }).data.urls;

describe("one pier serve per data dir", () => {
  test("a second serve on the same data dir exits with DATA_DIR_IN_USE and the first keeps serving with its own relay", async () => {
    const a = await start();
    const relay = join(dataDir, "run", "relay.sock");
    const inode = statSync(relay).ino;
    const before = await status(a);
    expect(before.base_url).toContain(String(a.port));
    const runningJson = readFileSync(join(dataDir, "running.json"), "utf8");

    const b = Bun.spawn([bin, "serve", "--data-dir", dataDir, "--http-port", "0", "--smtp-port", "off", "--host", "127.0.0.1", "--workers", "2"], {
      cwd: work,
      env: env(),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    strays.push(b);
    const output = collectOutput(b);
    const code = await Promise.race([b.exited, Bun.sleep(60_000).then(() => "still running")]);
    expect(code).not.toBe("still running");
    expect(code).not.toBe(0);
    expect(output()).toContain("DATA_DIR_IN_USE");
    expect(output()).toContain(`pid ${a.proc.pid}`);
    expect(output()).not.toContain("is running");

    // The first server's relay is the same socket, its workers still reach it, and what admin
    // commands read about it is unchanged.
    expect(statSync(relay).ino).toBe(inode);
    expect(await status(a)).toEqual(before);
    expect((await fetch(`${a.url}/api/v1/status`)).status).toBe(200);
    expect(readFileSync(join(dataDir, "running.json"), "utf8")).toBe(runningJson);
    await stop(a);
    expect(existsSync(join(dataDir, "run", "serve.lock"))).toBe(false);
    expect(existsSync(join(dataDir, "running.json"))).toBe(false);
  }, 180_000);

  test("a lock left by a server that is gone does not block a start: a dead pid, or a live pid that is another process", async () => {
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    const lock = join(dataDir, "run", "serve.lock");
    mkdirSync(join(dataDir, "run"), { recursive: true });
    writeFileSync(lock, JSON.stringify({ pid: dead.pid, start: "1", started_at: "2026-01-01T00:00:00.000Z" }));
    const a = await start();
    expect(JSON.parse(readFileSync(lock, "utf8")).pid).toBe(a.proc.pid);
    await stop(a);

    // This test process is alive, but started long after the recorded start time: a reused pid.
    writeFileSync(lock, JSON.stringify({ pid: process.pid, start: "1", started_at: "2026-01-01T00:00:00.000Z" }));
    const again = await start();
    expect((await fetch(`${again.url}/livez`)).status).toBe(200);
    await stop(again);
  }, 180_000);
});
