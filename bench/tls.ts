// HTTPS: TLS handshakes per second (a new connection for every request) and keep-alive
// requests per second for a 4 KB page, Pier beside nginx and Caddy serving the same file with the
// same certificate (one Pier issued through ACME from a local Pebble CA); and the time from a
// site going live to its own certificate being served, with the same Pebble.
// Needs: apt-get install -y nginx caddy wrk; Debian's pebble. Prints markdown for bench/README.md.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import type { CertificateManager } from "../src/acme";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { buckets } from "../src/db/schema";
import { insertUserWithAccount } from "../src/features/accounts/service";
import { activateDeploy, writeDeploy } from "../src/features/publish/deploys";
import { createPublication } from "../src/features/publish/publications";
import { createDeps, startPier } from "../src/runtime";
import { freePort, startPebble } from "../test/helpers/pebble";

const arg = (name: string, dflt: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? dflt);
const DURATION = arg("duration", 5);
const ROUNDS = arg("rounds", 3);
const CONNECTIONS = arg("connections", 16);
const ISSUES = arg("issues", 5);

for (const bin of ["nginx", "caddy", "wrk", "/usr/bin/pebble"]) {
  if (spawnSync("sh", ["-c", `command -v ${bin}`]).status !== 0) {
    console.error(`bench/tls.ts: ${bin} is missing (apt-get install -y nginx caddy wrk pebble)`);
    process.exit(2);
  }
}

const work = mkdtempSync(join(tmpdir(), "pier-bench-tls-"));
chmodSync(work, 0o755); // nginx's workers run as nobody and read the fixture
const page = `<!doctype html><title>bench</title><p>${"x".repeat(4096 - 40)}</p>\n`;
const fixture = join(work, "site");
mkdirSync(fixture);
writeFileSync(join(fixture, "index.html"), page);

let resets = 0;
/** The certificate a handshake presents; null (counted) when the connection was reset. */
const presentedOrNull = (port: number, servername: string) =>
  presented(port, servername).catch(() => {
    resets++;
    return null;
  });
const presented = (port: number, servername: string) =>
  new Promise<X509Certificate>((resolve, reject) => {
    const s = tls.connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false }, () => {
      const c = s.getPeerX509Certificate()!;
      s.end();
      resolve(c);
    });
    s.on("error", reject);
  });

// --- 1. Time from "live" to served certificate, against a real ACME CA (Pebble, HTTP-01).
const httpPort = await freePort();
const httpsPort = await freePort();
const pebble = await startPebble({ httpPort });
const acmeData = join(work, "acme-pier");
const pier = await startPier(
  {
    ...loadConfig({}, {}),
    dataDir: acmeData,
    host: "127.0.0.1",
    httpPort,
    httpsPort,
    smtpPort: null,
    baseUrl: `https://pier.localhost:${httpsPort}`,
    sitesDomain: "sites.localhost",
    acme: "on",
    acmeDirectory: pebble.directoryUrl,
    acmeCaRoot: pebble.caRootFile,
    secretKey: "bench-secret-key-bench-secret-key-bench-secret",
  },
  { log: silentLogger },
);
const acme = pier.deps.certificates as CertificateManager;
const { account } = insertUserWithAccount(pier.deps, { email: "bench@example.com", passwordHash: "x" });
const now = new Date().toISOString();
const bucket = pier.deps.db
  .insert(buckets)
  .values({ id: "bkt_bench", accountId: account.id, title: "Bench", createdAt: now, updatedAt: now })
  .returning()
  .get();
const issueMs: number[] = [];
let certHost = "";
for (let i = 0; i < ISSUES; i++) {
  const slug = `live${i}-${Date.now().toString(36)}`;
  const host = `${slug}.sites.localhost`;
  const pub = createPublication(pier.deps, {
    bucketId:
      i === 0
        ? bucket.id
        : pier.deps.db
            .insert(buckets)
            .values({ id: `bkt_bench${i}`, accountId: account.id, title: "Bench", createdAt: now, updatedAt: now })
            .returning()
            .get().id,
    accountId: account.id,
    kind: "main",
    slug,
  });
  const d = await writeDeploy(pier.deps, pub.id, [{ path: "index.html", bytes: page }]);
  const t0 = performance.now();
  activateDeploy(pier.deps, pub.id, d.deployId);
  for (;;) {
    if ((await presentedOrNull(httpsPort, host))?.subjectAltName === `DNS:${host}`) break;
    if (performance.now() - t0 > 60_000) throw new Error(`no certificate for ${host}: ${JSON.stringify(acme.state(host))}`);
    await Bun.sleep(5);
  }
  issueMs.push(performance.now() - t0);
  certHost = host;
}
// On demand: the same, started by the first request for a live host that has no certificate.
acme.forget(certHost);
await Bun.sleep(200);
const t0 = performance.now();
await fetch(`http://127.0.0.1:${httpPort}/`, { headers: { host: certHost } }).then((r) => r.arrayBuffer());
while ((await presentedOrNull(httpsPort, certHost))?.subjectAltName !== `DNS:${certHost}`) await Bun.sleep(5);
const onDemandMs = performance.now() - t0;
const served = acme.certificateFor(certHost)!;
const certFile = join(work, "cert.pem");
const keyFile = join(work, "key.pem");
writeFileSync(certFile, served.cert);
writeFileSync(keyFile, served.key);
await pier.stop();
await pebble.stop();
console.error(`issued: ${issueMs.map((m) => m.toFixed(0)).join(", ")} ms; on demand ${onDemandMs.toFixed(0)} ms; handshakes reset while polling: ${resets}`);

// --- 2. Handshakes and keep-alive requests: Pier, nginx, Caddy with that certificate.
const SLUG = "benchsite1";
const pierData = join(work, "pier");
{
  const config = { ...loadConfig({}, {}), dataDir: pierData, secretKey: "bench-secret-key-bench-secret-key-bench-secret" };
  const deps = await createDeps(config, 0, { log: silentLogger });
  const { account: a } = insertUserWithAccount(deps, { email: "bench@example.com", passwordHash: "x" });
  const b = deps.db.insert(buckets).values({ id: "bkt_bench", accountId: a.id, title: "Bench", createdAt: now, updatedAt: now }).returning().get();
  const pub = createPublication(deps, { bucketId: b.id, accountId: a.id, kind: "main", slug: SLUG });
  const d = await writeDeploy(deps, pub.id, [{ path: "index.html", bytes: page }]);
  activateDeploy(deps, pub.id, d.deployId);
  deps.close();
}

const procs: ChildProcess[] = [];
function start(cmd: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const p = spawn(cmd, args, { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, ...env } });
  procs.push(p);
  return p;
}
const cleanup = () => {
  for (const p of procs) p.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
};
process.on("SIGINT", () => {
  cleanup();
  process.exit(130);
});
process.on("uncaughtException", (e) => {
  console.error(e);
  cleanup();
  process.exit(1);
});

const pierHttps = await freePort();
start(
  process.execPath,
  [
    "src/main.ts",
    "serve",
    "--data-dir",
    pierData,
    "--http-port",
    String(await freePort()),
    "--https-port",
    String(pierHttps),
    "--tls-cert",
    certFile,
    "--tls-key",
    keyFile,
    "--host",
    "127.0.0.1",
    "--smtp-port",
    "off",
    "--log-level",
    "warn",
  ],
  { PIER_SECRET_KEY: "bench-secret-key-bench-secret-key-bench-secret" },
);

const nginxPort = await freePort();
const nginxDir = join(work, "nginx");
mkdirSync(nginxDir);
writeFileSync(
  join(nginxDir, "nginx.conf"),
  `worker_processes 1;
daemon off;
pid ${nginxDir}/nginx.pid;
error_log ${nginxDir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  client_body_temp_path ${nginxDir}/body;
  proxy_temp_path ${nginxDir}/proxy;
  fastcgi_temp_path ${nginxDir}/fastcgi;
  uwsgi_temp_path ${nginxDir}/uwsgi;
  scgi_temp_path ${nginxDir}/scgi;
  server { listen 127.0.0.1:${nginxPort} ssl; ssl_certificate ${certFile}; ssl_certificate_key ${keyFile}; root ${fixture}; }
}
`,
);
start("nginx", ["-c", join(nginxDir, "nginx.conf"), "-e", `${nginxDir}/error.log`]);

const caddyPort = await freePort();
const caddyfile = join(work, "Caddyfile");
writeFileSync(
  caddyfile,
  // Clients without SNI (wrk to an IP address) get the certificate's name as the default.
  `{\n  admin off\n  auto_https off\n  default_sni ${certHost}\n  servers {\n    protocols h1 h2\n  }\n}\nhttps://:${caddyPort} {\n  bind 127.0.0.1\n  tls ${certFile} ${keyFile}\n  root * ${fixture}\n  file_server\n}\n`,
);
start("caddy", ["run", "--config", caddyfile, "--adapter", "caddyfile"], { HOME: work, XDG_DATA_HOME: work, XDG_CONFIG_HOME: work });

const servers = [
  { name: "Pier", port: pierHttps, host: `${SLUG}.localhost` },
  { name: "nginx-1w", port: nginxPort, host: undefined },
  { name: "Caddy", port: caddyPort, host: undefined },
];
for (const s of servers) {
  for (let i = 0; ; i++) {
    try {
      const r = await fetch(`https://127.0.0.1:${s.port}/index.html`, {
        headers: s.host ? { host: s.host } : {},
        tls: { rejectUnauthorized: false },
        signal: AbortSignal.timeout(2000),
      });
      const body = await r.text();
      if (r.status === 200 && body.length === page.length) break;
    } catch {}
    if (i > 50) throw new Error(`${s.name} did not come up`);
    await Bun.sleep(100);
  }
  console.error(`${s.name} up`);
  const c = await presented(s.port, ""); // wrk sends no SNI to an IP address: the default certificate
  if (c.fingerprint256 !== new X509Certificate(served.cert).fingerprint256) throw new Error(`${s.name} serves another certificate`);
}

function wrk(s: (typeof servers)[number], close: boolean): number {
  const args = ["-t1", "-c", String(CONNECTIONS), "-d", `${DURATION}s`];
  if (s.host) args.push("-H", `Host: ${s.host}`);
  if (close) args.push("-H", "Connection: close");
  const out = spawnSync("wrk", [...args, `https://127.0.0.1:${s.port}/index.html`], { encoding: "utf8", timeout: (DURATION + 20) * 1000 }).stdout;
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const results: Record<string, { handshakes: number; keepAlive: number }> = {};
for (const s of servers) wrk(s, false); // warm-up
const samples = Object.fromEntries(servers.map((s) => [s.name, { h: [] as number[], k: [] as number[] }]));
for (let round = 0; round < ROUNDS; round++) {
  for (const s of servers.map((_, i) => servers[(i + round) % servers.length]!)) {
    samples[s.name]!.h.push(wrk(s, true));
    samples[s.name]!.k.push(wrk(s, false));
    console.error(
      `round ${round + 1} ${s.name.padEnd(9)} new-connection ${samples[s.name]!.h.at(-1)!.toFixed(0)}/s  keep-alive ${samples[s.name]!.k.at(-1)!.toFixed(0)}/s`,
    );
  }
}
for (const s of servers) results[s.name] = { handshakes: median(samples[s.name]!.h), keepAlive: median(samples[s.name]!.k) };
cleanup();

const cpu = (spawnSync("sh", ["-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], { encoding: "utf8" }).stdout || "").trim();
const nginxV = (spawnSync("nginx", ["-v"], { encoding: "utf8" }).stderr || "").trim().replace("nginx version: ", "");
const caddyV = (spawnSync("caddy", ["version"], { encoding: "utf8" }).stdout || "").trim().split(" ")[0];
const f = (n: number) => Math.round(n).toLocaleString("en-US");
console.log(
  `\nwrk -t1 -c${CONNECTIONS} -d${DURATION}s on loopback, 4 KB index.html, median of ${ROUNDS} rounds; ${navigator.hardwareConcurrency} CPUs (${cpu}); Bun ${Bun.version}, ${nginxV} (1 worker), Caddy ${caddyV}; certificate: RSA 2048 issued by Pebble; ${new Date().toISOString().slice(0, 10)}\n`,
);
console.log(`| server | new connection per request (handshakes/s) | keep-alive req/s |`);
console.log(`|---|---:|---:|`);
for (const s of servers) console.log(`| ${s.name} | ${f(results[s.name]!.handshakes)} | ${f(results[s.name]!.keepAlive)} |`);
const sorted = [...issueMs].sort((a, b) => a - b);
console.log(
  `\nLive to served certificate (Pebble, HTTP-01, publish -> handshake presents the new certificate), ${ISSUES} sites: median ${f(median(issueMs))} ms, min ${f(sorted[0]!)} ms, max ${f(sorted.at(-1)!)} ms; on demand (first request -> served): ${f(onDemandMs)} ms; handshakes reset while polling every 5 ms across the listener swaps: ${resets}`,
);
process.exit(0);
