// The site server's cost per request in-process, without sockets: `server.fetch()` of a real
// `pier serve` (startPier on a temp data dir) for cached files of a public site with analytics
// on and off. Steadier than wrk on a shared machine: batches alternate between the cases and each
// batch counts the process's CPU time (user + system), so other programs on the machine cost
// wall time, not the figure. Median CPU µs per request.
// Run: ./node_modules/.bin/bun bench/site-handler.ts [--batches 8] [--requests 50000]
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
await pier.stop();
rmSync(dataDir, { recursive: true, force: true });
