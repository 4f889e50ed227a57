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

/** One wrk run (-t2 -c50): requests/s, the requests answered, and the p99 latency as wrk prints it ("?" if absent). */
export function wrk(run: WrkRun): { rps: number; requests: number; p99: string } {
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
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  return { rps, requests, p99 };
}

export interface WrkOptions {
  url: string;
  host?: string;
  durationS: number;
  threads: number;
  connections: number;
  script?: string;
  /** Pin wrk to these CPUs (`taskset -c`), e.g. "1"; null runs it wherever the kernel puts it. */
  cpus?: string | null;
  /** More request headers (e.g. a User-Agent). */
  headers?: Record<string, string>;
}

export interface WrkResult {
  rps: number;
  /** Requests completed (wrk's "N requests in"). */
  requests: number;
  p50ms: number;
  p90ms: number;
  p99ms: number;
  maxMs: number;
  /** Non-2xx/3xx answers and socket errors wrk counted (should be 0). */
  errors: number;
  /** wrk's whole output (what a Lua script's done() printed is in it). */
  output: string;
}

const toMs = (value: string, unit: string) => Number(value) * (unit === "us" ? 0.001 : unit === "s" ? 1000 : unit === "m" ? 60_000 : 1);

/** Parse wrk's `--latency` output. */
export function parseWrkLatency(out: string): WrkResult {
  const pct = (p: string) => {
    const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s|m)\\b`).exec(out);
    return m ? toMs(m[1]!, m[2]!) : Number.NaN;
  };
  const max = /Latency\s+[\d.]+\w+\s+[\d.]+\w+\s+([\d.]+)(us|ms|s|m)\b/.exec(out);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN),
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? Number.NaN),
    p50ms: pct("50"),
    p90ms: pct("90"),
    p99ms: pct("99"),
    maxMs: max ? toMs(max[1]!, max[2]!) : Number.NaN,
    errors: non2xx + (socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0),
    output: out,
  };
}

/** One wrk run with `--latency`, optionally pinned with taskset. */
export function runWrk(o: WrkOptions): WrkResult {
  const args = ["-t", String(o.threads), "-c", String(o.connections), "-d", `${o.durationS}s`, "--latency"];
  if (o.host) args.push("-H", `Host: ${o.host}`);
  for (const [name, value] of Object.entries(o.headers ?? {})) args.push("-H", `${name}: ${value}`);
  if (o.script) args.push("-s", o.script);
  args.push(o.url);
  const out = o.cpus ? spawnSync("taskset", ["-c", o.cpus, "wrk", ...args], { encoding: "utf8" }) : spawnSync("wrk", args, { encoding: "utf8" });
  return parseWrkLatency(out.stdout ?? "");
}

/**
 * An nginx config serving `root` on 127.0.0.1:`port` with Debian's defaults (sendfile, ETags)
 * and the access log off, as Pier keeps none per request either; its temp paths under `dir`.
 */
export function nginxStaticConf(dir: string, workers: number | string, port: number, root: string): string {
  return `worker_processes ${workers};
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  sendfile on;
  tcp_nopush on;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server { listen 127.0.0.1:${port}; root ${root}; }
}
`;
}
