// Scaling, the runtime's ceiling and the tail (issue 19 item 3), in one run on one fixture:
//  - Pier `--workers 1` pinned to CPU 0 (wrk on CPU 1) and `--workers 2` on CPUs 0-1 (wrk shares
//    them: this machine has 2 CPUs; since D227 `--workers 2` is two serving workers behind the
//    primary, which only relays API calls, like nginx's master and its 2 workers), nginx the same
//    way (1 worker on CPU 0, 2 on CPUs 0-1), and
//    Pier 1 vs 2 unpinned; requests/s, p99, and the server's CPU per 1,000 requests (user + system
//    of every server process from /proc/<pid>/stat), RSS per process after the runs.
//  - The ceiling: a bare Bun.serve in as many reusePort processes, answering the same cached bytes
//    with exactly the headers Pier sent (captured from a Pier answer) and with Content-Type only,
//    from a fetch handler and from Bun's native static `routes` (bench/bare-bun-server.ts).
//  - The tail: p99 at -c50 and -c16 for Pier, bare Bun and nginx on 2 CPUs, and Bun's knobs
//    (--smol, the GC timer, JSC's concurrent GC and marker threads) on bare Bun and Pier.
// Run: ./node_modules/.bin/bun bench/sites-scaling.ts [--duration 5] [--rounds 2] [--connections 50]
//   [--threads 2] [--no-tail] [--tail-only]      (also: bun bench/sites.ts --scaling ...)
// Needs: apt-get install -y nginx wrk, and 2+ CPUs. Prints markdown tables for bench/README.md.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BareConfig } from "./bare-bun-server";
import { freePort } from "../test/helpers/pebble";
import { cpuTicks, processTree as tree, publishFixtureSite, rssMiB } from "./lib";
import { nginxStaticConf, runWrk, type WrkResult } from "./wrk";

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const DURATION = arg("duration", 5);
const ROUNDS = arg("rounds", 2);
const CONNECTIONS = arg("connections", 50);
const THREADS = arg("threads", 2);
const TAIL = !process.argv.includes("--no-tail");
const MAIN = !process.argv.includes("--tail-only");
const ROOT = join(import.meta.dir, "..");
const SECRET = "bench-secret-key-bench-secret-key-bench-secret";
const CLK_TCK = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim() || 100);

for (const bin of ["nginx", "wrk", "taskset"]) {
  if (spawnSync("sh", ["-c", `command -v ${bin}`]).status !== 0) {
    console.error(`bench/sites-scaling.ts: ${bin} is missing (apt-get install -y nginx wrk util-linux)`);
    process.exit(2);
  }
}
if (navigator.hardwareConcurrency < 2) {
  console.error("bench/sites-scaling.ts: needs at least 2 CPUs");
  process.exit(2);
}

// --- The fixture: the same 1 KB and 4 KB files as bench/sites.ts.
const work = mkdtempSync(join(tmpdir(), "pier-scaling-"));
chmodSync(work, 0o755); // nginx workers run as www-data and must read the fixture
const fixture = join(work, "site");
mkdirSync(fixture);
const html =
  `<!doctype html><html><head><meta charset="utf-8"><title>Bench</title></head><body>` +
  "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n".repeat(80);
const files: Record<string, Uint8Array> = {
  "index.html": new TextEncoder().encode(html.padEnd(4096 - "</body></html>".length, " ") + "</body></html>"),
  "small-1k.css": new TextEncoder().encode("body { margin: 0 auto; max-width: 40rem; }\n".repeat(24).slice(0, 1024)),
};
for (const [p, b] of Object.entries(files)) writeFileSync(join(fixture, p), b);
const cases = [
  { label: "1 KB", path: "/small-1k.css" },
  { label: "4 KB", path: "/index.html" },
];

const dataDir = join(work, "data");
const SLUG = "benchsite1";
const PIER_HOST = `${SLUG}.localhost`;
await publishFixtureSite(dataDir, SECRET, SLUG, files);

// --- Processes.
const procs: ChildProcess[] = [];
let stopping = false;
function start(cmd: string, args: string[], env: Record<string, string> = {}): { proc: ChildProcess; output: () => string } {
  const proc = spawn(cmd, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let out = "";
  proc.stdout!.on("data", (d) => (out = (out + d).slice(-4000)));
  proc.stderr!.on("data", (d) => (out = (out + d).slice(-4000)));
  proc.on("exit", (code) => {
    if (code && !stopping) console.error(`${cmd} ${args.slice(0, 4).join(" ")} exited ${code}: ${out}`);
  });
  procs.push(proc);
  return { proc, output: () => out };
}
const pinned = (cpus: string | null, cmd: string, args: string[]) => (cpus === null ? { cmd, args } : { cmd: "taskset", args: ["-c", cpus, cmd, ...args] });
const cleanup = () => {
  stopping = true;
  for (const p of procs) p.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
};
process.on("SIGINT", () => {
  cleanup();
  process.exit(130);
});

interface Server {
  name: string;
  /** Which comparison it belongs to; ratios are against the nginx of the same group. */
  group: string;
  /** CPUs the server is pinned to (null: unpinned), and wrk's. */
  cpus: string | null;
  wrkCpus: string | null;
  port: number;
  host?: string;
  pid: number;
  /** What "serving processes" means for its RSS (nginx's master serves nothing). */
  kind: "pier" | "nginx" | "bun";
  output: () => string;
}

let pierCopies = 0;
async function startPier(
  name: string,
  group: string,
  workers: number,
  cpus: string | null,
  wrkCpus: string | null,
  opts: { bunArgs?: string[]; env?: Record<string, string> } = {},
): Promise<Server> {
  const port = await freePort();
  const data = join(work, `data-${pierCopies++}`);
  cpSync(dataDir, data, { recursive: true }); // each Pier its own data dir: one primary per database
  const args = [...(opts.bunArgs ?? []), "src/main.ts", "serve", "--data-dir", data, "--http-port", String(port), "--host", "127.0.0.1"];
  args.push("--smtp-port", "off", "--https-port", "off", "--log-level", "warn", "--workers", String(workers));
  const c = pinned(cpus, process.execPath, args);
  const { proc, output } = start(c.cmd, c.args, { PIER_SECRET_KEY: SECRET, ...opts.env });
  return { name, group, cpus, wrkCpus, port, host: PIER_HOST, pid: proc.pid!, kind: "pier", output };
}

async function startNginx(name: string, group: string, workers: number, cpus: string | null, wrkCpus: string | null): Promise<Server> {
  const port = await freePort();
  const dir = join(work, `nginx-${port}`);
  mkdirSync(dir);
  const conf = join(dir, "nginx.conf");
  // As bench/sites.ts: Debian's defaults (sendfile, ETags), access log off.
  writeFileSync(conf, nginxStaticConf(dir, workers, port, fixture));
  const c = pinned(cpus, "nginx", ["-c", conf, "-e", `${dir}/error.log`]);
  const { proc, output } = start(c.cmd, c.args);
  return { name, group, cpus, wrkCpus, port, pid: proc.pid!, kind: "nginx", output };
}

let pierHeaders: Record<string, [string, string][]> = {};
async function startBare(
  name: string,
  group: string,
  mode: BareConfig["mode"],
  processes: number,
  cpus: string | null,
  wrkCpus: string | null,
  opts: { bunArgs?: string[]; env?: Record<string, string> } = {},
): Promise<Server> {
  const port = await freePort();
  const config: BareConfig = {
    port,
    mode,
    processes,
    bunArgs: opts.bunArgs ?? [],
    files: Object.fromEntries(cases.map((c) => [c.path, { file: join(fixture, c.path.slice(1)), headers: pierHeaders[c.path]! }])),
  };
  const c = pinned(cpus, process.execPath, [...config.bunArgs, join(import.meta.dir, "bare-bun-server.ts")]);
  const { proc, output } = start(c.cmd, c.args, { BARE_BUN: JSON.stringify(config), ...opts.env });
  return { name, group, cpus, wrkCpus, port, pid: proc.pid!, kind: "bun", output };
}

/** One HTTP/1.1 request as wrk sends it (no Accept-Encoding, no User-Agent): status, headers, body size. */
async function rawGet(
  port: number,
  path: string,
  host: string,
): Promise<{ status: number; headers: [string, string][]; headerBytes: number; bodyBytes: number }> {
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = connect(port, "127.0.0.1", () => s.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
    s.on("data", (d) => chunks.push(d));
    s.on("end", () => resolve(Buffer.concat(chunks)));
    s.on("error", reject);
  });
  const end = raw.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = raw.subarray(0, end).toString("latin1").split("\r\n");
  const headers = lines.map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()] as [string, string]);
  return { status: Number(statusLine!.split(" ")[1]), headers, headerBytes: end + 4, bodyBytes: raw.length - end - 4 };
}

async function waitUp(s: Server) {
  for (let i = 0; i < 200; i++) {
    try {
      const r = await rawGet(s.port, cases[0]!.path, s.host ?? "127.0.0.1");
      if (r.status === 200) return;
    } catch {}
    await Bun.sleep(100);
  }
  throw new Error(`${s.name} did not come up: ${s.output().slice(-1500)}`);
}

const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ")[0]!;

interface Sample extends WrkResult {
  /** Server CPU ms per 1,000 requests (all its processes; of which in user space), and each process's share of it. */
  cpuMsPer1k: number;
  userMsPer1k: number;
  split: number[];
  load: string;
}

function measure(s: Server, path: string, connections: number, durationS = DURATION): Sample {
  const pids = tree(s.pid);
  const before = pids.map(cpuTicks);
  const r = runWrk({ url: `http://127.0.0.1:${s.port}${path}`, host: s.host, durationS, threads: THREADS, connections, cpus: s.wrkCpus });
  const after = pids.map(cpuTicks);
  const used = pids.map((_, i) => after[i]![0] + after[i]![1] - before[i]![0] - before[i]![1]);
  const user = pids.reduce((sum, _, i) => sum + after[i]![0] - before[i]![0], 0);
  const total = used.reduce((a, b) => a + b, 0);
  const per1k = (ticks: number) => ((ticks / CLK_TCK) * 1000) / (r.requests / 1000);
  return { ...r, cpuMsPer1k: per1k(total), userMsPer1k: per1k(user), split: used.map((u) => u / (total || 1)), load: loadAverage() };
}

const median = (xs: number[]) => {
  const v = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
};
const f0 = (n: number) => Math.round(n).toLocaleString("en-US");
const ms = (n: number) => `${n.toFixed(2)} ms`;

/** Rounds in a rotated order (background load moves; a fixed order favours the same server). */
function rounds(servers: Server[], path: string, connections: number, label: string): Map<string, Sample[]> {
  const out = new Map<string, Sample[]>(servers.map((s) => [s.name, []]));
  for (const s of servers) runWrk({ url: `http://127.0.0.1:${s.port}${path}`, host: s.host, durationS: 2, threads: 1, connections: 8, cpus: s.wrkCpus }); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of servers.map((_, i) => servers[(i + round) % servers.length]!)) {
      const r = measure(s, path, connections);
      out.get(s.name)!.push(r);
      console.error(
        `${label.padEnd(14)} r${round + 1} ${s.name.padEnd(30)} ${f0(r.rps).padStart(8)} req/s  p99 ${ms(r.p99ms).padStart(9)}  cpu ${r.cpuMsPer1k.toFixed(1)} ms/1k (user ${r.userMsPer1k.toFixed(1)})  split ${r.split.map((x) => x.toFixed(2)).join("/")}${r.errors ? `  ERRORS ${r.errors}` : ""}  load ${r.load}`,
      );
    }
  }
  return out;
}

const cpu = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.*)/)?.[1] ?? "?";
const nginxV = (spawnSync("nginx", ["-v"], { encoding: "utf8" }).stderr || "").trim().replace("nginx version: ", "");
console.log(
  `\n${new Date().toISOString().slice(0, 16)}Z; wrk -t${THREADS} -d${DURATION}s --latency, median of ${ROUNDS} rounds; ${navigator.hardwareConcurrency} CPUs (${cpu}); Bun ${Bun.version}, ${nginxV}; load at start ${loadAverage()}`,
);

// Pier's answer headers, captured as wrk would get them, for the bare Bun server to repeat.
{
  const probe = await startPier("probe", "probe", 1, null, null);
  await waitUp(probe);
  for (const c of cases) {
    const r = await rawGet(probe.port, c.path, PIER_HOST);
    const bytes = files[c.path.slice(1)]!;
    if (r.status !== 200 || r.bodyBytes !== bytes.byteLength) throw new Error(`Pier answered ${c.path} with ${r.status}, ${r.bodyBytes} bytes`);
    // Date and Content-Length are Bun's own on every answer; the request id is made per request.
    pierHeaders[c.path] = r.headers.filter(([k]) => !["date", "content-length", "x-request-id", "connection"].includes(k.toLowerCase()));
  }
  console.log(`\nPier's answer to wrk for ${cases[0]!.path} (the bare "pier headers" servers repeat these, plus a request id):\n`);
  const full = await rawGet(probe.port, cases[0]!.path, PIER_HOST);
  console.log(`    ${full.headers.map(([k, v]) => `${k}: ${v}`).join("\n    ")}`);
  process.kill(probe.pid, "SIGTERM");
  await Bun.sleep(1000);
}

// --- 1. Scaling and the ceiling, 1 KB and 4 KB, -c CONNECTIONS.
const FULL_HEADERS = "fetch, Pier's headers";
if (MAIN) {
  const servers: Server[] = [];
  for (const [group, n, cpus, wrkCpus] of [
    ["1 CPU", 1, "0", "1"],
    ["2 CPUs", 2, "0,1", "0,1"],
  ] as const) {
    servers.push(await startPier(`Pier --workers ${n}`, group, n, cpus, wrkCpus));
    servers.push(await startNginx(`nginx ${n} worker${n > 1 ? "s" : ""}`, group, n, cpus, wrkCpus));
    servers.push(await startBare(`bare Bun ${FULL_HEADERS}`, group, "fetch-pier", n, cpus, wrkCpus));
    servers.push(await startBare("bare Bun fetch, Content-Type only", group, "fetch-min", n, cpus, wrkCpus));
    servers.push(await startBare("bare Bun static routes, Pier's headers", group, "static-pier", n, cpus, wrkCpus));
    servers.push(await startBare("bare Bun static routes, Content-Type only", group, "static-min", n, cpus, wrkCpus));
  }
  servers.push(await startPier("Pier --workers 1", "unpinned", 1, null, null));
  servers.push(await startPier("Pier --workers 2", "unpinned", 2, null, null));
  servers.push(await startNginx("nginx 2 workers", "unpinned", 2, null, null));
  for (const s of servers) await waitUp(s);
  await Bun.sleep(3000); // Pier's serving workers boot after the primary answers

  const groups = [...new Set(servers.map((s) => s.group))];
  const results = new Map<string, Map<string, Sample[]>>(); // case|group → server → samples
  for (const c of cases) {
    for (const g of groups)
      results.set(
        `${c.label}|${g}`,
        rounds(
          servers.filter((s) => s.group === g),
          c.path,
          CONNECTIONS,
          `${c.label} ${g}`,
        ),
      );
  }

  console.log(
    `\n### Scaling and the runtime's ceiling (-c${CONNECTIONS}; server CPU ms per 1,000 requests = user + system of all its processes, then the user part)\n`,
  );
  console.log(
    "| CPUs (server / wrk) | server | 1 KB req/s | 1 KB p99 | 1 KB CPU ms/1k req | 4 KB req/s | 4 KB p99 | 4 KB CPU ms/1k req | CPU split between processes (1 KB) |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---|");
  for (const g of groups) {
    for (const s of servers.filter((x) => x.group === g)) {
      const cells: string[] = [];
      let split = "";
      for (const c of cases) {
        const rows = results.get(`${c.label}|${g}`)!;
        const mine = rows.get(s.name)!;
        const nginx = [...rows].find(([n]) => n.startsWith("nginx"))?.[1];
        const rps = median(mine.map((x) => x.rps));
        const ratio = nginx && s.kind !== "nginx" ? ` (${(rps / median(nginx.map((x) => x.rps))).toFixed(2)}x)` : "";
        const cpuMs = median(mine.map((x) => x.cpuMsPer1k));
        const cpuRatio = nginx && s.kind !== "nginx" ? ` (${(cpuMs / median(nginx.map((x) => x.cpuMsPer1k))).toFixed(2)}x)` : "";
        const userMs = median(mine.map((x) => x.userMsPer1k));
        cells.push(`${f0(rps)}${ratio}`, ms(median(mine.map((x) => x.p99ms))), `${cpuMs.toFixed(1)}${cpuRatio}, user ${userMs.toFixed(1)}`);
        if (c === cases[0]) split = mine.map((x) => x.split.map((p) => `${Math.round(p * 100)}`).join("/")).join(", ");
      }
      const where = s.cpus === null ? "unpinned / unpinned" : `${s.cpus} / ${s.wrkCpus}`;
      console.log(`| ${where} | ${s.name} | ${cells.join(" | ")} | ${split}% |`);
    }
  }
  console.log("\nRatios in brackets are against nginx of the same row group (same CPUs, same rounds).");

  console.log("\n### Memory after the runs (RSS per process)\n");
  console.log("| server | CPUs | RSS per process | 1 KB answer: header bytes, header names |");
  console.log("|---|---|---|---|");
  for (const s of servers) {
    const answer = await rawGet(s.port, cases[0]!.path, s.host ?? "127.0.0.1");
    const pids = tree(s.pid).filter((p) => s.kind !== "bun" || rssMiB(p) > 0);
    const rss = pids.map(rssMiB).filter((m) => m > 0);
    const note = s.kind === "nginx" ? " (master, then workers)" : s.kind === "pier" ? " (primary, then serving workers)" : "";
    const names = answer.headers.map(([k]) => k.toLowerCase()).join(", ");
    console.log(`| ${s.name} | ${s.cpus ?? "unpinned"} | ${rss.map((m) => `${m.toFixed(0)} MiB`).join(" + ")}${note} | ${answer.headerBytes}: ${names} |`);
  }
  console.log("\nPier's file cache: 128 MiB of files per serving process (FileServer's maxBytes), files over 2 MiB never cached.");
  stopping = true;
  for (const s of servers) process.kill(s.pid, "SIGTERM");
  await Bun.sleep(2000);
  stopping = false;
}

// --- 3. The tail: p99 at -c50 and -c16 on 2 CPUs, and Bun's knobs.
if (TAIL) {
  const g = "tail";
  const both = "0,1";
  const servers: Server[] = [
    await startPier("Pier --workers 2", g, 2, both, both),
    await startPier("Pier --workers 2, BUN_GC_TIMER_DISABLE=1", g, 2, both, both, { env: { BUN_GC_TIMER_DISABLE: "1" } }),
    await startPier("Pier --workers 2, JSC numberOfGCMarkers=1", g, 2, both, both, { env: { BUN_JSC_numberOfGCMarkers: "1" } }),
    await startPier("Pier --workers 1", g, 1, both, both),
    await startPier("Pier --workers 1, bun --smol", g, 1, both, both, { bunArgs: ["--smol"] }),
    await startNginx("nginx 2 workers", g, 2, both, both),
    await startNginx("nginx 1 worker", g, 1, both, both),
    await startBare(`bare Bun ${FULL_HEADERS}`, g, "fetch-pier", 2, both, both),
    await startBare(`bare Bun ${FULL_HEADERS}, 1 process`, g, "fetch-pier", 1, both, both),
    await startBare(`bare Bun ${FULL_HEADERS}, --smol`, g, "fetch-pier", 2, both, both, { bunArgs: ["--smol"] }),
    await startBare(`bare Bun ${FULL_HEADERS}, GC timer off`, g, "fetch-pier", 2, both, both, { env: { BUN_GC_TIMER_DISABLE: "1" } }),
    await startBare(`bare Bun ${FULL_HEADERS}, no concurrent GC`, g, "fetch-pier", 2, both, both, { env: { BUN_JSC_useConcurrentGC: "false" } }),
    await startBare(`bare Bun ${FULL_HEADERS}, 1 GC marker`, g, "fetch-pier", 2, both, both, { env: { BUN_JSC_numberOfGCMarkers: "1" } }),
  ];
  for (const s of servers) await waitUp(s);
  await Bun.sleep(3000);
  const byConn = new Map<number, Map<string, Sample[]>>();
  for (const conns of [CONNECTIONS, 16]) byConn.set(conns, rounds(servers, cases[0]!.path, conns, `tail -c${conns}`));
  console.log(`\n### The tail: 1 KB file, all on CPUs 0-1 with wrk, -c${CONNECTIONS} vs -c16 (p50 / p99 / max, medians of ${ROUNDS} rounds)\n`);
  console.log(`| server | -c${CONNECTIONS} req/s | -c${CONNECTIONS} p50 / p99 / max | -c16 req/s | -c16 p50 / p99 / max | CPU split (-c${CONNECTIONS}) |`);
  console.log("|---|---:|---|---:|---|---|");
  for (const s of servers) {
    const cells = [CONNECTIONS, 16].map((conns) => {
      const xs = byConn.get(conns)!.get(s.name)!;
      return `${f0(median(xs.map((x) => x.rps)))} | ${ms(median(xs.map((x) => x.p50ms)))} / ${ms(median(xs.map((x) => x.p99ms)))} / ${ms(median(xs.map((x) => x.maxMs)))}`;
    });
    const split = byConn
      .get(CONNECTIONS)!
      .get(s.name)!
      .map((x) => x.split.map((p) => `${Math.round(p * 100)}`).join("/"))
      .join(", ");
    console.log(`| ${s.name} | ${cells.join(" | ")} | ${split}% |`);
  }
}

cleanup();
process.exit(0);
