// Benchmark: `pier publish` of a 1,000-file folder against a real `pier serve`, then one file
// changed and published again: wall time until the site is ready (hashing, session, uploads,
// finalize, build, polling), the server's build time, and bytes uploaded each time.
// Run: ./node_modules/.bin/bun run bench/publish.ts   (BENCH_FILES=n to change the count)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, root, startServer } from "./lib";

const FILES = Number(process.env.BENCH_FILES ?? 1000);
const dir = mkdtempSync(join(tmpdir(), "pier-bench-site-"));
let seed = 1;
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const text = (n: number) => Array.from({ length: n }, () => "lorem ipsum dolor sit amet consectetur "[Math.floor(rnd() * 39)]).join("");
let totalBytes = 0;
for (let i = 0; i < FILES; i++) {
  const folder = join(dir, `section-${i % 20}`);
  mkdirSync(folder, { recursive: true });
  let name: string, body: string | Uint8Array;
  if (i === 0) {
    name = join(dir, "index.html");
    body = `<h1>bench</h1>${text(2000)}`;
  } else if (i % 10 === 0) {
    name = join(folder, `img-${i}.png`);
    body = new Uint8Array(50_000).map(() => Math.floor(rnd() * 256));
  } else if (i % 3 === 0) {
    name = join(folder, `style-${i}.css`);
    body = `.c${i}{color:red}${text(3000)}`;
  } else if (i % 3 === 1) {
    name = join(folder, `app-${i}.js`);
    body = `export const v${i}=1;//${text(5000)}`;
  } else {
    name = join(folder, `page-${i}.html`);
    body = `<p>${text(4000)}</p>`;
  }
  writeFileSync(name, body);
  totalBytes += typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
}

const s = await startServer();
async function publish(): Promise<{ ms: number; uploaded: number; buildMs: number; url: string }> {
  const started = performance.now();
  const proc = Bun.spawn(
    [join(root, "node_modules/.bin/bun"), "run", "src/main.ts", "publish", dir, "--url", s.url, "--key", s.key, "--slug", "bench-publish-site"],
    {
      cwd: root,
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, XDG_CONFIG_HOME: dir },
    },
  );
  const code = await proc.exited;
  const ms = performance.now() - started;
  const out = await new Response(proc.stdout).text();
  const err = await new Response(proc.stderr).text();
  if (code !== 0) throw new Error(`publish exited ${code}: ${err}`);
  const uploaded = Number(/Uploaded (\d+) bytes/.exec(err)?.[1] ?? NaN);
  const pub = (await api(s, "GET", "/api/v1/publications?include_manifest=false")).data.publications[0];
  const buildMs = Date.parse(pub.publish_completed_at) - Date.parse(pub.publish_enqueued_at);
  return { ms, uploaded, buildMs, url: out.trim() };
}

try {
  const first = await publish();
  writeFileSync(join(dir, "section-1", "app-1.js"), `export const changed = ${Date.now()};`);
  const second = await publish();
  const check = await fetch(`${s.url}/section-1/app-1.js`, { headers: { host: new URL(second.url).host.replace(/:\d+$/, "") } });
  const body = await check.text();
  if (!body.startsWith("export const changed")) throw new Error("the republished file is not served");
  const row = (label: string, r: typeof first) =>
    `| ${label} | ${(r.ms / 1000).toFixed(2)} s | ${(r.buildMs / 1000).toFixed(2)} s | ${r.uploaded.toLocaleString("en")} B |`;
  console.log(`${FILES} files, ${(totalBytes / 1024 / 1024).toFixed(1)} MiB\n`);
  console.log("| Run | CLI until ready | server build (enqueued -> ready) | bytes uploaded |");
  console.log("|---|---|---|---|");
  console.log(row("first publish", first));
  console.log(row("one file changed", second));
} finally {
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(s.dataDir, { recursive: true, force: true });
}
