// Benchmark (a): one 1 GiB PUT to a signed storage URL, beside `dd` writing the same size to
// the same disk in the same run; peak RSS of the server process while it streams.
// Run: ./node_modules/.bin/bun run bench/files-put.ts   (BENCH_DIR=/path picks the disk)
import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { api, rssMiB, startServer } from "./lib";

const SIZE = Number(process.env.BENCH_BYTES ?? 1024 ** 3);
const CHUNK = 1024 * 1024;
const chunk = new Uint8Array(CHUNK).map((_, i) => (i * 7 + 3) & 255);

const s = await startServer();
const ddTarget = join(s.dataDir, "dd.bin");
const dd = Bun.spawnSync(["dd", "if=/dev/zero", `of=${ddTarget}`, `bs=${CHUNK}`, `count=${SIZE / CHUNK}`, "conv=fsync"], { stderr: "pipe" });
const ddLine = dd.stderr.toString().trim().split("\n").pop()!;
const ddSeconds = Number(/, ([\d.]+) s,/.exec(ddLine)?.[1]);
rmSync(ddTarget);

const md5 = createHash("md5");
const sha = createHash("sha256");
for (let sent = 0; sent < SIZE; sent += CHUNK) {
  md5.update(chunk);
  sha.update(chunk);
}
const bucket = (await api(s, "POST", "/api/v1/buckets", { bucket: { title: "bench put" } })).data.bucket.id;
const d = (
  await api(s, "POST", "/api/v1/direct_uploads", {
    bucket_id: bucket,
    path: "big.bin",
    blob: { byte_size: SIZE, checksum: md5.digest("base64"), sha256: sha.digest("hex"), content_type: "application/octet-stream" },
  })
).data;

const idleRss = rssMiB(s.proc.pid);
let peak = idleRss;
const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(s.proc.pid))), 50);
let sent = 0;
const body = new ReadableStream<Uint8Array>({
  pull(c) {
    if (sent >= SIZE) return c.close();
    c.enqueue(chunk);
    sent += CHUNK;
  },
});
const t0 = performance.now();
const res = await fetch(d.upload.url, { method: "PUT", headers: d.upload.headers, body });
const seconds = (performance.now() - t0) / 1000;
clearInterval(sampler);
if (res.status !== 200) throw new Error(`PUT ${res.status} ${await res.text()}`);
await api(s, "POST", `/api/v1/buckets/${bucket}/files`, { signed_blob_id: d.signed_blob_id });
await s.stop();
rmSync(s.dataDir, { recursive: true, force: true });

const mb = SIZE / 1e6;
console.log(`| size | PUT (hash + fsync + rename) | dd conv=fsync | server RSS idle → peak |`);
console.log(`|---|---|---|---|`);
console.log(
  `| ${(SIZE / 1024 ** 3).toFixed(2)} GiB | ${seconds.toFixed(2)} s, ${(mb / seconds).toFixed(0)} MB/s | ${ddSeconds.toFixed(2)} s, ${(mb / ddSeconds).toFixed(0)} MB/s | ${idleRss.toFixed(0)} → ${peak.toFixed(0)} MiB |`,
);
