// Site rules at scale: a site with 10,000 `_redirects` rules (9,900 static, 100 dynamic, half of
// those with a placeholder first segment, the matcher's worst bucket) and 200 `_headers` blocks,
// beside the same site without rules, in the same `pier serve` process, same run.
//  1. requests/s (wrk, alternating rounds) on a path that matches no rule (`/`, a 4 KB page)
//     vs the site without rules on `/`; and on one that matches the last rule (a 301) vs the
//     site without rules answering its own 301 (`/dir` -> `/dir/`): the same kind of answer
//     (status, Location, no body), so the difference is what matching 10,000 rules costs;
//  2. the site handler's µs per request in-process (steadier than wrk on a shared machine);
//  3. the publish-time cost: compiling the rules, and writeDeploy with vs without them; and
//     building the matcher when a serving process first loads the deploy;
//  4. the matcher alone on the last rule, with and without remembered outcomes, on one repeated
//     path and on a flood of distinct paths (each URL a fresh string, as in the server).
// Run: ./node_modules/.bin/bun bench/site-rules.ts [--duration 6] [--rounds 2] [--redirects-only]
// (--redirects-only leaves the `_headers` file out: its `/*` block adds a header to every answer,
// so with it the rule's 301 is a bigger answer than the rule-less site's.)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { loadConfig } from "../src/config";
import type { Deps } from "../src/core/context";
import { silentLogger } from "../src/core/log";
import { buckets, publications } from "../src/db/schema";
import { insertUserWithAccount } from "../src/features/accounts/service";
import { activateDeploy, writeDeploy } from "../src/features/publish/deploys";
import { createPublication } from "../src/features/publish/publications";
import { SiteRules } from "../src/features/publish/rules/match";
import { compileRules } from "../src/features/publish/rules/syntax";
import { parseRequestPath, splitUrl } from "../src/sites/paths";
import { createDeps } from "../src/runtime";
import { createSiteHandler } from "../src/sites/server";
import { hasWrk, serveDataDir, wrk } from "./wrk";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : process.argv[i + 1]!;
};
const DURATION = Number(arg("duration", "6"));
const ROUNDS = Number(arg("rounds", "2"));
const REDIRECTS_ONLY = process.argv.includes("--redirects-only");
const SECRET = "bench-secret-key-bench-secret-key-bench-secret";
const work = mkdtempSync(join(tmpdir(), "pier-bench-rules-"));
const baseConfig = (dir: string) => ({ ...loadConfig({}, {}), dataDir: dir, secretKey: SECRET, smtpPort: null, httpsPort: null, host: "127.0.0.1" });

const lines: string[] = [];
for (let i = 0; i < 9_900; i++) lines.push(`/old/section-${i % 50}/page-${i} /new/page-${i} 301`);
for (let i = 0; i < 49; i++) lines.push(`/:lang/guide-${i}/* /guide-${i}/:splat 301`);
for (let i = 0; i < 50; i++) lines.push(`/blog-${i}/:year/:slug /posts/:year/:slug 301`);
lines.push("/:lang/last/:id /final/:id 301");
const REDIRECTS = lines.join("\n") + "\n";
const HEADERS =
  Array.from({ length: 200 }, (_, i) => `/assets-${i}/*\n  Cache-Control: public, max-age=31536000, immutable\n`).join("") + "/*\n  X-Frame-Options: DENY\n";
const html = "<!doctype html><title>Bench</title>" + "<p>Lorem ipsum dolor sit amet.</p>\n".repeat(110);

async function seedSite(deps: Deps, accountId: string, slug: string, withRules: boolean) {
  const now = new Date().toISOString();
  const bucket = deps.db
    .insert(buckets)
    .values({ id: `bkt_${slug}`, accountId, title: slug, createdAt: now, updatedAt: now })
    .returning()
    .get();
  const pub = createPublication(deps, { bucketId: bucket.id, accountId, kind: "main", slug });
  const files = [
    { path: "index.html", bytes: html },
    { path: "dir/index.html", bytes: html },
    ...(withRules ? [{ path: "_redirects", bytes: REDIRECTS }, ...(REDIRECTS_ONLY ? [] : [{ path: "_headers", bytes: HEADERS }])] : []),
  ];
  const t0 = performance.now();
  const d = await writeDeploy(deps, pub.id, files);
  const ms = performance.now() - t0;
  activateDeploy(deps, pub.id, d.deployId);
  deps.db.update(publications).set({ trackingEnabled: false }).where(eq(publications.id, pub.id)).run();
  return ms;
}

const dir = join(work, "data");
const deps = await createDeps(baseConfig(dir), 0, { log: silentLogger });
const { account } = insertUserWithAccount(deps, { email: "bench@example.com", passwordHash: "x" });
const plainMs = await seedSite(deps, account.id, "norules-site", false);
const rulesMs = await seedSite(deps, account.id, "rules-site1", true);

// --- 3. publish-time cost
const compileTimes: number[] = [];
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  compileRules(REDIRECTS, HEADERS);
  compileTimes.push(performance.now() - t0);
}
compileTimes.sort((a, b) => a - b);
const compiled = compileRules(REDIRECTS, HEADERS).rules;
const loadTimes: number[] = [];
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  new SiteRules(compiled);
  loadTimes.push(performance.now() - t0);
}
loadTimes.sort((a, b) => a - b);
console.log(
  `\n### Publish-time cost (${lines.length} rules, ${(REDIRECTS.length / 1024).toFixed(0)} KB _redirects${REDIRECTS_ONLY ? ", no _headers" : ", 201 header blocks"})\n`,
);
console.log(
  `compileRules: median ${compileTimes[2]!.toFixed(1)} ms (5 runs); writeDeploy of a 1-file site: ${plainMs.toFixed(0)} ms without rules, ${rulesMs.toFixed(0)} ms with them; ` +
    `the matcher built when a process loads the deploy: median ${loadTimes[2]!.toFixed(1)} ms`,
);

// --- 4. the matcher alone, remembered outcomes on and off
{
  const matchers = { on: new SiteRules(compiled), off: new SiteRules(compiled, { rememberOutcomes: false }) };
  const N = 100_000;
  // CPU ns per lookup above the same loop without the lookup (building the request URL and path).
  const cost = (which: "on" | "off" | "none", flood: boolean) => {
    const r = which === "none" ? null : matchers[which];
    const t0 = process.cpuUsage();
    for (let i = 0; i < N; i++) {
      const url = new Request(flood ? `http://x/en/last/${i}-${performance.now()}` : "http://x/en/last/42").url;
      const parsed = parseRequestPath(splitUrl(url).pathname);
      if (r !== null && parsed.ok && r.redirect(parsed.path, "", false) === null) throw new Error("the last rule must match");
    }
    const d = process.cpuUsage(t0);
    return ((d.user + d.system) * 1000) / N;
  };
  const rows = { hotOn: [] as number[], hotOff: [] as number[], floodOn: [] as number[], floodOff: [] as number[] };
  for (let r = 0; r < 9; r++) {
    const base = cost("none", false);
    const floodBase = cost("none", true);
    rows.hotOn.push(cost("on", false) - base);
    rows.hotOff.push(cost("off", false) - base);
    rows.floodOn.push(cost("on", true) - floodBase);
    rows.floodOff.push(cost("off", true) - floodBase);
  }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!.toFixed(0);
  console.log("\n### The matcher alone, the last rule, CPU ns per lookup (median of 9 × 100,000)\n");
  console.log("| Paths | remembered outcomes on | off |\n|---|---|---|");
  console.log(`| one path, repeated (\`/en/last/42\`) | ${median(rows.hotOn)} | ${median(rows.hotOff)} |`);
  console.log(`| a flood of distinct paths (\`/en/last/<n>\`) | ${median(rows.floodOn)} | ${median(rows.floodOff)} |`);
  console.log(`(held after the flood: ${matchers.on.outcomesHeld} outcomes, bound 4,096)`);
}

// --- 2. in-process handler cost
{
  const handle = createSiteHandler(deps);
  // CPU time of this process (user + system), not wall time: on a shared machine the wall clock
  // also counts the time other processes held the CPU.
  const run = async (label: string, path: string, n: number) => {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const r = await handle(new Request(`http://x${path}`), { kind: "site", label });
      if (i === 0 && path !== "/" && r.status !== 301) throw new Error(`expected 301 on ${path}, got ${r.status}`);
    }
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / n;
  };
  for (const [l, p] of [
    ["norules-site", "/"],
    ["norules-site", "/dir"],
    ["rules-site1", "/"],
    ["rules-site1", "/en/last/42"],
  ] as const)
    await run(l, p, 2_000); // warm-up
  const sums = { plain: 0, plainRedirect: 0, nomatch: 0, last: 0 };
  for (let r = 0; r < 5; r++) {
    sums.plain += await run("norules-site", "/", 20_000);
    sums.plainRedirect += await run("norules-site", "/dir", 20_000);
    sums.nomatch += await run("rules-site1", "/", 20_000);
    sums.last += await run("rules-site1", "/en/last/42", 20_000);
  }
  console.log("\n### Site handler in-process, CPU µs per request (mean of 5 × 20,000)\n");
  console.log("| Site | Path | µs/request |\n|---|---|---|");
  console.log(`| no rules | \`/\` | ${(sums.plain / 5).toFixed(2)} |`);
  console.log(`| no rules | \`/dir\` (301 to \`/dir/\`) | ${(sums.plainRedirect / 5).toFixed(2)} |`);
  console.log(`| 10,000 rules | \`/\` (no rule matches) | ${(sums.nomatch / 5).toFixed(2)} |`);
  console.log(`| 10,000 rules | \`/en/last/42\` (the last rule, 301) | ${(sums.last / 5).toFixed(2)} |`);
}
deps.close();

// --- 1. requests/s over HTTP
if (!hasWrk()) console.log("rps: wrk missing (apt-get install -y wrk)");
else {
  const server = await serveDataDir(dir, SECRET);
  const run = (slug: string, path: string) => wrk({ port: server.port, slug, path, durationS: DURATION }).rps;
  const cases = [
    ["norules-site", "/", "no rules, `/`", 0],
    ["rules-site1", "/", "10,000 rules, `/` (no rule matches)", 0],
    ["norules-site", "/dir", "no rules, `/dir` (its own 301 to `/dir/`)", 2],
    ["rules-site1", "/en/last/42", "10,000 rules, last rule (301)", 2],
  ] as const;
  run("norules-site", "/"); // warm-up
  const sums = cases.map(() => 0);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...cases.keys()].reverse() : [...cases.keys()];
    for (const i of order) sums[i]! += run(cases[i]![0], cases[i]![1]);
  }
  await server.stop();
  console.log(`\n### Requests/s (wrk -t2 -c50 -d${DURATION}s, mean of ${ROUNDS} alternating rounds)\n`);
  console.log("| Case | Requests/s | vs the same answer without rules |\n|---|---|---|");
  cases.forEach((c, i) => {
    const base = sums[c[3]]!;
    console.log(`| ${c[2]} | ${(sums[i]! / ROUNDS).toFixed(0)} | ${i === c[3] ? "(baseline)" : `${(((sums[i]! - base) / base) * 100).toFixed(1)}%`} |`);
  });
}
rmSync(work, { recursive: true, force: true });
