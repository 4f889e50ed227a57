// Built-in forms, two costs in one run (in-process Pier, loopback HTTP, temp data dir):
//  1. page serving with vs without hosted forms: the same 4 KB index.html on a site with two
//     hosted forms (rewritten per request) and on one without (sendfile path); requests/s and
//     p50/p99 over HTTP with 16 concurrent clients, alternating rounds;
//  2. submissions/s: JSON posts of the contact form, all checks on (same origin, rate limits,
//     fill timer verified, fields, the altcha proof of work verified and spent, quota, sealing,
//     one SQLite transaction each), spread over 300 sites so the per-form rate limit (60/min) is
//     not what is measured. Each post needs its own solved challenge, so a pool of them is
//     fetched from the sites and solved first (not timed), then posted by 16 clients;
//  3. challenges/s: GET /_pier/form/challenge (a signed challenge per request).
// Run: ./node_modules/.bin/bun bench/forms.ts [--duration 5] [--rounds 3] [--pool 600]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { buckets } from "../src/db/schema";
import { insertUserWithAccount } from "../src/features/accounts/service";
import { startedToken } from "../src/features/forms";
import { activateDeploy, writeDeploy } from "../src/features/publish/deploys";
import { createPublication } from "../src/features/publish/publications";
import { startPier } from "../src/runtime";
import { percentile } from "./lib";
import { solveChallenge, type Challenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/pbkdf2";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : process.argv[i + 1]!;
};
const DURATION = Number(arg("duration", "5"));
const ROUNDS = Number(arg("rounds", "3"));
const CONCURRENCY = 16;
const SITES = 300;
const POOL = Number(arg("pool", "600"));

const dir = mkdtempSync(join(tmpdir(), "pier-bench-forms-"));
const pier = await startPier(
  {
    ...loadConfig({}, {}),
    dataDir: dir,
    secretKey: "bench-secret-key-bench-secret-key-bench",
    smtpPort: null,
    httpsPort: null,
    host: "127.0.0.1",
    httpPort: 0,
    trustProxy: true,
  },
  { log: silentLogger, startWorker: false },
);
const deps = pier.deps;
const url = `http://127.0.0.1:${pier.httpPort}`;
const { account } = insertUserWithAccount(deps, { email: "bench@example.com", passwordHash: "x", plan: "owner" });
const html = "<!doctype html><html><head><title>Bench</title></head><body>" + "<p>Lorem ipsum dolor sit amet.</p>\n".repeat(110) + "</body></html>";
const FORMS = { publication_forms: { forms: [{ name: "contact" }, { name: "waitlist" }] } };

async function site(slug: string, forms: boolean) {
  const now = new Date().toISOString();
  const bucket = deps.db
    .insert(buckets)
    .values({ id: `bkt_${slug}`, accountId: account.id, title: slug, metadata: forms ? FORMS : {}, createdAt: now, updatedAt: now })
    .returning()
    .get();
  const pub = createPublication(deps, { bucketId: bucket.id, accountId: account.id, kind: "main", slug });
  const d = await writeDeploy(deps, pub.id, [{ path: "index.html", bytes: html }]);
  activateDeploy(deps, pub.id, d.deployId);
  return { pub, host: `${slug}.${deps.urls.sitesDomain}` };
}

/** Run `one` from CONCURRENCY loops for DURATION seconds: requests/s and latency percentiles. */
async function load(one: (i: number) => Promise<Response>, expect: number) {
  const until = performance.now() + DURATION * 1000;
  const times: number[] = [];
  let bad = 0;
  let n = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const r = await one(n++);
        await r.arrayBuffer();
        times.push(performance.now() - t0);
        if (r.status !== expect) bad++;
      }
    }),
  );
  times.sort((a, b) => a - b);
  return { rps: Math.round(times.length / DURATION), p50: percentile(times, 50).toFixed(2), p99: percentile(times, 99).toFixed(2), bad };
}

const withForms = await site("withforms", true);
const without = await site("withoutforms", false);
const injected = await (await fetch(`${url}/`, { headers: { host: withForms.host } })).text();
console.log(`page: ${html.length} bytes plain, ${injected.length} bytes with two hosted forms`);
console.log("| round | site | req/s | p50 ms | p99 ms | non-200 |\n|---|---|---|---|---|---|");
for (let round = 1; round <= ROUNDS; round++) {
  for (const [name, s] of [
    ["without forms", without],
    ["with forms", withForms],
  ] as const) {
    const r = await load(() => fetch(`${url}/`, { headers: { host: s.host, "accept-encoding": "identity" } }), 200);
    console.log(`| ${round} | ${name} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.bad} |`);
  }
}

const targets: Awaited<ReturnType<typeof site>>[] = [];
for (let i = 0; i < SITES; i++) targets.push(await site(`formsite${i}`, true));
deps.clock.now = () => new Date(Date.now() + 10_000); // every timer below is older than the minimum fill time
const tokens = targets.map((s) => startedToken(deps, s.pub.id, "contact"));
deps.clock.now = () => new Date(Date.now() + 20_000);
// Solve the pool first: each post spends one solution.
const solveStart = performance.now();
const solved: string[] = [];
for (let i = 0; i < POOL; i++) {
  const s = targets[i % SITES]!;
  const challenge = (await (await fetch(`${url}/_pier/form/challenge`, { headers: { host: s.host } })).json()) as Challenge;
  const solution = await solveChallenge({ challenge, deriveKey });
  solved.push(Buffer.from(JSON.stringify({ challenge, solution })).toString("base64"));
}
console.log(`\nsolved ${POOL} challenges in ${((performance.now() - solveStart) / 1000).toFixed(1)} s (client side, not timed below)`);
let next = 0;
const times: number[] = [];
let bad = 0;
const postStart = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < POOL) {
      const i = next++;
      const k = i % SITES;
      const s = targets[k]!;
      const t0 = performance.now();
      const r = await fetch(`${url}/_pier/form/contact`, {
        method: "POST",
        body: JSON.stringify({ email: `v${i}@example.com`, message: "Hello from the bench", _pier_started: tokens[k], altcha: solved[i] }),
        headers: {
          host: s.host,
          origin: `http://${s.host}`,
          "content-type": "application/json",
          accept: "application/json",
          "x-forwarded-for": `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
        },
      });
      await r.arrayBuffer();
      times.push(performance.now() - t0);
      if (r.status !== 201) bad++;
    }
  }),
);
const postSeconds = (performance.now() - postStart) / 1000;
times.sort((a, b) => a - b);
console.log(
  `submissions with the challenge verified: ${Math.round(POOL / postSeconds)}/s (${POOL} posts in ${postSeconds.toFixed(2)} s, p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms, ${bad} not 201)`,
);
const challenges = await load((i) => fetch(`${url}/_pier/form/challenge`, { headers: { host: targets[i % SITES]!.host } }), 200);
console.log(`challenges issued: ${challenges.rps}/s (p50 ${challenges.p50} ms, p99 ${challenges.p99} ms, ${challenges.bad} not 200)`);
const stored = deps.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM form_submissions").get()!.n;
console.log(`stored: ${stored}`);

await pier.stop();
rmSync(dir, { recursive: true, force: true });
