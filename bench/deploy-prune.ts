// Benchmark: what pruning a large site's deploy history costs the event loop. A publication gets
// deploys of N files each (default 20,000, one stored blob; the rows are what costs), the newest
// live, then pruneDeploys keeps one: wall time and the longest gap between 1 ms ticks meanwhile
// (every site of the process waits that long). Also the deploy write itself, for scale.
// Run: ./node_modules/.bin/bun bench/deploy-prune.ts [--files 20000] [--rounds 3]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { buckets } from "../src/db/schema";
import { activateDeploy, writeDeploy } from "../src/features/publish/deploys";
import { pruneDeploys } from "../src/features/publish/history";
import { createPublication } from "../src/features/publish/publications";
import { createDeps } from "../src/runtime";
import { benchOwner, measureStall } from "./lib";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : process.argv[i + 1]!;
};
const FILES = Number(arg("files", "20000"));
const ROUNDS = Number(arg("rounds", "3"));

const dir = mkdtempSync(join(tmpdir(), "pier-bench-prune-"));
try {
  const deps = await createDeps({ ...loadConfig({}, {}), dataDir: dir, secretKey: "bench-secret-key-bench-secret-key-bench-secret", smtpPort: null }, 0, {
    log: silentLogger,
  });
  const { accountId } = benchOwner(deps);
  const blob = await deps.blobs.putBytes(new TextEncoder().encode("<p>one page</p>"));
  const files = Array.from({ length: FILES }, (_, i) => ({ path: `section-${i % 50}/page-${i}.html`, blobSha: blob.sha256 }));
  console.log(`\n### A ${FILES.toLocaleString("en")}-file deploy: written, then pruned (keep 1), ${ROUNDS} rounds\n`);
  console.log("| round | write: ms | write: longest stall ms | prune: ms | prune: longest stall ms |\n|---|---:|---:|---:|---:|");
  for (let round = 1; round <= ROUNDS; round++) {
    const now = new Date().toISOString();
    const bucketId = `bkt_prune_${round}`;
    deps.db
      .insert(buckets)
      .values({ id: bucketId, accountId, title: `prune ${round}`, createdAt: now, updatedAt: now })
      .run();
    const pub = createPublication(deps, { bucketId, accountId, kind: "main", slug: `prunebench-${round}` });
    const first = await writeDeploy(deps, pub.id, files);
    activateDeploy(deps, pub.id, first.deployId);
    let second = "";
    const write = await measureStall(async () => {
      second = (await writeDeploy(deps, pub.id, files)).deployId;
    });
    activateDeploy(deps, pub.id, second);
    const prune = await measureStall(() => pruneDeploys(deps, pub.id, 1));
    console.log(`| ${round} | ${write.ms.toFixed(0)} | ${write.stall.toFixed(0)} | ${prune.ms.toFixed(0)} | ${prune.stall.toFixed(0)} |`);
  }
  deps.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
