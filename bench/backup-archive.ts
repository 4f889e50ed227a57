// Benchmark: `pier backup --to FILE.tar.gz` (and .tar) of a 1 GB data dir, then `pier backup
// verify FILE` and `pier restore FILE`: time, and the process's peak RSS during each phase
// (sampled every 50 ms) to show that archives are streamed, not held in memory.
// Run: ./node_modules/.bin/bun run bench/backup-archive.ts   (BENCH_ARCHIVE_MB, BENCH_DIR)
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { newId } from "../src/core/ids";
import { hashPassword, insertUserWithAccount } from "../src/features/accounts/service";
import { createBackup, restoreBackup, verifyBackup } from "../src/features/operations";
import { startPier } from "../src/runtime";

const TOTAL_MB = Number(process.env.BENCH_ARCHIVE_MB ?? 1024);
const BLOB_MB = 16;
const base = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "pier-bench-archive-"));
const dataDir = join(base, "data");
const config = { ...loadConfig({}, {}), dataDir, host: "127.0.0.1", httpPort: 0, smtpPort: null };
const pier = await startPier(config, { log: silentLogger, startWorker: false });
const { account } = insertUserWithAccount(pier.deps, { email: "bench@example.com", passwordHash: await hashPassword("bench password 123") });
const now = new Date().toISOString();
const bucketId = newId("bkt");
pier.deps.sqlite.query("INSERT INTO buckets (id, account_id, title, created_at, updated_at) VALUES (?, ?, 'bench', ?, ?)").run(bucketId, account.id, now, now);
// Pseudo-random content (gzip cannot shrink it much): the archive is as large as the data.
const blob = new Uint8Array(BLOB_MB << 20);
let x = 12345;
for (let i = 0; i < blob.length; i += 4) {
  x = (x * 1103515245 + 12345) >>> 0;
  blob[i] = x & 0xff;
  blob[i + 1] = (x >> 8) & 0xff;
}
for (let i = 0; i < TOTAL_MB / BLOB_MB; i++) {
  blob[0] = i & 0xff;
  blob[1] = i >> 8;
  const info = await pier.deps.blobs.putBytes(blob);
  pier.deps.sqlite
    .query(
      `INSERT INTO files (id, bucket_id, path, sha256, size, content_type, md5, version_count, bucket_version, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'application/octet-stream', ?, 1, 1, ?, ?)`,
    )
    .run(newId("file" as never), bucketId, `big/${i}.bin`, info.sha256, info.size, info.md5, now, now);
}
await pier.stop();
Bun.gc(true);

const mib = (n: number) => (n / 1048576).toFixed(0);
async function phase(name: string, fn: () => Promise<unknown>): Promise<void> {
  Bun.gc(true);
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const t0 = performance.now();
  await fn();
  clearInterval(timer);
  console.log(`| ${name} | ${((performance.now() - t0) / 1000).toFixed(1)} s | ${mib(before)} MiB | ${mib(peak)} MiB |`);
}

console.log(`data dir: ${TOTAL_MB} MiB in ${TOTAL_MB / BLOB_MB} blobs of ${BLOB_MB} MiB\n`);
console.log("| Phase | Time | RSS before | Peak RSS |\n|---|---|---|---|");
for (const name of ["backup.tar.gz", "backup.tar"]) {
  const file = join(base, name);
  await phase(`backup --to ${name}`, () => createBackup({ dataDir, to: file, includeSecretKey: false }));
  console.log(`|  (archive ${mib(statSync(file).size)} MiB) | | | |`);
  await phase(`backup verify ${name}`, async () => {
    const v = await verifyBackup(file);
    if (v.problems.length) throw new Error(v.problems.join("; "));
  });
  await phase(`restore ${name}`, () => restoreBackup({ from: file, dataDir: join(base, `restored-${name}`), force: false }));
  rmSync(join(base, `restored-${name}`), { recursive: true, force: true });
  rmSync(file, { force: true });
}
rmSync(base, { recursive: true, force: true });
