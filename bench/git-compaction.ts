// Compacting a git sync store (src/features/gitsync/compact.ts): a store holding a repository
// of --files files (2-6 KB each: text that deltas well, or with --binary random bytes, as images
// are) and --syncs later fetches of a changed tenth of them, as
// system git leaves it after a shallow clone and fetches; then the copy of the tip's snapshot into
// a fresh store. Prints the time, the bytes before and after, the objects copied and the
// process's peak RSS growth. Run: ./node_modules/.bin/bun bench/git-compaction.ts [--files 5000] [--syncs 5] [--binary]
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Deps } from "../src/core/context";
import { compactIfGrown, compactionLimits, storeBytes } from "../src/features/gitsync/compact";
import { git, startGitServer, workClone } from "../test/helpers/git-server";

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const FILES = arg("files", 5000);
const SYNCS = arg("syncs", 5);
const BINARY = process.argv.includes("--binary");

const server = startGitServer();
const url = server.createRepo("bench");
const other = await workClone(url);
let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const text = (n: number) => Array.from({ length: n }, () => "lorem ipsum dolor sit amet "[Math.floor(rnd() * 27)]).join("");
const content = (i: number, label: string) =>
  BINARY ? crypto.getRandomValues(new Uint8Array(2000 + Math.floor(rnd() * 4000))) : `<p>${i} ${label}</p>${text(2000 + Math.floor(rnd() * 4000))}`;
for (let i = 0; i < FILES; i++) other.write(`section-${i % 20}/page-${i}.html`, content(i, ""));
await other.commitAndPush("all files");

const dataDir = mkdtempSync(join(tmpdir(), "pier-bench-compact-"));
mkdirSync(join(dataDir, "git"));
const store = join(dataDir, "git", "gsc_bench");
await git(dataDir, "clone", "--quiet", "--bare", "--depth", "1", url, store);
for (let s = 1; s <= SYNCS; s++) {
  for (let i = 0; i < FILES; i += 10) other.write(`section-${i % 20}/page-${i}.html`, content(i, `v${s}`));
  await other.commitAndPush(`change ${s}`);
  await git(store, "fetch", "--quiet", "--update-head-ok", "--depth", "1", "origin", "+main:main");
}
const head = (await git(store, "rev-parse", "main")).trim();
const deps = { config: { dataDir } } as unknown as Deps;

// The baseline a first sync would have left, so the store counts as grown.
compactionLimits.minGrowthBytes = 0;
await Bun.write(join(store, "pier-baseline-bytes"), "1");
const before = await storeBytes(store);
Bun.gc(true);
const rss0 = process.memoryUsage().rss;
let peak = rss0;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
const t0 = performance.now();
const result = await compactIfGrown(deps, "gsc_bench", head, "main");
const ms = performance.now() - t0;
clearInterval(sampler);
const fsck = await git(store, "--git-dir", store, "fsck", "--no-dangling").then(
  (out) => (out.trim() === "" ? "clean" : out.trim()),
  (e: Error) => `failed: ${e.message}`,
);
const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
console.log(
  `| ${FILES} ${BINARY ? "binary" : "text"} files, ${SYNCS} fetches of a tenth | ${mib(before)} | ${result ? mib(result.bytesAfter) : "kept (copy not smaller)"} | ${result?.objects ?? "-"} | ${(ms / 1000).toFixed(2)} s | +${mib(peak - rss0)} | git fsck ${fsck} |`,
);
rmSync(dataDir, { recursive: true, force: true });
other.cleanup();
await server.stop();
