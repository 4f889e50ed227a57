// Publish a small fixture site into a fresh data dir (for profiling `pier serve` under wrk):
// ./node_modules/.bin/bun bench/profile-setup.ts <data-dir>  → slug "profsite1", files 1k.html, index.html (4 KB), 64k.jpg, 1m.jpg
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { createDeps } from "../src/runtime";
import { insertUserWithAccount } from "../src/features/accounts/service";
import { buckets } from "../src/db/schema";
import { activateDeploy, writeDeploy } from "../src/features/publish/deploys";
import { createPublication } from "../src/features/publish/publications";

const dataDir = process.argv[2]!;
const rand = (n: number) => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(b.subarray(i, Math.min(n, i + 65536)));
  return b;
};
const page = (n: number) => new TextEncoder().encode("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n".repeat(Math.ceil(n / 64)).slice(0, n));
const files: Record<string, Uint8Array> = { "1k.html": page(1024), "index.html": page(4096), "64k.jpg": rand(65536), "1m.jpg": rand(1 << 20) };
const config = { ...loadConfig({}, {}), dataDir, secretKey: "bench-secret-key-bench-secret-key-bench-secret" };
const deps = await createDeps(config, 0, { log: silentLogger });
const { account } = insertUserWithAccount(deps, { email: "bench@example.com", passwordHash: "x" });
const now = new Date().toISOString();
const bucket = deps.db.insert(buckets).values({ id: "bkt_prof", accountId: account.id, title: "Prof", createdAt: now, updatedAt: now }).returning().get();
const pub = createPublication(deps, { bucketId: bucket.id, accountId: account.id, kind: "main", slug: "profsite1" });
const d = await writeDeploy(
  deps,
  pub.id,
  Object.entries(files).map(([path, bytes]) => ({ path, bytes })),
);
activateDeploy(deps, pub.id, d.deployId);
deps.close();
