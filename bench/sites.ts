// Site server vs nginx and Caddy (Debian packages) on the same fixture, same machine, same run:
// wrk on loopback, requests/s and p99 latency for a 1 KB and a 4 KB page, a mix of 50 small
// files, a 64 KB and a 1 MB asset; then Pier's scaling with 1 and 2 serving processes pinned
// with taskset, and the RSS of each Pier process.
// Run: ./node_modules/.bin/bun bench/sites.ts [--duration 10] [--connections 50] [--workers N] [--no-scaling]
//   [--only pier,nginx,caddy,pier-base] [--compare <another checkout, e.g. of main>]
//   or: bun bench/sites.ts --scaling [...]: the scaling, ceiling and tail run (bench/sites-scaling.ts)
// Needs: apt-get install -y nginx caddy wrk. Prints a markdown table for bench/README.md.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../test/helpers/pebble";
import { publishFixtureSite } from "./lib";
import { nginxStaticConf } from "./wrk";

// --scaling: bench/sites-scaling.ts instead (Pier and nginx on 1 and 2 pinned CPUs, the bare
// Bun ceiling, the tail); it reads its own flags.
if (process.argv.includes("--scaling")) {
  await import("./sites-scaling");
  process.exit(0);
}

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const DURATION = arg("duration", 10);
const CONNECTIONS = arg("connections", 50);
const THREADS = arg("threads", 2);
const argStr = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? null : process.argv[i + 1]!;
};
/** --only pier,nginx limits the servers measured (quick checks while tuning). */
const ONLY = argStr("only")?.split(",") ?? null;

for (const bin of ["nginx", "caddy", "wrk"]) {
  if (spawnSync("sh", ["-c", `command -v ${bin}`]).status !== 0) {
    console.error(`bench/sites.ts: ${bin} is missing (apt-get install -y nginx caddy wrk)`);
    process.exit(2);
  }
}

const work = mkdtempSync(join(tmpdir(), "pier-bench-"));
chmodSync(work, 0o755); // nginx workers run as www-data and must read the fixture
const fixture = join(work, "site");
mkdirSync(fixture);
const rand = (n: number) => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(b.subarray(i, Math.min(n, i + 65536)));
  return b;
};
const html =
  `<!doctype html><html><head><meta charset="utf-8"><title>Bench</title></head><body>` +
  "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n".repeat(80);
const files: Record<string, Uint8Array> = {
  "index.html": new TextEncoder().encode(html.padEnd(4096 - "</body></html>".length, " ") + "</body></html>"),
  "small-1k.css": new TextEncoder().encode("body { margin: 0 auto; max-width: 40rem; }\n".repeat(24).slice(0, 1024)),
  "asset-64k.jpg": rand(64 * 1024),
  "asset-1m.jpg": rand(1024 * 1024),
};
// The mixed case: 50 small files of 0.5-8 KB (pages, styles, scripts, images), asked in turn.
const MIXED: string[] = [];
const kinds = ["css", "js", "svg", "png", "txt"];
for (let i = 0; i < 50; i++) {
  const name = `mix/file-${i}.${kinds[i % kinds.length]}`;
  files[name] = kinds[i % kinds.length] === "png" ? rand(512 + ((i * 997) % 7680)) : new TextEncoder().encode("a".repeat(512 + ((i * 997) % 7680)));
  MIXED.push(`/${name}`);
}
mkdirSync(join(fixture, "mix"));
for (const [p, b] of Object.entries(files)) writeFileSync(join(fixture, p), b);

// --- Pier: publish the fixture into a fresh data dir, then run `pier serve` as its own process.
const dataDir = join(work, "data");
const SLUG = "benchsite1";
await publishFixtureSite(dataDir, "bench-secret-key-bench-secret-key-bench-secret", SLUG, files);

const procs: ChildProcess[] = [];
const outputs = new Map<string, () => string>();
function start(cmd: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const p = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let err = "";
  p.stderr!.on("data", (d) => (err += d));
  p.stdout!.on("data", (d) => (err += d));
  outputs.set(cmd, () => err);
  p.on("exit", (code) => {
    if (code && code !== 0 && !stopping) console.error(`${cmd} exited ${code}: ${err.slice(-2000)}`);
  });
  procs.push(p);
  return p;
}
let stopping = false;
const cleanup = () => {
  stopping = true;
  for (const p of procs) p.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
};
process.on("uncaughtException", (e) => {
  console.error(e);
  cleanup();
  process.exit(1);
});
process.on("unhandledRejection", (e) => {
  console.error(e);
  cleanup();
  process.exit(1);
});
process.on("SIGINT", () => {
  cleanup();
  process.exit(130);
});

const WORKERS = argStr("workers") ?? "auto";
function startPierServe(port: number, workers: string, cpus: string | null): ChildProcess {
  const args = ["src/main.ts", "serve", "--data-dir", dataDir, "--http-port", String(port), "--host", "127.0.0.1", "--smtp-port", "off", "--https-port", "off"];
  args.push("--log-level", "warn", "--workers", workers);
  const env = { PIER_SECRET_KEY: "bench-secret-key-bench-secret-key-bench-secret" };
  return cpus === null ? start(process.execPath, args, env) : start("taskset", ["-c", cpus, process.execPath, ...args], env);
}
const pierPort = await freePort();
const pierProc = startPierServe(pierPort, WORKERS, null);
// --compare DIR: also run the Pier of another checkout (e.g. the main branch) on a copy of the
// same data dir, measured in the same rounds as "Pier-base" (before/after on one run).
const COMPARE = argStr("compare");
let basePort = 0;
if (COMPARE !== null) {
  const baseData = join(work, "data-base");
  cpSync(dataDir, baseData, { recursive: true });
  basePort = await freePort();
  const args = [join(COMPARE, "src/main.ts"), "serve", "--data-dir", baseData, "--http-port", String(basePort), "--host", "127.0.0.1", "--smtp-port", "off"];
  args.push("--https-port", "off", "--log-level", "warn", "--workers", WORKERS);
  start(process.execPath, args, { PIER_SECRET_KEY: "bench-secret-key-bench-secret-key-bench-secret" });
}

// Debian's defaults (sendfile, etag on) with the access log off, as Pier keeps none per request
// either. Twice: worker_processes auto (all cores, Debian's default) and 1 (per-core comparison
// with Pier, which serves from one process).
async function startNginx(workers: string): Promise<number> {
  const port = await freePort();
  const dir = join(work, `nginx-${workers}`);
  mkdirSync(dir);
  const conf = join(dir, "nginx.conf");
  writeFileSync(conf, nginxStaticConf(dir, workers, port, fixture));
  start("nginx", ["-c", conf, "-e", `${dir}/error.log`]);
  return port;
}
const nginxPort = await startNginx("auto");

const caddyPort = await freePort();
const caddyfile = join(work, "Caddyfile");
writeFileSync(caddyfile, `{\n  admin off\n  auto_https off\n}\nhttp://127.0.0.1:${caddyPort} {\n  root * ${fixture}\n  file_server\n}\n`);
start("caddy", ["run", "--config", caddyfile, "--adapter", "caddyfile"], { HOME: work, XDG_DATA_HOME: work, XDG_CONFIG_HOME: work });

async function waitUp(url: string, host?: string) {
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(url, { headers: host ? { host } : {} });
      if (r.status === 200) return;
    } catch {}
    await Bun.sleep(100);
  }
  throw new Error(`server at ${url} did not come up; output: ${[...outputs.values()].map((f) => f().slice(-800)).join("\n---\n")}`);
}

const servers = [
  { name: "Pier", base: `http://127.0.0.1:${pierPort}`, host: `${SLUG}.localhost` },
  { name: "nginx", base: `http://127.0.0.1:${nginxPort}`, host: undefined },
  { name: "Caddy", base: `http://127.0.0.1:${caddyPort}`, host: undefined },
];
if (COMPARE !== null) servers.splice(1, 0, { name: "Pier-base", base: `http://127.0.0.1:${basePort}`, host: `${SLUG}.localhost` });
if (ONLY) servers.splice(0, servers.length, ...servers.filter((s) => ONLY.includes(s.name.toLowerCase())));
for (const s of servers)
  await waitUp(`${s.base}/index.html`, s.host).catch((e) => {
    throw new Error(`${s.name}: ${e.message}`);
  });

// Same bytes from everyone.
for (const s of servers) {
  for (const [p, b] of Object.entries(files)) {
    const got = new Uint8Array(
      await (
        await fetch(`${s.base}/${p}`, { headers: s.host ? { host: s.host, "accept-encoding": "identity" } : { "accept-encoding": "identity" } })
      ).arrayBuffer(),
    );
    if (got.byteLength !== b.byteLength) throw new Error(`${s.name} served ${got.byteLength} bytes for ${p}, expected ${b.byteLength}`);
  }
}

function parseWrk(out: string): { rps: number; p99ms: number } {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const m = /\s99%\s+([\d.]+)(us|ms|s)\b/.exec(out);
  const p99ms = m ? Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1) : NaN;
  return { rps, p99ms };
}

// wrk asks the mixed case's paths in turn (one Lua counter per thread).
const mixScript = join(work, "mixed.lua");
writeFileSync(
  mixScript,
  `local paths = {${MIXED.map((p) => `"${p}"`).join(",")}}\nlocal i = 0\nrequest = function()\n  i = i % #paths + 1\n  return wrk.format("GET", paths[i])\nend\n`,
);
const cases = [
  { label: "1 KB file", path: "/small-1k.css" },
  { label: "index.html (4 KB)", path: "/index.html" },
  { label: "mixed small (50 files, 0.5-8 KB)", path: "/", script: mixScript },
  { label: "asset 64 KB", path: "/asset-64k.jpg" },
  { label: "asset 1 MB", path: "/asset-1m.jpg" },
];
const ROUNDS = arg("rounds", 3);
// Several rounds, each in a rotated server order, and the median of each: on a shared machine
// background load moves between runs, and a fixed order would always favour the same server.
const samples: Record<string, Record<string, { rps: number; p99ms: number }[]>> = {};
for (const c of cases) {
  samples[c.label] = Object.fromEntries(servers.map((s) => [s.name, []]));
  for (const s of servers) spawnSync("wrk", ["-t1", "-c8", "-d2s", ...(s.host ? ["-H", `Host: ${s.host}`] : []), s.base + c.path]); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const order = servers.map((_, i) => servers[(i + round) % servers.length]!);
    for (const s of order) {
      const args = ["-t", String(THREADS), "-c", String(CONNECTIONS), "-d", `${DURATION}s`, "--latency"];
      if (s.host) args.push("-H", `Host: ${s.host}`);
      if (c.script) args.push("-s", c.script);
      const r = parseWrk(spawnSync("wrk", [...args, s.base + c.path], { encoding: "utf8" }).stdout);
      samples[c.label]![s.name]!.push(r);
      console.error(
        `${c.label.padEnd(20)} round ${round + 1} ${s.name.padEnd(8)} ${r.rps.toFixed(0).padStart(8)} req/s  p99 ${r.p99ms.toFixed(2)} ms  (load ${loadAverage()})`,
      );
    }
  }
}
const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
};
const results: Record<string, Record<string, { rps: number; p99ms: number }>> = {};
for (const c of cases) {
  results[c.label] = Object.fromEntries(
    servers.map((s) => {
      const xs = samples[c.label]![s.name]!;
      return [s.name, { rps: median(xs.map((x) => x.rps)), p99ms: median(xs.map((x) => x.p99ms)) }];
    }),
  );
}

const cpu = (spawnSync("sh", ["-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], { encoding: "utf8" }).stdout || "").trim();
const nginxV = (spawnSync("nginx", ["-v"], { encoding: "utf8" }).stderr || "").trim().replace("nginx version: ", "");
const caddyV = (spawnSync("caddy", ["version"], { encoding: "utf8" }).stdout || "").trim().split(" ")[0];
console.log(
  `\nwrk -t${THREADS} -c${CONNECTIONS} -d${DURATION}s on loopback, median of ${ROUNDS} rounds; ${navigator.hardwareConcurrency} CPUs (${cpu}); Bun ${Bun.version}, ${nginxV}, Caddy ${caddyV}; ${new Date().toISOString().slice(0, 10)}\n`,
);
const names = servers.map((s) => s.name);
console.log(`| file | ${names.map((n) => `${n} req/s`).join(" | ")} | ${names.map((n) => `${n} p99`).join(" | ")} |`);
console.log(`|---|${names.map(() => "---:").join("|")}|${names.map(() => "---:").join("|")}|`);
for (const c of cases) {
  const r = results[c.label]!;
  const f = (n: number) => Math.round(n).toLocaleString("en-US");
  const l = (n: number) => `${n.toFixed(2)} ms`;
  // Pier's cell also gives its ratio to nginx measured in the same rounds.
  const cell = (n: string) => (n.startsWith("Pier") && r.nginx ? `${f(r[n]!.rps)} (${(r[n]!.rps / r.nginx.rps).toFixed(2)}x nginx)` : f(r[n]!.rps));
  console.log(`| ${c.label} | ${names.map(cell).join(" | ")} | ${names.map((n) => l(r[n]!.p99ms)).join(" | ")} |`);
}

// Memory: every Pier process (the primary and its serving workers) after the runs.
console.log(
  `\nPier RSS after the runs (--workers ${WORKERS}): ${pierRss(pierProc.pid!)
    .map((m) => `${m.toFixed(0)} MiB`)
    .join(", ")}; memory cache bound: 128 MiB of files per process, files over 2 MiB never cached`,
);

// Scaling: one serving process pinned to CPU 0 (wrk on CPU 1), then two on both CPUs.
if (!process.argv.includes("--no-scaling") && ONLY === null) {
  pierProc.kill("SIGTERM");
  await Bun.sleep(1500);
  const rows: string[] = [];
  for (const [workers, cpus, wrkCpus] of [
    ["1", "0", "1"],
    ["2", "0,1", "0,1"],
  ] as const) {
    const port = await freePort();
    const proc = startPierServe(port, workers, cpus);
    const base = `http://127.0.0.1:${port}`;
    await waitUp(`${base}/index.html`, `${SLUG}.localhost`);
    await Bun.sleep(3000); // the workers boot after the primary
    const cells: string[] = [];
    for (const c of cases.slice(0, 3)) {
      const args = ["-c", wrkCpus, "wrk", "-t", String(THREADS), "-c", String(CONNECTIONS), "-d", `${DURATION}s`, "--latency", "-H", `Host: ${SLUG}.localhost`];
      if (c.script) args.push("-s", c.script);
      spawnSync("taskset", [...args.slice(0, 2), "wrk", "-t1", "-c8", "-d2s", "-H", `Host: ${SLUG}.localhost`, base + c.path]);
      const r = parseWrk(spawnSync("taskset", [...args, base + c.path], { encoding: "utf8" }).stdout);
      cells.push(`${Math.round(r.rps).toLocaleString("en-US")} (p99 ${r.p99ms.toFixed(2)} ms)`);
    }
    rows.push(
      `| ${workers} on CPU ${cpus}, wrk on CPU ${wrkCpus} | ${cells.join(" | ")} | ${pierRss(proc.pid!)
        .map((m) => m.toFixed(0))
        .join(" + ")} MiB | ${loadAverage()} |`,
    );
    proc.kill("SIGTERM");
    await Bun.sleep(1500);
  }
  console.log(
    `\n| serving processes | ${cases
      .slice(0, 3)
      .map((c) => c.label)
      .join(" | ")} | RSS | load |`,
  );
  console.log(
    `|---|${cases
      .slice(0, 3)
      .map(() => "---:")
      .join("|")}|---:|---|`,
  );
  for (const r of rows) console.log(r);
}
cleanup();
process.exit(0);

function loadAverage(): string {
  return (spawnSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).stdout || "").split(" ").slice(0, 1).join("");
}

/** RSS in MiB of a process (through taskset: the process it became) and of its children. */
function pierRss(pid: number): number[] {
  const rss = (p: number) => Number(/VmRSS:\s+(\d+)/.exec(spawnSync("cat", [`/proc/${p}/status`], { encoding: "utf8" }).stdout || "")?.[1] ?? 0) / 1024;
  const children = (p: number) =>
    (spawnSync("sh", ["-c", `cat /proc/${p}/task/*/children 2>/dev/null`], { encoding: "utf8" }).stdout || "").split(/\s+/).filter(Boolean).map(Number);
  return [pid, ...children(pid)].map(rss).filter((m) => m > 0);
}
