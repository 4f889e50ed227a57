// The runtime's ceiling for `bench/sites-scaling.ts`: a minimal Bun.serve answering the same cached
// bytes as Pier, in N processes sharing one port with reusePort (as Pier's serving workers do).
// Modes:
//   fetch-pier    a fetch handler cloning a prepared Response that carries exactly the headers Pier
//                 sent for the file, plus a per-request X-Request-Id (Pier's own answer path)
//   fetch-min     the same handler, the prepared Response with Content-Type only and no id
//   static-pier   Bun's native static `routes` (no JavaScript per request), Pier's headers
//                 (with one fixed request id: a static route cannot vary it)
//   static-min    native static routes, Content-Type only
// Config comes as JSON in BARE_BUN (see BareConfig); the first process starts the others.
import { readFileSync } from "node:fs";

export interface BareConfig {
  port: number;
  mode: "fetch-pier" | "fetch-min" | "static-pier" | "static-min";
  processes: number;
  /** Extra arguments for the other processes' `bun` (e.g. --smol), as this one was started. */
  bunArgs: string[];
  /** URL path → the file's bytes on disk and the headers Pier answered it with. */
  files: Record<string, { file: string; headers: [string, string][] }>;
}

const config = JSON.parse(process.env.BARE_BUN!) as BareConfig;
const index = Number(process.env.BARE_BUN_INDEX ?? "0");

const contentTypeOnly = (headers: [string, string][]) => headers.filter(([k]) => k.toLowerCase() === "content-type");
const pierHeaders = config.mode.endsWith("-pier");
const prepared = new Map<string, Response>();
for (const [path, f] of Object.entries(config.files)) {
  const headers = pierHeaders ? f.headers : contentTypeOnly(f.headers);
  const blob = new Blob([readFileSync(f.file)]);
  prepared.set(path, new Response(config.mode.startsWith("static") ? readFileSync(f.file) : blob, { headers }));
}

// Request ids as long as Pier's ("req_" + 20 characters), from a table of digit pairs as Pier does.
const DIGITS = "0123456789abcdefghijklmnopqrstuv";
const PAIRS = Array.from({ length: 1024 }, (_, i) => DIGITS[i >> 5]! + DIGITS[i & 31]!);
const ID_PREFIX = `req_${String(index).padStart(16, "0")}`;
let nextId = 0;
const requestId = () => {
  const n = nextId++;
  return ID_PREFIX + PAIRS[(n >> 10) & 1023]! + PAIRS[n & 1023]!;
};
const notFound = new Response("not found", { status: 404 });

const server = config.mode.startsWith("static")
  ? Bun.serve({
      port: config.port,
      hostname: "127.0.0.1",
      reusePort: true,
      routes: Object.fromEntries(
        [...prepared].map(([path, res]) => {
          if (pierHeaders) res.headers.set("x-request-id", `${ID_PREFIX}0000`);
          return [path, res];
        }),
      ),
      fetch: () => notFound.clone(),
    })
  : Bun.serve({
      port: config.port,
      hostname: "127.0.0.1",
      reusePort: true,
      fetch(req) {
        const url = req.url;
        const p = prepared.get(url.slice(url.indexOf("/", 8)));
        if (p === undefined) return notFound.clone();
        const res = p.clone();
        if (pierHeaders) res.headers.set("x-request-id", requestId());
        return res;
      },
    });

if (index === 0) {
  const others = Array.from({ length: config.processes - 1 }, (_, i) =>
    Bun.spawn([process.execPath, ...config.bunArgs, import.meta.path], {
      env: { ...process.env, BARE_BUN_INDEX: String(i + 1) },
      stdio: ["ignore", "inherit", "inherit"],
    }),
  );
  const stop = () => {
    for (const o of others) o.kill("SIGTERM");
    server.stop(true);
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
} else {
  // A process left behind by a killed bench would hold the port: follow the first one out.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 1000).unref();
}
