// The wrk driver shared by the site benchmarks: a `pier serve` child process on a data dir the
// bench has seeded, and wrk runs against one site (by Host header) that report requests/s and p99.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { Subprocess } from "bun";

export const hasWrk = () => spawnSync("sh", ["-c", "command -v wrk"]).status === 0;

export interface ServedDir {
  port: number;
  proc: Subprocess;
  stop(): Promise<void>;
}

/** `pier serve` on a free loopback port over `dataDir`, once its status endpoint answers. */
export async function serveDataDir(dataDir: string, secretKey: string): Promise<ServedDir> {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  const proc = Bun.spawn(
    [
      process.execPath,
      "src/main.ts",
      "serve",
      "--data-dir",
      dataDir,
      "--http-port",
      String(port),
      "--host",
      "127.0.0.1",
      "--smtp-port",
      "off",
      "--log-level",
      "warn",
    ],
    { cwd: join(import.meta.dir, ".."), env: { ...process.env, PIER_SECRET_KEY: secretKey }, stdout: "ignore", stderr: "inherit" },
  );
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/v1/status`)).ok) break;
    } catch {}
    await Bun.sleep(50);
  }
  return {
    port,
    proc,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

export interface WrkRun {
  port: number;
  /** The site's host is `${slug}.localhost`. */
  slug: string;
  path?: string;
  durationS: number;
  headers?: Record<string, string>;
  /** A wrk Lua script (`-s`), e.g. one that cycles through several paths. */
  script?: string;
}

/** One wrk run (-t2 -c50): requests/s and the p99 latency as wrk prints it ("?" if absent). */
export function wrk(run: WrkRun): { rps: number; p99: string } {
  const headers = Object.entries({ Host: `${run.slug}.localhost`, ...run.headers }).flatMap(([k, v]) => ["-H", `${k}: ${v}`]);
  const out = spawnSync(
    "wrk",
    [
      "-t2",
      "-c50",
      `-d${run.durationS}s`,
      "--latency",
      ...headers,
      ...(run.script ? ["-s", run.script] : []),
      `http://127.0.0.1:${run.port}${run.path ?? "/"}`,
    ],
    {
      encoding: "utf8",
    },
  ).stdout;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  const p99 = /99%\s+([\d.]+\w+)/.exec(out)?.[1] ?? "?";
  return { rps, p99 };
}
