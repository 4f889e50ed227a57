// The Auto-Index of one large folder (--files names and a README.md in one folder, what one
// `pier publish` may send), asked over HTTP of an in-process Pier: the first request's time and
// the longest stall of the event loop meanwhile (every site of the process waits that long), a
// repeat, a revalidation (If-None-Match), and 4 concurrent requests once a 10 s page cache would
// have expired. Run the same script in two checkouts to compare (bench/README.md, 2026-11-28).
// Run: ./node_modules/.bin/bun bench/autoindex.ts [--files 20000] [--no-expiry]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { createBucket } from "../src/features/buckets";
import { activateDeploy, writeDeploy } from "../src/features/publish/deploys";
import { createPublication } from "../src/features/publish/publications";
import { startPier } from "../src/runtime";
import { benchOwner, measureStall } from "./lib";

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const FILES = arg("files", 20_000);

const dataDir = mkdtempSync(join(tmpdir(), "pier-bench-autoindex-"));
const config = { ...loadConfig({}, {}), dataDir, host: "127.0.0.1", httpPort: 0, httpsPort: null, smtpPort: null, rateLimitAnonPerMinute: 100_000 };
const pier = await startPier(config, { log: silentLogger, startWorker: false });
try {
  const { accountId, actor } = benchOwner(pier.deps);
  const bucket = createBucket(pier.deps, actor, { title: "Bench Auto-Index" }).id;
  const pub = createPublication(pier.deps, { bucketId: bucket, accountId, kind: "main", slug: "bench-autoindex" });
  const files = Array.from({ length: FILES }, (_, i) => ({ path: `big/${(i * 7919) % FILES}-${i.toString(36)}.txt`, bytes: "x" }));
  files.push({ path: "big/README.md", bytes: "# Many files\n\nSee *below*.\n" });
  files.push({ path: "small/README.md", bytes: "# A few files\n" });
  const t0 = performance.now();
  const d = await writeDeploy(pier.deps, pub.id, files);
  activateDeploy(pier.deps, pub.id, d.deployId);
  console.log(`deploy of ${FILES} files in one folder written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const base = `http://127.0.0.1:${pier.httpPort}`;
  const host = `bench-autoindex.${pier.deps.urls.sitesDomain}`;
  const get = (headers: Record<string, string> = {}, path = "/big/") =>
    fetch(base + path, { headers: { host, ...headers } }).then(async (r) => ({
      status: r.status,
      etag: r.headers.get("etag"),
      bytes: (await r.text()).length,
    }));
  const measure = measureStall;
  const row = (what: string, m: { ms: number; stall: number }) =>
    console.log(`  ${what.padEnd(44)} ${m.ms.toFixed(0).padStart(6)} ms   longest stall ${m.stall.toFixed(0).padStart(5)} ms`);

  // What any first request pays, listing or not: the deploy's manifest loaded (one query of all
  // its files), and the first README render (the renderer's worker starts).
  row("first request of the deploy (a small file)", await measure(() => get({}, "/small/README.md")));
  row("a small folder's listing (renderer starts)", await measure(() => get({}, "/small/")));
  const first = await measure(() => get());
  row(`first listing (${first.out.bytes} bytes)`, first);
  const again: { ms: number; stall: number }[] = [];
  for (let i = 0; i < 5; i++) again.push(await measure(() => get()));
  again.sort((a, b) => a.ms - b.ms);
  row("repeat, median of 5", again[2]!);
  const revalidate = await measure(() => get({ "if-none-match": first.out.etag ?? "" }));
  row(`revalidation (${revalidate.out.status})`, revalidate);
  if (!process.argv.includes("--no-expiry")) {
    await Bun.sleep(10_500);
    row("4 at once after 10.5 s", await measure(() => Promise.all([1, 2, 3, 4].map(() => get()))));
  }
} finally {
  await pier.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
