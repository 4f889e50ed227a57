// Benchmark (c): list a bucket of 100,000 files page by page over HTTP (limit/offset), at the
// maximum page size (1000) and the default (100); p50/p99 per page.
// Files are seeded straight through commitChanges (10 versions of 10,000 paths): listing only
// reads the `files` table, so the blobs themselves need not exist.
// Run: ./node_modules/.bin/bun run bench/files-list.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { createApiKey } from "../src/features/accounts/keys";
import { hashPassword, insertUserWithAccount } from "../src/features/accounts/service";
import { commitChanges, type Change } from "../src/features/files/commit";
import { startPier } from "../src/runtime";
import { percentile } from "./lib";

const FILES = Number(process.env.BENCH_FILES ?? 100_000);
const dataDir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "pier-bench-"));
const config = { ...loadConfig({}, {}), dataDir, host: "127.0.0.1", httpPort: 0, smtpPort: null, rateLimitPerMinute: 10_000_000 };
const pier = await startPier(config, { log: silentLogger, startWorker: false });
const url = `http://127.0.0.1:${pier.httpPort}`;
const { user, account } = insertUserWithAccount(pier.deps, { email: "bench@example.com", passwordHash: await hashPassword("bench password 123") });
const key = createApiKey(pier.deps, { accountId: account.id, userId: user.id, label: "bench", kind: "owner", scope: "bucket_admin" }).key;
const bucket = (
  (await (
    await fetch(`${url}/api/v1/buckets`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ bucket: { title: "bench list" } }),
    })
  ).json()) as any
).data.bucket.id;

const seed0 = performance.now();
for (let v = 0; v < FILES; v += 10_000) {
  const changes: Change[] = [];
  for (let i = v; i < Math.min(FILES, v + 10_000); i++) {
    const hex = i.toString(16).padStart(64, "0");
    changes.push({
      path: `archive/${String(i % 100).padStart(2, "0")}/file-${i}.txt`,
      blob: { sha256: hex, size: 100 + (i % 1000), md5: "1B2M2Y8AsgTpgAmY7PhCfg==", contentType: "text/plain" },
    });
  }
  commitChanges(pier.deps, { kind: "system", name: "bench" }, bucket, changes, { kind: "write" });
}
const seedSeconds = (performance.now() - seed0) / 1000;

async function walk(limit: number) {
  const times: number[] = [];
  let offset: number | null = 0;
  let seen = 0;
  while (offset !== null) {
    const t0 = performance.now();
    const res = await fetch(`${url}/api/v1/buckets/${bucket}/files?limit=${limit}&offset=${offset}`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await res.json()) as any;
    times.push(performance.now() - t0);
    seen += body.data.files.length;
    offset = body.data.pagination.next_offset;
  }
  if (seen !== FILES) throw new Error(`listed ${seen} of ${FILES}`);
  const sorted = [...times].sort((a, b) => a - b);
  return { pages: times.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1)!, first: times[0]!, last: times.at(-1)! };
}

console.log(`Seeded ${FILES} files in ${seedSeconds.toFixed(1)} s (10 versions).\n`);
console.log("| page size | pages | p50 ms | p99 ms | max ms | first page ms | last page ms |");
console.log("|---|---|---|---|---|---|---|");
for (const limit of [1000, 100]) {
  const r = await walk(limit);
  console.log(`| ${limit} | ${r.pages} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(2)} | ${r.first.toFixed(2)} | ${r.last.toFixed(2)} |`);
}
await pier.stop();
rmSync(dataDir, { recursive: true, force: true });
