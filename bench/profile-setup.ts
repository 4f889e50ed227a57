// Publish a small fixture site into a fresh data dir (for profiling `pier serve` under wrk):
// ./node_modules/.bin/bun bench/profile-setup.ts <data-dir>  → slug "profsite1", files 1k.html, index.html (4 KB), 64k.jpg, 1m.jpg
import { publishFixtureSite } from "./lib";

const dataDir = process.argv[2]!;
const rand = (n: number) => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(b.subarray(i, Math.min(n, i + 65536)));
  return b;
};
const page = (n: number) => new TextEncoder().encode("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n".repeat(Math.ceil(n / 64)).slice(0, n));
const files: Record<string, Uint8Array> = { "1k.html": page(1024), "index.html": page(4096), "64k.jpg": rand(65536), "1m.jpg": rand(1 << 20) };
await publishFixtureSite(dataDir, "bench-secret-key-bench-secret-key-bench-secret", "profsite1", files);
