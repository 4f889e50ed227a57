// Analytics costs, three parts (all on loopback, bounded, temp data dirs):
//  1. the site server's requests/s with analytics on vs off, same run, same server (`pier serve`
//     in its own process; wrk alternates between an identical site with analytics on and one
//     with tracking off, several rounds), for three kinds of traffic: a page load (the page then
//     its 8 assets, a browser), the page alone (a browser), the page alone (a crawler); then the
//     same three in-process (the site handler's CPU µs per request, on vs off);
//  2. a 90-day query for one publication holding 10 million hits over 1,000 paths, seeded through
//     the real roll-up code (HourCounts + writeRollups, one flush per hour of the 90 days): p50/p99
//     of GET /api/v1/publications/:id/analytics?range=90d over real HTTP, warm and as the first
//     request of the window (closed-days cache emptied);
//  3. the flusher under a flood of 100,000 distinct 404 paths: fold + flush time, rows written
//     and the process's heap before/after (caps keep both flat).
// Run: ./node_modules/.bin/bun bench/analytics.ts [--duration 8] [--rounds 3] [--only rps,handler,query,flood]
//      [--mixes a,b,c] (which traffic parts 1 and 1b run) [--time-zone Europe/Berlin] (the query's account zone: daily rows keyed by its local dates; default UTC)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { accounts, buckets, publications } from "../src/db/schema";
import { createApiKey } from "../src/features/accounts/keys";
import { insertUserWithAccount } from "../src/features/accounts/service";
import { HourCounts, hourKey } from "../src/features/analytics/recorder";
import { pruneAnalytics } from "../src/features/analytics";
import { writeRollups } from "../src/features/analytics/rollups";
import { forgetCachedDaysFrom } from "../src/features/analytics/top-lists";
import { localDay } from "../src/features/analytics/zone";
import { activateDeploy, writeDeploy } from "../src/features/publish/deploys";
import { createPublication } from "../src/features/publish/publications";
import { createDeps, startPier } from "../src/runtime";
import { createSiteHandler } from "../src/sites/server";
import { cpuTicks, percentile, processTree, TICKS_PER_SECOND } from "./lib";
import { hasWrk, serveDataDir, wrk } from "./wrk";
import type { Deps } from "../src/core/context";
import { eq } from "drizzle-orm";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : process.argv[i + 1]!;
};
const DURATION = Number(arg("duration", "8"));
const ROUNDS = Number(arg("rounds", "3"));
const ONLY = arg("only", "rps,handler,query,flood").split(",");
const TIME_ZONE = arg("time-zone", "UTC");
const MIX_LETTERS = arg("mixes", "a,b,c").split(",");
const SECRET = "bench-secret-key-bench-secret-key-bench-secret";
const work = mkdtempSync(join(tmpdir(), "pier-bench-analytics-"));
const cleanup = () => rmSync(work, { recursive: true, force: true });
process.on("SIGINT", () => {
  cleanup();
  process.exit(130);
});
const baseConfig = (dir: string) => ({ ...loadConfig({}, {}), dataDir: dir, secretKey: SECRET, smtpPort: null, httpsPort: null, host: "127.0.0.1" });

/** A page and the files a typical page pulls in (sizes of a small site's CSS, script, font and images). */
const ASSETS: [string, number][] = [
  ["/style.css", 6_000],
  ["/app.js", 12_000],
  ["/font.woff2", 18_000],
  ["/logo.svg", 2_000],
  ["/hero.jpg", 24_000],
  ["/photo-1.jpg", 12_000],
  ["/photo-2.jpg", 12_000],
  ["/favicon.ico", 1_000],
];
const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

async function seedSite(deps: Deps, accountId: string, slug: string, tracking: boolean) {
  const now = new Date().toISOString();
  const bucket = deps.db
    .insert(buckets)
    .values({ id: `bkt_${slug}`, accountId, title: slug, createdAt: now, updatedAt: now })
    .returning()
    .get();
  const pub = createPublication(deps, { bucketId: bucket.id, accountId, kind: "main", slug });
  const html = "<!doctype html><title>Bench</title>" + "<p>Lorem ipsum dolor sit amet.</p>\n".repeat(110);
  const assets = ASSETS.map(([path, size]) => ({ path: path.slice(1), bytes: crypto.getRandomValues(new Uint8Array(size)) }));
  const d = await writeDeploy(deps, pub.id, [{ path: "index.html", bytes: html }, ...assets]);
  activateDeploy(deps, pub.id, d.deployId);
  if (!tracking) deps.db.update(publications).set({ trackingEnabled: false }).where(eq(publications.id, pub.id)).run();
  return pub;
}

/**
 * The traffic of parts 1 and 1b: (a) a page load, the 4 KB page then its 8 assets, from a
 * browser (the site server's usual traffic, on which the 5% goal is judged); (b) the page alone
 * from a browser (every hit a visit); (c) a crawler on the page (never a visit).
 */
const MIXES = [
  { name: "(a) page load: 1 page + 8 assets, browser", paths: ["/", ...ASSETS.map(([p]) => p)], ua: BROWSER },
  { name: "(b) the page alone, browser", paths: ["/"], ua: BROWSER },
  { name: "(c) the page alone, Googlebot", paths: ["/"], ua: GOOGLEBOT },
].filter((m) => MIX_LETTERS.includes(m.name[1]!));
const REFERER = "https://news.example.org/item";

/** A wrk script that cycles each connection's requests through `paths`. */
function cycleScript(paths: string[]): string {
  const file = join(work, `cycle-${paths.length}.lua`);
  writeFileSync(
    file,
    `local paths = {${paths.map((p) => JSON.stringify(p)).join(", ")}}\nlocal i = 0\nrequest = function()\n  i = i % #paths + 1\n  return wrk.format(nil, paths[i])\nend\n`,
  );
  return file;
}

// --- 1. requests/s on vs off
async function requestsPerSecond() {
  if (!hasWrk()) return console.log("rps: wrk missing (apt-get install -y wrk)");
  const dir = join(work, "rps");
  const deps = await createDeps(baseConfig(dir), 0, { log: silentLogger });
  const { account } = insertUserWithAccount(deps, { email: "bench@example.com", passwordHash: "x" });
  await seedSite(deps, account.id, "analyticson", true);
  await seedSite(deps, account.id, "analyticsoff", false);
  deps.close();
  const server = await serveDataDir(dir, SECRET);
  console.log(`\n### Site requests/s, analytics on vs off (wrk -t2 -c50 -d${DURATION}s, ${ROUNDS} alternating rounds, \`pier serve\` defaults)\n`);
  console.log(
    "| Traffic | Round | on req/s | off req/s | on is slower by | on p99 | off p99 | on CPU µs/req | off CPU µs/req |\n|---|---|---|---|---|---|---|---|---|",
  );
  const summary: string[] = [];
  // The server's CPU per request (user + system of every `pier serve` process): wrk shares the
  // two cores, so req/s moves with whatever else runs; the CPU a request costs the server barely
  // does, and it is what "slower" means once the server is the bottleneck.
  const serverTicks = () =>
    processTree(server.proc.pid).reduce((sum, pid) => {
      const [user, system] = cpuTicks(pid);
      return sum + user + system;
    }, 0);
  for (const mix of MIXES) {
    const script = mix.paths.length > 1 ? cycleScript(mix.paths) : undefined;
    const run = (slug: string) => {
      const before = serverTicks();
      const r = wrk({ port: server.port, slug, durationS: DURATION, script, headers: { "User-Agent": mix.ua, Referer: REFERER } });
      const cpuUs = ((serverTicks() - before) / TICKS_PER_SECOND / Math.max(1, r.requests)) * 1e6;
      return { ...r, cpuUs };
    };
    run("analyticson"); // warm-up, discarded
    const rps = { on: [] as number[], off: [] as number[] };
    const cpu = { on: [] as number[], off: [] as number[] };
    // Each round's own ratio: its two runs are back to back, so what the machine does over minutes
    // moves both sides of a round and hardly its ratio.
    const slower: number[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      // Alternate the order so drift on a shared machine does not favour one side.
      const res: Record<string, ReturnType<typeof run>> = {};
      for (const side of r % 2 ? (["off", "on"] as const) : (["on", "off"] as const)) {
        res[side] = run(side === "on" ? "analyticson" : "analyticsoff");
        rps[side].push(res[side]!.rps);
        cpu[side].push(res[side]!.cpuUs);
      }
      const { on, off } = res as Record<"on" | "off", ReturnType<typeof run>>;
      slower.push(((off.rps - on.rps) / off.rps) * 100);
      console.log(
        `| ${mix.name} | ${r} | ${on.rps.toFixed(0)} | ${off.rps.toFixed(0)} | ${slower.at(-1)!.toFixed(1)}% | ${on.p99} | ${off.p99} | ${on.cpuUs.toFixed(2)} | ${off.cpuUs.toFixed(2)} |`,
      );
    }
    const sorted = [...slower].sort((a, b) => a - b);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const [on, off] = [mean(rps.on), mean(rps.off)];
    const [cpuOn, cpuOff] = [med(cpu.on), med(cpu.off)];
    summary.push(
      `| ${mix.name} | ${on.toFixed(0)} | ${off.toFixed(0)} | ${(((off - on) / off) * 100).toFixed(1)}% | ${med(slower).toFixed(1)}% (${sorted[0]!.toFixed(1)} to ${sorted.at(-1)!.toFixed(1)}) | ${cpuOn.toFixed(2)} | ${cpuOff.toFixed(2)} | ${((cpuOn / cpuOff - 1) * 100).toFixed(1)}% |`,
    );
  }
  await server.stop();
  console.log(
    `\nMeans of req/s, the median of the rounds' own ratios (lowest to highest), medians of server CPU per request (goal: (a) under 5% slower)\n\n| Traffic | on req/s | off req/s | on is slower by (means) | on is slower by (median round) | on CPU µs/req | off CPU µs/req | on costs more CPU by |\n|---|---|---|---|---|---|---|---|\n${summary.join("\n")}`,
  );
}

// --- 1b. the same comparison without the network: the site handler called in-process,
// alternating on/off batches, CPU time (user + system) of the process per request, which a
// shared machine disturbs less than wall time. The client address is a constant string here
// (no socket), so this part leaves out Bun's getpeername; wrk above includes it.
async function handlerCost() {
  const dir = join(work, "handler");
  const deps = await createDeps(baseConfig(dir), 0, { log: silentLogger });
  const { account } = insertUserWithAccount(deps, { email: "bench@example.com", passwordHash: "x" });
  await seedSite(deps, account.id, "analyticson", true);
  await seedSite(deps, account.id, "analyticsoff", false);
  const handle = createSiteHandler(deps);
  const BATCH = 30_000;
  const BATCHES = 6;
  console.log(
    `\n### Site handler in-process, ${BATCHES} alternating batches of ${BATCH.toLocaleString("en")} requests per side (256 client IPs), CPU µs per request\n`,
  );
  console.log("| Traffic | off median | on median | on - off | on / off | off batches | on batches |\n|---|---|---|---|---|---|---|");
  for (const mix of MIXES) {
    const headers = { "user-agent": mix.ua, referer: REFERER };
    // Flat strings, as the server's requestIP hands out: a template string built per call is a
    // rope, and every map lookup of the visit would flatten it (~0.6 µs a visit more).
    const ips = Array.from({ length: 256 }, (_, k) => `198.51.100.${k}`);
    const run = async (slug: string, n: number) => {
      const t0 = process.cpuUsage();
      for (let i = 0; i < n; i++) {
        const path = mix.paths[i % mix.paths.length]!;
        const res = await handle(
          new Request(`http://${slug}.localhost${path}`, { headers }),
          { kind: "site", label: slug },
          () => ips[(i / mix.paths.length) & 255]!,
        );
        await res.arrayBuffer();
      }
      const d = process.cpuUsage(t0);
      return (d.user + d.system) / n;
    };
    await run("analyticson", 10_000);
    await run("analyticsoff", 10_000);
    const us = { on: [] as number[], off: [] as number[] };
    for (let r = 0; r < BATCHES; r++)
      for (const side of r % 2 ? (["on", "off"] as const) : (["off", "on"] as const)) us[side].push(await run(`analytics${side}`, BATCH));
    deps.analytics.flush();
    const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
    const list = (a: number[]) => a.map((x) => x.toFixed(2)).join(", ");
    const [off, on] = [med(us.off), med(us.on)];
    console.log(
      `| ${mix.name} | ${off.toFixed(2)} | ${on.toFixed(2)} | ${(on - off).toFixed(2)} | ${((on / off - 1) * 100).toFixed(1)}% | ${list(us.off)} | ${list(us.on)} |`,
    );
  }
  deps.close();
}

// --- 2. 90-day query over 10M hits / 1,000 paths
async function ninetyDayQuery() {
  const dir = join(work, "query");
  const pier = await startPier({ ...baseConfig(dir), httpPort: 0 }, { log: silentLogger, startWorker: false });
  const deps = pier.deps;
  const { user, account } = insertUserWithAccount(deps, { email: "bench@example.com", passwordHash: "x" });
  const key = createApiKey(deps, { accountId: account.id, userId: user.id, label: "bench", kind: "owner", scope: "bucket_admin" }).key;
  const pub = await seedSite(deps, account.id, "querysite", true);
  deps.db.update(accounts).set({ timeZone: TIME_ZONE }).where(eq(accounts.id, account.id)).run();
  // The publication "existed" 181 days ago, so both the window and its previous period are available.
  deps.db
    .update(publications)
    .set({ createdAt: new Date(Date.now() - 181 * 86_400_000).toISOString() })
    .where(eq(publications.id, pub.id))
    .run();
  const HITS = 10_000_000;
  const HOURS = 90 * 24;
  const perHour = Math.round(HITS / HOURS);
  const start = Date.now() - (HOURS - 1) * 3_600_000;
  const seedStart = performance.now();
  let seeded = 0;
  for (let h = 0; h < HOURS; h++) {
    const at = start + h * 3_600_000;
    // Keyed as the recorder keys them: by the local date of the account's zone.
    const c = new HourCounts(pub.id, hourKey(at), localDay(TIME_ZONE, at));
    c.hits = perHour;
    c.hitsBots = Math.round(perHour * 0.2);
    c.hitsAssets = Math.round(perHour * 0.3);
    c.hitsNotFound = Math.round(perHour * 0.02);
    c.touch(at);
    const pages = perHour - c.hitsBots - c.hitsAssets - c.hitsNotFound;
    // The hour's cap admits 500 paths: alternate halves so every day holds all 1,000.
    for (let p = 0; p < 1000; p++) c.count("path", `/docs/page-${(p + (h % 2) * 500) % 1000}`, Math.max(1, Math.round(pages / 1000)));
    for (let r = 0; r < 50; r++) c.count("referrer", `ref${r}.example.com`, Math.round(pages / 100));
    for (let k = 0; k < 40; k++) c.count("country", `C${String.fromCharCode(65 + (k % 26))}`, Math.round(pages / 80));
    for (let b = 0; b < 10; b++) c.count("bot", `bot${b}`, Math.round(c.hitsBots / 10));
    for (let n = 0; n < 20; n++) c.count("not_found", `/missing-${n}`, Math.max(1, Math.round(c.hitsNotFound / 20)));
    for (let v = 0; v < 200; v++) c.visitors.add(`${h}-${v}`);
    writeRollups(deps, [c]);
    seeded += perHour;
  }
  pruneAnalytics(deps); // hourly rows older than 3 days go, as in production
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const url = `http://127.0.0.1:${pier.httpPort}/api/v1/publications/${pub.id}/analytics?range=90d`;
  const headers = { authorization: `Bearer ${key}` };
  // The process's first API request pays for warming up routes and auth: time one that is not analytics.
  const w0 = performance.now();
  await (await fetch(`http://127.0.0.1:${pier.httpPort}/api/v1/publications/${pub.id}`, { headers })).arrayBuffer();
  const warmMs = performance.now() - w0;
  // The first answer of a window sums the whole window (nothing cached yet); later ones the last two days.
  const c0 = performance.now();
  let body: any = await (await fetch(url, { headers })).json();
  const coldMs = performance.now() - c0;
  for (let i = 0; i < 10; i++) body = await (await fetch(url, { headers })).json();
  const times: number[] = [];
  for (let i = 0; i < 300; i++) {
    const t0 = performance.now();
    const r = await fetch(url, { headers });
    await r.arrayBuffer();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  // First requests of a window (after a restart, a new day, or for another window): the
  // closed-days cache is emptied before each, so every one sums the whole window.
  const cold: number[] = [];
  for (let i = 0; i < 50; i++) {
    forgetCachedDaysFrom(deps, "");
    const t0 = performance.now();
    const r = await fetch(url, { headers });
    await r.arrayBuffer();
    cold.push(performance.now() - t0);
  }
  cold.sort((a, b) => a - b);
  await pier.stop();
  console.log(
    `\n### 90-day query, ${(seeded / 1e6).toFixed(1)}M hits over 1,000 paths, account in ${TIME_ZONE} (seeded in ${seedSeconds.toFixed(0)} s through writeRollups)\n`,
  );
  console.log(
    `hits in answer: ${body.data.analytics.totals.hits}; paths listed: ${body.data.analytics.paths.length}; first API request of the process (a publication read): ${warmMs.toFixed(1)} ms; then the first 90d request: ${coldMs.toFixed(1)} ms`,
  );
  console.log(
    `| Requests | p50 | p99 | max |\n|---|---|---|---|\n| 300 | ${percentile(times, 50).toFixed(1)} ms | ${percentile(times, 99).toFixed(1)} ms | ${times[times.length - 1]!.toFixed(1)} ms |`,
  );
  console.log(
    `| 50 first requests (cache emptied before each) | ${percentile(cold, 50).toFixed(1)} ms | ${percentile(cold, 99).toFixed(1)} ms | ${cold[cold.length - 1]!.toFixed(1)} ms |`,
  );
}

// --- 3. a flood of 100,000 distinct 404 paths
async function flood() {
  const dir = join(work, "flood");
  const deps = await createDeps(baseConfig(dir), 0, { log: silentLogger });
  const { account } = insertUserWithAccount(deps, { email: "bench@example.com", passwordHash: "x" });
  const pub = await seedSite(deps, account.id, "floodsite", true);
  const rec = deps.analytics;
  const heap = () => {
    Bun.gc(true);
    return process.memoryUsage().heapUsed / 1048576;
  };
  const rows: string[] = [];
  const before = heap();
  for (let round = 1; round <= 3; round++) {
    const t0 = performance.now();
    for (let i = 0; i < 100_000; i++) {
      const ua = `Mozilla/5.0 (X11; Linux x86_64; rv:${i % 50}.0) Gecko/20100101 Firefox/${i % 50}.0`;
      rec.hit(
        Date.now(),
        pub.id,
        "floodsite",
        `/wp-admin/${round}-${i}-${Math.random().toString(36).slice(2)}`, // page paths of browsers: every hit is a visit
        "not_found",
        false,
        null,
        ua,
        rec.botOf(ua),
        `10.0.${(i >> 8) & 255}.${i & 255}`,
      );
    }
    const hitMs = performance.now() - t0;
    const peak = process.memoryUsage().heapUsed / 1048576;
    // The timer's flush, in steps: the longest stretch without a turn of the event loop is what
    // a site request waiting behind the flush would feel.
    let longestBlock = 0;
    let last = performance.now();
    let ticking = true;
    const tick = () => {
      const now = performance.now();
      longestBlock = Math.max(longestBlock, now - last);
      last = now;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const t1 = performance.now();
    last = t1;
    const report = await rec.flushInSteps();
    const flushMs = performance.now() - t1;
    longestBlock = Math.max(longestBlock, performance.now() - last);
    ticking = false;
    rows.push(
      `| ${round} | ${hitMs.toFixed(0)} ms | ${flushMs.toFixed(0)} ms | ${longestBlock.toFixed(0)} ms | ${report.rows} | ${peak.toFixed(1)} MiB | ${heap().toFixed(1)} MiB |`,
    );
  }
  const dims = deps.sqlite.query("SELECT count(*) AS n FROM analytics_daily_dims WHERE kind = 'not_found'").get() as { n: number };
  const hashes = deps.sqlite.query("SELECT count(*) AS n FROM analytics_visitors").get() as { n: number };
  deps.close();
  console.log(`\n### Flood: 100,000 distinct 404 paths per round (heap before: ${before.toFixed(1)} MiB)\n`);
  console.log(
    "| Round | 100k hits appended + folded | Flush | Longest event-loop block | Rows written | Heap at peak | Heap after flush |\n|---|---|---|---|---|---|---|\n" +
      rows.join("\n"),
  );
  console.log(`\nDistinct 404 rows stored for the day: ${dims.n} (cap 200 per hour + "(other)"); visitor hashes stored: ${hashes.n}`);
}

try {
  if (ONLY.includes("rps")) await requestsPerSecond();
  if (ONLY.includes("handler")) await handlerCost();
  if (ONLY.includes("query")) await ninetyDayQuery();
  if (ONLY.includes("flood")) await flood();
} finally {
  cleanup();
}
