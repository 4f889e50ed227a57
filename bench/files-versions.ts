// Benchmark (b): a bucket of 10,000 files, then 1,000 single-file uploads (direct upload: declare,
// PUT, attach). Time per upload and database growth per new version, by window of 100, must
// stay flat as history grows (a version costs O(changed paths), not O(files in the bucket)).
// Run: ./node_modules/.bin/bun run bench/files-versions.ts
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { createApiKey } from "../src/features/accounts/keys";
import { hashPassword, insertUserWithAccount } from "../src/features/accounts/service";
import { startPier } from "../src/runtime";
import { percentile } from "./lib";

const BASE_FILES = Number(process.env.BENCH_BASE_FILES ?? 10_000);
const UPLOADS = Number(process.env.BENCH_UPLOADS ?? 1000);
const dataDir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "pier-bench-"));
const config = { ...loadConfig({}, {}), dataDir, host: "127.0.0.1", httpPort: 0, smtpPort: null, rateLimitPerMinute: 10_000_000 };
const pier = await startPier(config, { log: silentLogger, startWorker: false });
const url = `http://127.0.0.1:${pier.httpPort}`;
const { user, account } = insertUserWithAccount(pier.deps, { email: "bench@example.com", passwordHash: await hashPassword("bench password 123") });
const key = createApiKey(pier.deps, { accountId: account.id, userId: user.id, label: "bench", kind: "owner", scope: "bucket_admin" }).key;

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}
const describe = (path: string, text: string) => {
  const bytes = new TextEncoder().encode(text);
  return {
    bytes,
    d: {
      path,
      byte_size: bytes.byteLength,
      checksum: createHash("md5").update(bytes).digest("base64"),
      sha256: createHash("sha256").update(bytes).digest("hex"),
      content_type: "text/plain",
    },
  };
};
const dbBytes = () => {
  const q = (p: string) => (pier.deps.sqlite.query(`PRAGMA ${p}`).get() as Record<string, number>)[p]!;
  return q("page_count") * q("page_size");
};

const bucket = (await api("POST", "/api/v1/buckets", { bucket: { title: "bench versions" } })).bucket.id;
const seedStart = performance.now();
const sid = (await api("POST", `/api/v1/buckets/${bucket}/upload_sessions`, { delete_missing: false, expected_file_count: BASE_FILES })).upload_session.id;
for (let i = 0; i < BASE_FILES; i += 100) {
  const batch = Array.from({ length: Math.min(100, BASE_FILES - i) }, (_, j) =>
    describe(`site/section${(i + j) % 50}/page${i + j}.html`, `<p>page ${i + j}</p>`),
  );
  const r = await api("POST", `/api/v1/buckets/${bucket}/upload_sessions/${sid}/uploads`, { files: batch.map((b) => b.d) });
  await Promise.all(
    r.uploads.map((u: any) =>
      fetch(u.upload.url, { method: "PUT", headers: u.upload.headers, body: batch.find((b) => b.d.path === u.path)!.bytes as BodyInit }),
    ),
  );
}
for (;;) {
  const r = await fetch(`${url}/api/v1/buckets/${bucket}/upload_sessions/${sid}/finalize`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ complete: true }),
  });
  if (r.status === 200) break;
  if (r.status !== 202) throw new Error(await r.text());
}
const seedSeconds = (performance.now() - seedStart) / 1000;

console.log(`Seeded ${BASE_FILES} files in ${seedSeconds.toFixed(1)} s (DB ${(dbBytes() / 1e6).toFixed(1)} MB). Then ${UPLOADS} single-file uploads:\n`);
console.log("| uploads | mean ms/upload | p99 ms | DB growth per version | file_changes rows per version |");
console.log("|---|---|---|---|---|");
let times: number[] = [];
let windowStartBytes = dbBytes();
let windowStartRows = (pier.deps.sqlite.query("SELECT count(*) AS n FROM file_changes").get() as { n: number }).n;
for (let i = 1; i <= UPLOADS; i++) {
  // Alternate new paths and new contents of existing paths.
  const path = i % 2 ? `notes/new${i}.txt` : `site/section${i % 50}/page${i}.html`;
  const f = describe(path, `upload ${i} ${"x".repeat(i % 200)}`);
  const t0 = performance.now();
  const d = await api("POST", "/api/v1/direct_uploads", { bucket_id: bucket, path, blob: f.d });
  if (d.upload_required) await fetch(d.upload.url, { method: "PUT", headers: d.upload.headers, body: f.bytes as BodyInit });
  await api("POST", `/api/v1/buckets/${bucket}/files`, { signed_blob_id: d.signed_blob_id });
  times.push(performance.now() - t0);
  if (i % 100 === 0) {
    const sorted = [...times].sort((a, b) => a - b);
    const bytes = dbBytes();
    const rows = (pier.deps.sqlite.query("SELECT count(*) AS n FROM file_changes").get() as { n: number }).n;
    console.log(
      `| ${i - 99}–${i} | ${(times.reduce((a, b) => a + b, 0) / times.length).toFixed(2)} | ${percentile(sorted, 99).toFixed(2)} | ${((bytes - windowStartBytes) / 100 / 1024).toFixed(2)} KiB | ${((rows - windowStartRows) / 100).toFixed(2)} |`,
    );
    times = [];
    windowStartBytes = bytes;
    windowStartRows = rows;
  }
}
await pier.stop();
rmSync(dataDir, { recursive: true, force: true });
