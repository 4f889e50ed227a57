// Benchmark: `pier backup` of a large data dir (full, then incremental after 100 changed files),
// and site serving throughput while a backup runs vs without (same server, same run).
// The fixture is written through the blob store and the files table directly (filling 100,000
// files over HTTP would take longer than the backup being measured); the backup reads it exactly
// as it reads a real data dir.
// Run: ./node_modules/.bin/bun run bench/backup.ts   (BENCH_FILES, BENCH_FILE_KB, BENCH_DIR)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { newId } from "../src/core/ids";
import { hashPassword, insertUserWithAccount } from "../src/features/accounts/service";
import { createBackup, verifyBackup } from "../src/features/operations";
import { activateDeploy, writeDeploy } from "../src/features/publish/deploys";
import { createPublication } from "../src/features/publish/publications";
import { startPier } from "../src/runtime";
import { percentile } from "./lib";

const FILES = Number(process.env.BENCH_FILES ?? 20_000);
const FILE_KB = Number(process.env.BENCH_FILE_KB ?? 50);
const base = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "pier-bench-backup-"));
const dataDir = join(base, "data");
const config = { ...loadConfig({}, {}), dataDir, host: "127.0.0.1", httpPort: 0, smtpPort: null, rateLimitAnonPerMinute: 100_000_000 };
const pier = await startPier(config, { log: silentLogger, startWorker: false });
const url = `http://127.0.0.1:${pier.httpPort}`;
const { account } = insertUserWithAccount(pier.deps, { email: "bench@example.com", passwordHash: await hashPassword("bench password 123") });
const now = new Date().toISOString();
const bucketId = newId("bkt");
pier.deps.sqlite.query("INSERT INTO buckets (id, account_id, title, created_at, updated_at) VALUES (?, ?, 'bench', ?, ?)").run(bucketId, account.id, now, now);

const mib = (n: number) => n / 1048576;
const fill = new Uint8Array(FILE_KB * 1024);
async function writeFile(i: number, salt: string): Promise<void> {
  const head = new TextEncoder().encode(`file ${i} ${salt} `);
  fill.set(head, 0);
  const info = await pier.deps.blobs.putBytes(fill);
  pier.deps.sqlite
    .query(
      `INSERT INTO files (id, bucket_id, path, sha256, size, content_type, md5, version_count, bucket_version, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'application/octet-stream', ?, 1, 1, ?, ?)
       ON CONFLICT (bucket_id, path) DO UPDATE SET sha256 = excluded.sha256, md5 = excluded.md5, size = excluded.size`,
    )
    .run(newId("file" as never), bucketId, `dir${i % 100}/f${i}.bin`, info.sha256, info.size, info.md5, now, now);
}

let t0 = performance.now();
for (let i = 0; i < FILES; i++) await writeFile(i, "v1");
console.log(
  `fixture: ${FILES} files of ${FILE_KB} KiB (${mib(FILES * FILE_KB * 1024).toFixed(0)} MiB) written in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);

// A small site to measure serving throughput.
const pub = createPublication(pier.deps, { bucketId, accountId: account.id, kind: "main", slug: "bench-backup" });
const d = await writeDeploy(pier.deps, pub.id, [{ path: "index.html", bytes: "<h1>" + "x".repeat(4000) + "</h1>" }]);
activateDeploy(pier.deps, pub.id, d.deployId);
const host = `bench-backup.${pier.deps.urls.sitesDomain}`;

/** Requests/s and p99 of 8 concurrent clients for `ms` (or until `until` resolves). */
async function serve(until: Promise<unknown> | number): Promise<{ rps: number; p99: number }> {
  let done = false;
  const stopAt = typeof until === "number" ? performance.now() + until : Infinity;
  if (typeof until !== "number") void until.then(() => (done = true));
  const lat: number[] = [];
  const start = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (!done && performance.now() < stopAt) {
        const s = performance.now();
        const r = await fetch(`${url}/`, { headers: { host } });
        await r.arrayBuffer();
        lat.push(performance.now() - s);
      }
    }),
  );
  lat.sort((a, b) => a - b);
  return { rps: lat.length / ((performance.now() - start) / 1000), p99: percentile(lat, 99) };
}

await serve(2000); // warm-up
const idle = await serve(5000);
const folder = join(base, "backup");
t0 = performance.now();
const fullRun = createBackup({ dataDir, to: folder, includeSecretKey: false });
const during = await serve(fullRun);
const full = await fullRun;
const fullS = (performance.now() - t0) / 1000;

for (let i = 0; i < 100; i++) await writeFile(i * Math.floor(FILES / 100), "v2");
t0 = performance.now();
const inc = await createBackup({ dataDir, to: folder, includeSecretKey: false });
const incS = (performance.now() - t0) / 1000;
t0 = performance.now();
const v = await verifyBackup(folder);
const verifyS = (performance.now() - t0) / 1000;

const total = full.manifest.blobs.bytes + full.manifest.database.size;
console.log(`\n| Run | Files | Copied | Time | Throughput |\n|---|---|---|---|---|`);
console.log(
  `| full | ${full.manifest.counts.files} | ${mib(full.manifest.blobs.copied_bytes).toFixed(0)} MiB blobs + ${mib(full.manifest.database.size).toFixed(1)} MiB db | ${fullS.toFixed(1)} s | ${(mib(total) / fullS).toFixed(0)} MiB/s |`,
);
console.log(
  `| incremental (100 changed) | ${inc.manifest.counts.files} | ${inc.manifest.blobs.copied} blobs, ${mib(inc.manifest.blobs.copied_bytes).toFixed(1)} MiB | ${incS.toFixed(1)} s | - |`,
);
console.log(
  `| verify | ${v.blobs_checked} blobs | ${mib(v.bytes_checked).toFixed(0)} MiB hashed | ${verifyS.toFixed(1)} s | ${(mib(v.bytes_checked) / verifyS).toFixed(0)} MiB/s |`,
);
console.log(`\n| Site serving (8 clients, 4 KB page) | req/s | p99 ms |\n|---|---|---|`);
console.log(`| no backup running | ${idle.rps.toFixed(0)} | ${idle.p99.toFixed(1)} |`);
console.log(`| during the full backup | ${during.rps.toFixed(0)} | ${during.p99.toFixed(1)} |`);
await pier.stop();
rmSync(base, { recursive: true, force: true });
