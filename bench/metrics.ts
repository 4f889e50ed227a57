// What the per-request metrics call costs on the site server's hot path: the same 4 KB page
// served by this tree and by a baseline checkout (e.g. the commit before metrics), each as its
// own `pier serve` process on the same fixture, measured with wrk in alternating rounds.
// Run: git archive <base> | tar -x -C /tmp/pier-base && ln -s $PWD/node_modules /tmp/pier-base/
//      ./node_modules/.bin/bun bench/metrics.ts --baseline /tmp/pier-base [--duration 8] [--rounds 5]
// Without --baseline it measures this tree only. Also prints the /metrics scrape time.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { buckets } from "../src/db/schema";
import { insertUserWithAccount } from "../src/features/accounts/service";
import { activateDeploy, writeDeploy } from "../src/features/publish/deploys";
import { createPublication } from "../src/features/publish/publications";
import { createDeps } from "../src/runtime";
import { requestMeter } from "../src/http/request-metrics";
import type { Server } from "bun";

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? null : process.argv[i + 1]!;
};
const DURATION = Number(arg("duration") ?? 8);
const ROUNDS = Number(arg("rounds") ?? 5);
const BASELINE = arg("baseline");
const TOKEN = "bench-metrics-token-0123456789";

let meterNs = 0;
const work = mkdtempSync(join(tmpdir(), "pier-bench-metrics-"));
const dataDir = join(work, "data");
{
  const config = { ...loadConfig({}, {}), dataDir, secretKey: "bench-secret-key-bench-secret-key-bench-secret" };
  const deps = await createDeps(config, 0, { log: silentLogger });
  const { account } = insertUserWithAccount(deps, { email: "bench@example.com", passwordHash: "x" });
  const now = new Date().toISOString();
  const bucket = deps.db.insert(buckets).values({ id: "bkt_bench", accountId: account.id, title: "Bench", createdAt: now, updatedAt: now }).returning().get();
  const pub = createPublication(deps, { bucketId: bucket.id, accountId: account.id, kind: "main", slug: "benchsite1" });
  const html = "<!doctype html><p>" + "Lorem ipsum dolor sit amet. ".repeat(140) + "</p>";
  const d = await writeDeploy(deps, pub.id, [{ path: "index.html", bytes: html.slice(0, 4096) }]);
  activateDeploy(deps, pub.id, d.deployId);
  // The per-request call alone, in-process: ns per call for a site request (the hot path).
  const meter = requestMeter(deps);
  const req = new Request("http://benchsite1.localhost:8080/index.html", { headers: { host: "benchsite1.localhost:8080" } });
  const res = new Response("x");
  const server = {} as Server<unknown>;
  const N = 2_000_000;
  for (let i = 0; i < 100_000; i++) meter(req, res, performance.now(), server);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) meter(req, res, t0, server);
  meterNs = ((performance.now() - t0) * 1e6) / N;
  deps.close();
}
console.log(`requestMeter alone: ${meterNs.toFixed(0)} ns per site request (in-process, ${navigator.hardwareConcurrency} CPUs)\n`);

const procs: ChildProcess[] = [];
async function serve(name: string, root: string, port: number): Promise<{ name: string; port: number }> {
  const dir = join(work, `data-${name}`);
  cpSync(dataDir, dir, { recursive: true });
  const args = [join(root, "src/main.ts"), "serve", "--data-dir", dir, "--host", "127.0.0.1", "--http-port", String(port), "--smtp-port", "off"];
  const p = spawn(process.execPath, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PIER_SECRET_KEY: "bench-secret-key-bench-secret-key-bench-secret", PIER_METRICS_TOKEN: TOKEN, PIER_LOG_LEVEL: "warn" },
  });
  procs.push(p);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/`, { headers: { host: "benchsite1.localhost" } })).status === 200) return { name, port };
    } catch {}
    await Bun.sleep(200);
  }
  throw new Error(`${name} did not start`);
}

const wrk = (port: number) => {
  const out = spawnSync("wrk", ["-t1", "-c50", `-d${DURATION}s`, "--latency", "-H", "Host: benchsite1.localhost", `http://127.0.0.1:${port}/`], {
    encoding: "utf8",
  }).stdout;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const p99 = /99%\s+([\d.]+\w+)/.exec(out)?.[1] ?? "?";
  return { rps, p99 };
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  const servers = [await serve("this tree", resolve("."), 18081)];
  if (BASELINE) servers.push(await serve("baseline", resolve(BASELINE), 18082));
  for (const s of servers) wrk(s.port); // warm-up
  const results = new Map<string, { rps: number[]; p99: string[] }>(servers.map((s) => [s.name, { rps: [], p99: [] }]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of r % 2 ? [...servers].reverse() : servers) {
      const x = wrk(s.port);
      results.get(s.name)!.rps.push(x.rps);
      results.get(s.name)!.p99.push(x.p99);
    }
  }
  console.log(`| server | req/s (median of ${ROUNDS}) | all rounds | p99 |\n|---|---|---|---|`);
  for (const [name, x] of results) console.log(`| ${name} | ${Math.round(median(x.rps))} | ${x.rps.map(Math.round).join(", ")} | ${x.p99.join(", ")} |`);
  const t0 = performance.now();
  const scrape = await fetch(`http://127.0.0.1:${servers[0]!.port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const text = await scrape.text();
  console.log(`\n/metrics: HTTP ${scrape.status}, ${text.length} bytes, ${(performance.now() - t0).toFixed(1)} ms`);
} finally {
  for (const p of procs) p.kill("SIGTERM");
  await Bun.sleep(500);
  rmSync(work, { recursive: true, force: true });
}
