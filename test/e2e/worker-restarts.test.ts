// Serving workers that cannot start (D267), with the compiled binary: the plans file every
// process reads at start is made unreadable JSON after start and both workers are killed. The
// primary restarts them with backoff (1 s, 2 s, 4 s ...: a handful of attempts, not one a second
// for ever), takes the public ports back while none listens, so /livez keeps answering, and
// hands them over again once a worker starts. HTTP and HTTPS alike.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary, startBinary, type RunningBinary } from "../helpers/binary";

const SECRET = "e2e-restarts-secret-0123456789-0123456789";
let work: string;
let bin: string;
const running = new Set<RunningBinary>();

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "pier-e2e-restarts-"));
  bin = await buildBinary();
}, 240_000);

afterAll(() => {
  for (const s of running) s.proc.kill("SIGKILL");
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The processes whose parent is `pid` (read from /proc: no process-name matching). */
function childrenOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

const livez = async (s: RunningBinary) => (await fetch(`${s.url}/livez`).catch(() => null))?.status ?? null;
const httpsPort = (s: RunningBinary) => Number(/^ +HTTPS +127\.0\.0\.1:(\d+)$/m.exec(s.output())![1]);
const livezTls = async (s: RunningBinary) =>
  (await fetch(`https://127.0.0.1:${httpsPort(s)}/livez`, { tls: { rejectUnauthorized: false } } as RequestInit).catch(() => null))?.status ?? null;
const count = (text: string, what: string) => text.split(what).length - 1;

describe("serving workers that cannot start", () => {
  test("are restarted with backoff, and the primary serves the ports while none listens", async () => {
    const dataDir = join(work, "data");
    const plans = join(work, "plans.json");
    writeFileSync(plans, "[]");
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, PIER_SECRET_KEY: SECRET };
    const s = await startBinary(bin, { dataDir, cwd: work, env, args: ["--workers", "2", "--plans-file", plans, "--https-port", "0"] });
    running.add(s);
    expect(await livez(s)).toBe(200);
    expect(await livezTls(s)).toBe(200);
    const workers = childrenOf(s.proc.pid);
    expect(workers.length).toBe(2);

    writeFileSync(plans, "this is not JSON");
    const before = s.output().length;
    for (const pid of workers) process.kill(pid, "SIGKILL");
    const killedAt = Date.now();
    const since = () => s.output().slice(before);

    // The primary takes the ports back: /livez is answered while every worker fails to start.
    await waitFor("the primary to serve the ports again", async () => (await livez(s)) === 200, 20_000);
    expect(since()).toContain("no serving worker listens");
    expect(await livezTls(s)).toBe(200);

    // Over 12 s each slot's worker is started again a few times (at once, then 2 s, then 4 s
    // after its previous start): at most 4 deaths per slot, where a restart a second gave 12+.
    await Bun.sleep(Math.max(0, 12_000 - (Date.now() - killedAt)));
    const out = since();
    expect(count(out, "could not start")).toBeGreaterThanOrEqual(2);
    expect(count(out, "serving worker exited; starting another")).toBeLessThanOrEqual(10);
    expect(await livez(s)).toBe(200);
    expect(childrenOf(s.proc.pid).length).toBeLessThanOrEqual(2);

    // Once the plans file is readable again the next attempt starts a worker, which gets the ports.
    writeFileSync(plans, "[]");
    await waitFor("a worker to listen again", () => since().includes("a serving worker listens again"), 60_000);
    expect(await livez(s)).toBe(200);
    expect(await livezTls(s)).toBe(200);

    expect(await s.stop()).toBe(0);
    running.delete(s);
  }, 180_000);
});
