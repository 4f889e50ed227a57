// The API's common reads with an API key, as an agent or the dashboard makes them: the round trip
// over loopback HTTP (client in the same process) and the process's CPU per request, per
// endpoint, batches of each endpoint alternated. A bucket of 20 files in 5 versions, 5 buckets in
// the account. Compare two trees by running this in each, alternately (the figures move with the
// machine; the ratio between trees run back to back does not).
// Run: ./node_modules/.bin/bun bench/api-reads.ts [--batches 7] [--requests 500]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { createApiKey } from "../src/features/accounts/keys";
import { insertUserWithAccount } from "../src/features/accounts/service";
import { commitChanges, type Change } from "../src/features/files/commit";
import { startPier } from "../src/runtime";

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const BATCHES = arg("batches", 7);
const REQUESTS = arg("requests", 500);

const dataDir = mkdtempSync(join(tmpdir(), "pier-bench-api-"));
const config = { ...loadConfig({}, {}), dataDir, host: "127.0.0.1", httpPort: 0, httpsPort: null, smtpPort: null, rateLimitPerMinute: 100_000_000 };
const pier = await startPier(config, { log: silentLogger, startWorker: false });
const base = `http://127.0.0.1:${pier.httpPort}`;
const { user, account } = insertUserWithAccount(pier.deps, { email: "bench@example.com", passwordHash: "x" });
const key = createApiKey(pier.deps, { accountId: account.id, userId: user.id, label: "bench", kind: "owner", scope: "bucket_admin" }).key;
const headers = { authorization: `Bearer ${key}` };

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { data: any };
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

const bucketIds: string[] = [];
for (let b = 0; b < 5; b++) bucketIds.push((await api("POST", "/api/v1/buckets", { bucket: { title: `Bench ${b}` } })).bucket.id);
const bucket = bucketIds[0]!;
for (let v = 0; v < 5; v++) {
  const changes: Change[] = [];
  for (let i = v * 4; i < v * 4 + 4; i++) {
    const hex = (i + 1).toString(16).padStart(64, "0");
    changes.push({ path: `docs/page-${i}.md`, blob: { sha256: hex, size: 1000 + i, md5: "1B2M2Y8AsgTpgAmY7PhCfg==", contentType: "text/markdown" } });
  }
  commitChanges(pier.deps, { kind: "system", name: "bench" }, bucket, changes, { kind: "write" });
}
const fileId = (await api("GET", `/api/v1/buckets/${bucket}/files?limit=1`)).files[0].id;

const endpoints = [
  `/api/v1/buckets/${bucket}`,
  "/api/v1/buckets",
  `/api/v1/buckets/${bucket}/files`,
  `/api/v1/buckets/${bucket}/files/${fileId}`,
  `/api/v1/buckets/${bucket}/files/${fileId}/versions`,
  `/api/v1/buckets/${bucket}/versions`,
];
const samples = endpoints.map(() => ({ rtt: [] as number[], cpu: [] as number[] }));
for (const path of endpoints) for (let i = 0; i < 200; i++) await api("GET", path); // warm-up: JIT, caches
for (let b = 0; b < BATCHES; b++) {
  for (let e = 0; e < endpoints.length; e++) {
    const times: number[] = [];
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      const res = await fetch(`${base}${endpoints[e]}`, { headers });
      await res.arrayBuffer();
      times.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`${endpoints[e]}: ${res.status}`);
    }
    const cpu = process.cpuUsage(cpu0);
    times.sort((x, y) => x - y);
    samples[e]!.rtt.push(times[Math.floor(times.length / 2)]! * 1000);
    samples[e]!.cpu.push((cpu.user + cpu.system) / REQUESTS);
  }
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
console.log(`| GET (keyed) | round trip µs, median of ${BATCHES} batch medians | CPU µs per request (client and server) |\n|---|---:|---:|`);
for (let e = 0; e < endpoints.length; e++) {
  const label = endpoints[e]!.replace(bucket, ":id").replace(fileId, ":file_id");
  console.log(`| ${label} | ${median(samples[e]!.rtt).toFixed(0)} | ${median(samples[e]!.cpu).toFixed(0)} |`);
}
await pier.stop();
rmSync(dataDir, { recursive: true, force: true });
