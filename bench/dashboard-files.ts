// Benchmark: server-side render time of the dashboard's Files tab for a bucket of 100,000 files,
// over HTTP with a signed-in session, against the JSON API listing the same page in the same run.
// The bucket: `flat/` holds 50,000 files in one folder; `tree/dNN/sNN/` holds 50 × 10 folders of
// 100 files. Files are seeded straight through commitChanges (as bench/files-list.ts does):
// listing reads only the `files` table, so the blobs need not exist.
// Run: ./node_modules/.bin/bun run bench/dashboard-files.ts   (BENCH_RUNS=50 by default)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { createApiKey } from "../src/features/accounts/keys";
import { hashPassword, insertUserWithAccount } from "../src/features/accounts/service";
import { createSession } from "../src/features/accounts/sessions";
import { commitChanges, type Change } from "../src/features/files/commit";
import { sessionCookieName } from "../src/http/session-cookie";
import { startPier } from "../src/runtime";
import { percentile } from "./lib";

const FLAT = 50_000;
const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const dataDir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "pier-bench-"));
const config = { ...loadConfig({}, {}), dataDir, host: "127.0.0.1", httpPort: 0, smtpPort: null, rateLimitPerMinute: 10_000_000 };
const pier = await startPier(config, { log: silentLogger, startWorker: false });
const url = `http://127.0.0.1:${pier.httpPort}`;
const { user, account } = insertUserWithAccount(pier.deps, { email: "bench@example.com", passwordHash: await hashPassword("bench password 123") });
const key = createApiKey(pier.deps, { accountId: account.id, userId: user.id, label: "bench", kind: "owner", scope: "bucket_admin" }).key;
const session = createSession(pier.deps, user.id, { remember: false });
const cookie = `${sessionCookieName(pier.deps)}=${session.token}`;
const created = await fetch(`${url}/api/v1/buckets`, {
  method: "POST",
  headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  body: JSON.stringify({ bucket: { title: "bench dashboard files" } }),
});
const bucket = ((await created.json()) as { data: { bucket: { id: string } } }).data.bucket.id;

const pad = (n: number, w: number) => String(n).padStart(w, "0");
const allPaths: string[] = [];
for (let i = 0; i < FLAT; i++) allPaths.push(`flat/file-${pad(i, 5)}.txt`);
for (let d = 0; d < 50; d++) for (let s = 0; s < 10; s++) for (let f = 0; f < 100; f++) allPaths.push(`tree/d${pad(d, 2)}/s${pad(s, 2)}/file-${pad(f, 3)}.txt`);
const seed0 = performance.now();
for (let v = 0; v < allPaths.length; v += 10_000) {
  const changes: Change[] = allPaths.slice(v, v + 10_000).map((path, j) => ({
    path,
    blob: { sha256: (v + j).toString(16).padStart(64, "0"), size: 100 + ((v + j) % 1000), md5: "1B2M2Y8AsgTpgAmY7PhCfg==", contentType: "text/plain" },
  }));
  commitChanges(pier.deps, { kind: "system", name: "bench" }, bucket, changes, { kind: "write" });
}
const seedSeconds = (performance.now() - seed0) / 1000;

interface Case {
  name: string;
  /** The Files tab page (100 entries a page). */
  dashboard: string;
  /** The JSON API's list of the same 100 files (offset paging, `q` path filter). */
  api: string;
  /** Rows the dashboard page must show (checked once). */
  rows: number;
}

const tab = (query: Record<string, string>) => `${url}/dashboard/buckets/${bucket}/files${Object.keys(query).length ? `?${new URLSearchParams(query)}` : ""}`;
const list = (query: Record<string, string>) => `${url}/api/v1/buckets/${bucket}/files?${new URLSearchParams({ limit: "100", ...query })}`;
const cases: Case[] = [
  { name: "root (first page of the tab: 2 folders)", dashboard: tab({}), api: list({}), rows: 2 },
  { name: "tree/ (50 folders of 10,000 files each skipped by one seek)", dashboard: tab({ prefix: "tree/" }), api: list({ q: "tree/" }), rows: 50 },
  { name: "deep folder tree/d25/s05/ (100 files)", dashboard: tab({ prefix: "tree/d25/s05/" }), api: list({ q: "tree/d25/s05/" }), rows: 100 },
  { name: "flat/ first page (of 50,000)", dashboard: tab({ prefix: "flat/" }), api: list({ q: "flat/" }), rows: 100 },
  {
    name: "flat/ last page (cursor vs offset 49,900)",
    dashboard: tab({ prefix: "flat/", after: `flat/file-${pad(FLAT - 101, 5)}.txt` }),
    api: list({ q: "flat/", offset: String(FLAT - 100) }),
    rows: 100,
  },
];

async function time(target: string, headers: Record<string, string>): Promise<{ ms: number; body: string }> {
  const t0 = performance.now();
  const res = await fetch(target, { headers, redirect: "manual" });
  const body = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`${target}: ${res.status} ${body.slice(0, 200)}`);
  return { ms, body };
}

async function measure(target: string, headers: Record<string, string>) {
  for (let i = 0; i < 5; i++) await time(target, headers);
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push((await time(target, headers)).ms);
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

console.log(`Seeded ${allPaths.length.toLocaleString("en")} files in ${seedSeconds.toFixed(1)} s; ${RUNS} timed requests per row after 5 warm-up.\n`);
console.log("| page | Files tab p50 ms | p99 ms | JSON API p50 ms | p99 ms |");
console.log("|---|---|---|---|---|");
for (const c of cases) {
  const page = await time(c.dashboard, { cookie });
  const shown = (page.body.match(/<tr><td class="wrap">/g) ?? []).length;
  if (shown !== c.rows) throw new Error(`${c.name}: the page shows ${shown} rows, expected ${c.rows}`);
  const d = await measure(c.dashboard, { cookie });
  const a = await measure(c.api, { authorization: `Bearer ${key}` });
  console.log(`| ${c.name} | ${d.p50.toFixed(1)} | ${d.p99.toFixed(1)} | ${a.p50.toFixed(1)} | ${a.p99.toFixed(1)} |`);
}
await pier.stop();
rmSync(dataDir, { recursive: true, force: true });
