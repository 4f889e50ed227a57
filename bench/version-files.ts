// One page of a bucket version's files (GET /api/v1/buckets/:id/versions/:vid/files), called
// directly: a bucket of --files paths written in one version, then 19 versions of 100 changes
// each, and the page read at offsets from the first to the last. Beside it, in the same run, what
// the page cost before: the whole snapshot of the version built and sorted (snapshotAt).
// Run: ./node_modules/.bin/bun bench/version-files.ts [--files 100000] [--rounds 5]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { createBucket } from "../src/features/buckets";
import { commitChanges, type Change } from "../src/features/files/commit";
import { listVersions, snapshotAt, versionFiles } from "../src/features/files/versions/service";
import { startPier } from "../src/runtime";
import { benchOwner } from "./lib";

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const FILES = arg("files", 100_000);
const ROUNDS = arg("rounds", 5);

const dataDir = mkdtempSync(join(tmpdir(), "pier-bench-versions-"));
const config = { ...loadConfig({}, {}), dataDir, host: "127.0.0.1", httpPort: 0, httpsPort: null, smtpPort: null };
const pier = await startPier(config, { log: silentLogger, startWorker: false });
try {
  const { actor } = benchOwner(pier.deps);
  const bucket = createBucket(pier.deps, actor, { title: "Bench versions" }).id;
  const blob = (n: number) => ({ sha256: n.toString(16).padStart(64, "0"), size: 1000, md5: "1B2M2Y8AsgTpgAmY7PhCfg==", contentType: "text/html" });
  const path = (i: number) => `site/dir${i % 300}/page-${i}.html`;
  const t0 = performance.now();
  const first: Change[] = Array.from({ length: FILES }, (_, i) => ({ path: path(i), blob: blob(i + 1) }));
  commitChanges(pier.deps, { kind: "system", name: "bench" }, bucket, first, { kind: "write" });
  for (let v = 0; v < 19; v++) {
    const changes: Change[] = Array.from({ length: 100 }, (_, i) => ({ path: path(v * 100 + i), blob: blob(FILES + v * 100 + i + 1) }));
    commitChanges(pier.deps, { kind: "system", name: "bench" }, bucket, changes, { kind: "write" });
  }
  console.log(`seeded ${FILES} paths in 20 versions in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const version = listVersions(pier.deps, actor, bucket, { limit: 20 }).versions[10]!;
  const number = version.number;

  const time = (fn: () => void) => {
    const s = performance.now();
    fn();
    return performance.now() - s;
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const offsets = [0, Math.floor(FILES / 10), Math.floor(FILES / 2), FILES - 100];
  const page: number[][] = offsets.map(() => []);
  const whole: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    offsets.forEach((offset, i) => page[i]!.push(time(() => versionFiles(pier.deps, actor, bucket, version.id, { limit: 100, offset }))));
    whole.push(time(() => snapshotAt(bucket, number, pier.deps.db).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))));
  }
  console.log(`version ${number}, ${versionFiles(pier.deps, actor, bucket, version.id, { limit: 1 }).pagination.total_count} files; median of ${ROUNDS}, ms:`);
  offsets.forEach((offset, i) => console.log(`  page of 100 at offset ${offset}: ${median(page[i]!).toFixed(2)}`));
  console.log(`  before: the whole snapshot built and sorted, any page: ${median(whole).toFixed(1)}`);
} finally {
  await pier.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
