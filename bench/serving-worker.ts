// One serving process alone on one CPU, wrk alone on the other: what a site's visitors get from
// a serving worker (src/serving-process.ts) against a process that loads the whole app (a
// `--workers 1` Pier, which is what every serving process was before D227), same fixture, same
// run, rounds alternated. Reports req/s, the server's CPU per request (from /proc), the latency
// percentiles up to p99.9 and RSS. With --compare DIR, a serving worker of another checkout
// (e.g. of main before a change) is measured in the same rounds.
// Run: ./node_modules/.bin/bun bench/serving-worker.ts [--duration 10] [--rounds 2] [--connections 32]
//   [--compare <another checkout>] [--binary dist/pier] [--user-agent "..."]   Needs: wrk (apt-get install -y wrk).
// With --binary, the serving worker of a compiled binary (`npm run build`) is measured too: what
// users run is bundled, the source tree is not.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { WORKER_ENV } from "../src/worker-env";
import { freePort } from "../test/helpers/pebble";
import { cpuTicks, publishFixtureSite, root, rssMiB, TICKS_PER_SECOND } from "./lib";
import { hasWrk, runWrk } from "./wrk";

const argOf = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? null : process.argv[i + 1]!;
};
const DURATION = Number(argOf("duration") ?? 10);
const ROUNDS = Number(argOf("rounds") ?? 2);
const CONNECTIONS = Number(argOf("connections") ?? 32);
const COMPARE = argOf("compare");
const BINARY = argOf("binary");
// A browser: every page view is a visit (the client address is read for the visitor hash).
const USER_AGENT = argOf("user-agent") ?? "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36";
const SECRET = "bench-secret-key-bench-secret-key-bench-secret";
const HOST = "profsite1.localhost";

if (!hasWrk()) {
  console.error("bench/serving-worker.ts: wrk is missing (apt-get install -y wrk)");
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), "pier-serving-worker-"));
const dataDir = join(work, "data");
const page = new TextEncoder().encode("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n".repeat(16));
await publishFixtureSite(dataDir, SECRET, "profsite1", { "1k.html": page });

// wrk's own percentiles beyond --latency's four.
const lua = join(work, "percentiles.lua");
writeFileSync(
  lua,
  `done = function(summary, latency, requests)
  for _, p in pairs({50, 90, 99, 99.9}) do io.write(string.format("P%s=%.3f\\n", p, latency:percentile(p) / 1000)) end
  io.write(string.format("MAX=%.3f\\nREQUESTS=%d\\n", latency.max / 1000, summary.requests))
end
`,
);

interface Variant {
  name: string;
  start(port: number): ChildProcess;
}

const bunOf = (tree: string) => join(tree, "node_modules/.bin/bun");

/** A serving worker of `tree` as the primary starts one, with this bench as its primary (it watches its parent). */
function workerOf(name: string, tree: string, binary: string | null = null): Variant {
  return {
    name,
    start(port) {
      const config = {
        ...loadConfig({ PIER_SECRET_KEY: SECRET }, {}),
        dataDir,
        host: "127.0.0.1",
        httpPort: port,
        httpsPort: null,
        smtpPort: null,
        logLevel: "warn" as const,
      };
      const settings = { config, httpPort: port, httpsPort: null, relaySocket: join(work, "no-primary.sock"), index: 1, primaryPid: process.pid };
      const command = binary === null ? [bunOf(tree), join(tree, "src/main.ts")] : [binary];
      return spawn("taskset", ["-c", "0", ...command, "serve"], {
        env: { ...process.env, [WORKER_ENV]: JSON.stringify(settings) },
        stdio: ["ignore", "inherit", "inherit"],
      });
    },
  };
}

const wholeApp: Variant = {
  name: "whole app (`--workers 1`)",
  start(port) {
    const args = ["-c", "0", bunOf(root), join(root, "src/main.ts"), "serve", "--data-dir", dataDir, "--host", "127.0.0.1", "--http-port", String(port)];
    args.push("--smtp-port", "off", "--https-port", "off", "--log-level", "warn", "--workers", "1");
    return spawn("taskset", args, { env: { ...process.env, PIER_SECRET_KEY: SECRET }, stdio: ["ignore", "ignore", "inherit"] });
  },
};

const variants: Variant[] = [workerOf("serving worker", root), wholeApp];
if (COMPARE) variants.push(workerOf(`serving worker of ${COMPARE}`, COMPARE));
if (BINARY) variants.push(workerOf(`serving worker of the binary ${BINARY}`, root, BINARY));

async function untilAnswering(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/1k`, { headers: { host: HOST } });
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    await Bun.sleep(100);
  }
  throw new Error("the server did not answer /1k within 10 s");
}

/** wrk -t1 on CPU 1 against /1k: its figures, and the percentiles the Lua script adds. */
function wrk(port: number, seconds: number): Record<string, number> {
  const r = runWrk({
    url: `http://127.0.0.1:${port}/1k`,
    host: HOST,
    headers: { "User-Agent": USER_AGENT },
    durationS: seconds,
    threads: 1,
    connections: CONNECTIONS,
    script: lua,
    cpus: "1",
  });
  if (r.errors > 0) throw new Error(`wrk saw ${r.errors} errors or non-2xx answers:\n${r.output}`);
  const values: Record<string, number> = { rps: r.rps };
  for (const m of r.output.matchAll(/^(P[\d.]+|MAX|REQUESTS)=([\d.]+)$/gm)) values[m[1]!] = Number(m[2]);
  return values;
}

const rows: { name: string; round: number; values: Record<string, number> }[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  for (const v of round % 2 ? variants : [...variants].reverse()) {
    const port = await freePort();
    const proc = v.start(port);
    try {
      await untilAnswering(port);
      wrk(port, 3); // warm-up: the JIT and the file cache
      const pid = proc.pid!; // taskset execs the server: the same process
      const before = cpuTicks(pid);
      const values = wrk(port, DURATION);
      const after = cpuTicks(pid);
      const ticks = after[0] + after[1] - before[0] - before[1];
      values.cpuUs = ((ticks / TICKS_PER_SECOND) * 1e6) / values.REQUESTS!;
      values.rss = rssMiB(pid);
      rows.push({ name: v.name, round, values });
      console.error(`round ${round}: ${v.name}: ${Math.round(values.rps!)} req/s, p99 ${values.P99} ms`);
    } finally {
      proc.kill("SIGTERM");
      await new Promise((r) => proc.once("exit", r));
    }
  }
}
rmSync(work, { recursive: true, force: true });

const f = (n: number | undefined, d = 2) => (n === undefined || Number.isNaN(n) ? "-" : n.toFixed(d));
console.log(`\nOne process on CPU 0, wrk -t1 -c${CONNECTIONS} on CPU 1, ${DURATION} s per round, a 1 KB page, User-Agent: ${USER_AGENT.slice(0, 40)}...\n`);
console.log("| server | round | req/s | CPU µs/req | p50 | p90 | p99 | p99.9 | max | RSS MiB |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  const v = r.values;
  console.log(
    `| ${r.name} | ${r.round} | ${Math.round(v.rps!)} | ${f(v.cpuUs)} | ${f(v.P50)} | ${f(v.P90)} | ${f(v.P99)} | ${f(v["P99.9"])} | ${f(v.MAX)} | ${Math.round(v.rss!)} |`,
  );
}
