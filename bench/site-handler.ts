// The site server's cost per request in-process, without sockets: `server.fetch()` of a real
// `pier serve` (startPier on a temp data dir) for cached files of a public site with analytics
// on and off. Steadier than wrk on a shared machine: batches alternate between the cases and each
// batch counts the process's CPU time (user + system), so other programs on the machine cost
// wall time, not the figure. Median CPU µs per request.
// Then the cost of a site cache reset (serving workers: src/sites/changes.ts): the site handler's
// CPU µs for a cached file with and without every cached site forgotten before each request.
// With --resets S: a `--workers 2` server on real HTTP for S seconds of steady site traffic
// (analytics on): how many commits each process sees from the other (before the change log, each
// one dropped every cached site) and what pier_site_cache_resets_total counted.
// Run: ./node_modules/.bin/bun bench/site-handler.ts [--batches 8] [--requests 50000] [--resets 60]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { startPier } from "../src/runtime";
import { insertUserWithAccount } from "../src/features/accounts/service";
import { eq } from "drizzle-orm";
import { buckets, publications } from "../src/db/schema";
import { activateDeploy, writeDeploy } from "../src/features/publish/deploys";
import { createPublication } from "../src/features/publish/publications";
import { createSiteHandler, forgetChangedSites } from "../src/sites/server";
import { Database } from "bun:sqlite";

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const BATCHES = arg("batches", 8);
const REQUESTS = arg("requests", 50_000);
const dataDir = mkdtempSync(join(tmpdir(), "pier-bench-handler-"));
const pier = await startPier(
  {
    ...loadConfig({}, {}),
    dataDir,
    host: "127.0.0.1",
    httpPort: 0,
    httpsPort: null,
    smtpPort: null,
    secretKey: "bench-secret-key-bench-secret-key-bench-secret",
  },
  { log: silentLogger, startWorker: false },
);
const deps = pier.deps;
const page = (n: number) => new TextEncoder().encode("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n".repeat(Math.ceil(n / 64)).slice(0, n));
const rand = (n: number) => crypto.getRandomValues(new Uint8Array(n));
const { account } = insertUserWithAccount(deps, { email: "bench@example.com", passwordHash: "x" });
const now = new Date().toISOString();
deps.db.insert(buckets).values({ id: "bkt_bench", accountId: account.id, title: "Bench", createdAt: now, updatedAt: now }).run();
const pub = createPublication(deps, { bucketId: "bkt_bench", accountId: account.id, kind: "main", slug: "handlerbench" });
const files = { "1k.html": page(1024), "index.html": page(4096), "64k.jpg": rand(65536) };
const d = await writeDeploy(
  deps,
  pub.id,
  Object.entries(files).map(([path, bytes]) => ({ path, bytes })),
);
activateDeploy(deps, pub.id, d.deployId);

// The same files on a second site with analytics off (the counting hook's share).
deps.db.insert(buckets).values({ id: "bkt_quiet", accountId: account.id, title: "Quiet", createdAt: now, updatedAt: now }).run();
const quiet = createPublication(deps, { bucketId: "bkt_quiet", accountId: account.id, kind: "main", slug: "handlerquiet" });
const dq = await writeDeploy(
  deps,
  quiet.id,
  Object.entries(files).map(([path, bytes]) => ({ path, bytes })),
);
activateDeploy(deps, quiet.id, dq.deployId);
deps.db.update(publications).set({ analyticsEnabled: false }).where(eq(publications.id, quiet.id)).run();

const hostOf = (slug: string) => `${slug}.${deps.urls.sitesDomain}`;
const cases = [
  { label: "1 KB page (/1k), analytics on", host: hostOf("handlerbench"), path: "/1k" },
  { label: "1 KB page (/1k), analytics off", host: hostOf("handlerquiet"), path: "/1k" },
  { label: "4 KB index (/), analytics off", host: hostOf("handlerquiet"), path: "/" },
  { label: "64 KB asset, analytics on", host: hostOf("handlerbench"), path: "/64k.jpg" },
  { label: "64 KB asset, analytics off", host: hostOf("handlerquiet"), path: "/64k.jpg" },
  { label: "1 KB page, If-None-Match (304), analytics off", host: hostOf("handlerquiet"), path: "/1k", conditional: true },
];
const ua = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36";
const serverFetch = (req: Request) => (pier.http as unknown as { fetch(r: Request): Response | Promise<Response> }).fetch(req);
const makers: (() => Request)[] = [];
for (const c of cases) {
  const url = `http://${c.host}${c.path}`;
  const base = { host: c.host, "user-agent": ua, "accept-encoding": "identity" };
  const first = await serverFetch(new Request(url, { headers: base }));
  if (first.status !== 200) throw new Error(`${c.path}: ${first.status}`);
  const headers = c.conditional ? { ...base, "if-none-match": first.headers.get("etag")! } : base;
  makers.push(() => new Request(url, { headers }));
}
const perCase: number[][] = cases.map(() => []);
for (let b = 0; b < BATCHES; b++) {
  for (let i = 0; i < cases.length; i++) {
    const reqs = Array.from({ length: REQUESTS }, makers[i]!);
    const before = process.cpuUsage();
    for (const r of reqs) {
      const res = serverFetch(r);
      if (res instanceof Promise) await res;
    }
    const used = process.cpuUsage(before);
    perCase[i]!.push((used.user + used.system) / REQUESTS);
  }
}
console.log(`| case | CPU µs per request (median of ${BATCHES}) | range |\n|---|---:|---|`);
for (let i = 0; i < cases.length; i++) {
  const xs = perCase[i]!.sort((a, b) => a - b);
  console.log(`| ${cases[i]!.label} | ${xs[Math.floor(xs.length / 2)]!.toFixed(2)} | ${xs[0]!.toFixed(2)}-${xs.at(-1)!.toFixed(2)} |`);
}

// A reset's cost: what the first request after "forget every site" redoes (the host lookup: one
// SQLite query of the publication and its account; manifests, prepared headers and file bytes
// stay, they are keyed by the deploy). The handler alone, called directly.
const sites = createSiteHandler(deps);
const label = "handlerbench";
const siteReq = () => new Request(`http://${hostOf(label)}/1k`, { headers: { host: hostOf(label), "user-agent": ua, "accept-encoding": "identity" } });
const call = async (reset: boolean, n: number) => {
  const reqs = Array.from({ length: n }, siteReq);
  const before = process.cpuUsage();
  for (const r of reqs) {
    if (reset) forgetChangedSites(sites, { all: true });
    const res = sites(r, { kind: "site", label });
    if (res instanceof Promise) await res;
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
};
await call(false, 1000);
const warm: number[] = [];
const reset: number[] = [];
for (let b = 0; b < BATCHES; b++) {
  warm.push(await call(false, 20_000));
  reset.push(await call(true, 20_000));
}
const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`\n| site handler, 1 KB page (analytics on) | CPU µs per request (median of ${BATCHES}) |\n|---|---:|`);
console.log(`| cached site | ${med(warm).toFixed(2)} |`);
console.log(`| every site forgotten before each request | ${med(reset).toFixed(2)} |`);
await pier.stop();
rmSync(dataDir, { recursive: true, force: true });

const RESETS_SECONDS = arg("resets", 0);
if (RESETS_SECONDS > 0) await measureResets(RESETS_SECONDS);

/** Commits seen and resets counted under steady traffic with two serving processes. */
async function measureResets(seconds: number) {
  const dir = mkdtempSync(join(tmpdir(), "pier-bench-resets-"));
  const token = "bench-metrics-token-0123456789abcdef";
  const server = await startPier(
    {
      ...loadConfig({}, {}),
      dataDir: dir,
      host: "127.0.0.1",
      httpPort: 0,
      httpsPort: null,
      smtpPort: null,
      metricsToken: token,
      secretKey: "bench-secret-key-bench-secret-key-bench-secret",
    },
    { log: silentLogger, servingWorkers: 2 },
  );
  const d2 = server.deps;
  const { account: a2 } = insertUserWithAccount(d2, { email: "resets@example.com", passwordHash: "x" });
  d2.db.insert(buckets).values({ id: "bkt_resets", accountId: a2.id, title: "Resets", createdAt: now, updatedAt: now }).run();
  const p2 = createPublication(d2, { bucketId: "bkt_resets", accountId: a2.id, kind: "main", slug: "resetsbench" });
  const dep = await writeDeploy(
    d2,
    p2.id,
    Object.entries(files).map(([path, bytes]) => ({ path, bytes })),
  );
  activateDeploy(d2, p2.id, dep.deployId);
  const host = `resetsbench.${d2.urls.sitesDomain}`;
  const base = `http://127.0.0.1:${server.httpPort}`;
  const scrape = async () => {
    const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    const of = (scope: string) => Number(new RegExp(`^pier_site_cache_resets_total\\{scope="${scope}"\\} (\\S+)$`, "m").exec(text)?.[1] ?? "0");
    return { publication: of("publication"), all: of("all") };
  };
  // Wait for the worker, then measure from a settled state.
  for (let i = 0; i < 100 && (await fetch(`${base}/1k`, { headers: { host } })).status !== 200; i++) await Bun.sleep(100);
  await Bun.sleep(3000);
  // A third connection polling like a serving process does: every change it sees is a commit of
  // one of the two processes (each process sees the other's; the old code reset on each).
  const watcher = new Database(join(dir, "pier.db"), { readonly: true });
  const dataVersion = () => (watcher.query("PRAGMA data_version").get() as { data_version: number }).data_version;
  let lastVersion = dataVersion();
  let commits = 0;
  const poll = setInterval(() => {
    const v = dataVersion();
    if (v !== lastVersion) commits++;
    lastVersion = v;
  }, 200);
  const before = await scrape();
  const until = performance.now() + seconds * 1000;
  let requests = 0;
  // Steady traffic on fresh and kept-alive connections alike (both processes take some).
  const client = async () => {
    while (performance.now() < until) {
      const r = await fetch(`${base}/${requests % 2 ? "1k" : ""}`, { headers: { host, "user-agent": ua } });
      await r.arrayBuffer();
      requests++;
    }
  };
  await Promise.all(Array.from({ length: 8 }, client));
  clearInterval(poll);
  const after = await scrape();
  watcher.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
  const perMinute = (n: number) => ((n * 60) / seconds).toFixed(1);
  console.log(`\n--workers 2, ${seconds} s of steady traffic (${requests} requests, analytics on):`);
  console.log(`| | per minute |\n|---|---:|`);
  console.log(`| commits by either process, polled every 200 ms (each reset every site of the other process before) | ${perMinute(commits)} |`);
  console.log(`| pier_site_cache_resets_total{scope="publication"} (both processes) | ${perMinute(after.publication - before.publication)} |`);
  console.log(`| pier_site_cache_resets_total{scope="all"} (both processes) | ${perMinute(after.all - before.all)} |`);
}
