// Start-up time of the compiled binary: from exec to the first 200 on /api/v1/status, on a
// fresh data dir (migrations, secret key) and on an existing one. Build first: npm run build.
//
//   ./node_modules/.bin/bun run bench/startup.ts [runs=5]
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const bin = process.env.PIER_BENCH_BINARY ?? join(import.meta.dir, "../dist/pier");
const runs = Number(process.argv[2] ?? 5);
const port = 18000 + Math.floor(Math.random() * 1000);

async function once(dataDir: string): Promise<number> {
  const t0 = performance.now();
  const proc = Bun.spawn([bin, "serve", "--data-dir", dataDir, "--http-port", String(port), "--smtp-port", "off", "--host", "127.0.0.1"], {
    stdout: "ignore",
    stderr: "ignore",
    env: { PATH: process.env.PATH ?? "" },
  });
  try {
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/api/v1/status`)).status === 200) return performance.now() - t0;
      } catch {}
      if (performance.now() - t0 > 30_000) throw new Error("no answer within 30 s");
      await Bun.sleep(2);
    }
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fresh: number[] = [];
const warm: number[] = [];
for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(join(tmpdir(), "pier-bench-"));
  try {
    fresh.push(await once(dir));
    warm.push(await once(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(`binary            ${(statSync(bin).size / 1024 ** 2).toFixed(0)} MB`);
console.log(`fresh data dir    median ${median(fresh).toFixed(0)} ms (runs: ${fresh.map((x) => x.toFixed(0)).join(", ")})`);
console.log(`existing data dir median ${median(warm).toFixed(0)} ms (runs: ${warm.map((x) => x.toFixed(0)).join(", ")})`);
