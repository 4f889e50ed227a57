// The compiled single executable, as an operator runs it: built from this tree with the same
// script as `npm run build`, started from an empty directory (no node_modules, no sources) on a
// temp data dir and free ports, spoken to over HTTP, stopped with SIGTERM, started again.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import pkg from "../../package.json";
import { migrations } from "../../src/db/migrations";
import { buildBinary, startBinary, type RunningBinary } from "../helpers/binary";

const SECRET = "e2e-secret-that-must-never-be-printed-0123456789";
let work: string;
let bin: string;
let dataDir: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "pier-e2e-"));
  dataDir = join(work, "data");
  bin = await buildBinary();
}, 180_000);

afterAll(() => {
  for (const p of running) p.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

const running = new Set<Subprocess>();
const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, ...extra });

/** Start `pier serve` and wait for the banner (killed at the end if a test leaves it running). */
async function start(dir = dataDir, extraEnv: Record<string, string> = { PIER_SECRET_KEY: SECRET }): Promise<RunningBinary> {
  const started = await startBinary(bin, { dataDir: dir, cwd: work, env: env(extraEnv) });
  running.add(started.proc);
  return started;
}

async function stop(s: RunningBinary): Promise<number> {
  s.proc.kill("SIGTERM");
  const code = await s.proc.exited;
  running.delete(s.proc);
  return code;
}

const run = (args: string[], extraEnv: Record<string, string> = {}) => {
  const r = Bun.spawnSync([bin, ...args], { cwd: work, env: env(extraEnv), stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
};

describe("the compiled binary", () => {
  test("is one self-contained executable", () => {
    expect(statSync(bin).mode & 0o111).toBeTruthy();
    expect(run(["version"]).stdout.trim()).toBe(pkg.version);
    const help = run(["serve", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--sites-domain");
    expect(help.stdout).toContain("PIER_SMTP_PORT");
  });

  test("refuses bad configuration with exit 2 and a message naming the variable", () => {
    const bad = run(["serve", "--data-dir", dataDir], { PIER_HTTP_PORT: "eighty" });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("configuration error: PIER_HTTP_PORT must be a port number");
    const notADir = join(work, "a-file");
    writeFileSync(notADir, "x");
    const cannot = run(["serve", "--data-dir", notADir, "--http-port", "0", "--smtp-port", "off", "--host", "127.0.0.1"]);
    expect(cannot.code).toBe(1);
    expect(cannot.stderr).toContain("pier: could not start:");
    expect(cannot.stderr).toContain(notADir);
    const taken = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("someone else") });
    try {
      const busy = run(["serve", "--data-dir", join(work, "data-busy"), "--http-port", String(taken.port), "--smtp-port", "off", "--host", "127.0.0.1"]);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toContain(
        `pier: port ${taken.port} (HTTP) is already in use by another program. Stop that program (or the other Pier), or choose another port with --http-port.`,
      );
      expect(busy.stderr).not.toContain("?.");
    } finally {
      taken.stop(true);
    }
    const unknown = run(["serve", "--htp-port", "1"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown option --htp-port");
  });

  test("serves, runs its embedded migrations, stops cleanly on SIGTERM, and starts again on the same data", async () => {
    const first = await start();
    try {
      expect(first.port).toBeGreaterThan(0);
      const status = await fetch(`${first.url}/api/v1/status`);
      expect(status.status).toBe(200);
      expect(status.headers.get("x-request-id")).toMatch(/^req_/);
      const body = (await status.json()) as { data: { server_version: string; urls: { base_url: string } } };
      expect(body.data.server_version).toBe(pkg.version);
      expect(body.data.urls.base_url).toBe(`http://localhost:${first.port}`);

      // The API reference works with no internet: the UI script is served from the binary.
      const docs = await (await fetch(`${first.url}/docs`)).text();
      expect(docs).toContain("/docs/assets/scalar.js");
      expect(docs).not.toMatch(/https:\/\/(cdn|unpkg|fonts)\./);
      const script = await fetch(`${first.url}/docs/assets/scalar.js`);
      expect(script.status).toBe(200);
      expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
      const spec = (await (await fetch(`${first.url}/docs/json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(spec.paths)).toContain("/api/v1/status");
      // So do the guides: embedded in the binary, rendered by its Markdown worker.
      const guide = await fetch(`${first.url}/docs/guides/deployment`);
      expect(guide.status).toBe(200);
      expect(await guide.text()).toContain('<h1 id="deploying-pier">Deploying Pier</h1>');

      // Migrations ran inside the binary: a real database with the schema and the record of them.
      const db = new Database(join(dataDir, "pier.db"), { readonly: true });
      try {
        const tables = db
          .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
          .all()
          .map((r) => r.name);
        expect(tables).toContain("jobs");
        expect(tables).toContain("__pier_migrations");
        const applied = db
          .query<{ name: string }, []>("SELECT name FROM __pier_migrations ORDER BY name")
          .all()
          .map((r) => r.name);
        expect(applied).toEqual(migrations.map((m) => m.name));
      } finally {
        db.close();
      }

      // The same binary is its own health check (the container image has no curl).
      const health = run(["healthcheck", "--http-port", String(first.port)]);
      expect(health.code).toBe(0);
      expect(health.stdout).toContain("ok: Pier");

      expect(first.output()).toContain("migrations applied");
      expect(first.output()).not.toContain(SECRET);
    } finally {
      expect(await stop(first)).toBe(0);
    }
    expect(first.output()).toContain("SIGTERM received, shutting down");
    expect(run(["healthcheck", "--http-port", String(first.port)]).code).toBe(1);

    // Second start on the same data dir: nothing to migrate, data intact.
    const second = await start();
    try {
      expect((await fetch(`${second.url}/api/v1/status`)).status).toBe(200);
      expect(second.output()).not.toContain("migrations applied");
    } finally {
      expect(await stop(second)).toBe(0);
    }
  });

  test("without a configured key it generates one into the data dir (0600) and keeps it across restarts", async () => {
    const dir = join(work, "data-genkey");
    const a = await start(dir, {});
    const key = await Bun.file(join(dir, "secret.key")).text();
    expect(key.trim().length).toBeGreaterThanOrEqual(32);
    expect(statSync(join(dir, "secret.key")).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700); // a data dir Pier creates is private
    expect(a.output()).toContain(`Secret key         ${join(dir, "secret.key")}`);
    expect(await stop(a)).toBe(0);
    const b = await start(dir, {});
    expect(await stop(b)).toBe(0);
    expect(await Bun.file(join(dir, "secret.key")).text()).toBe(key);
    expect(a.output() + b.output()).not.toContain(key.trim());
  });

  test("with --workers 2 two processes answer on the one port, and SIGTERM stops both", async () => {
    const dir = join(work, "data-workers");
    // A fixed --metrics-port: the primary's alone (a worker binding it too could not start).
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(null) });
    const metricsPort = probe.port!;
    probe.stop(true);
    const s = await startBinary(bin, {
      dataDir: dir,
      cwd: work,
      env: env({ PIER_SECRET_KEY: SECRET }),
      args: ["--workers", "2", "--metrics-port", String(metricsPort)],
    });
    running.add(s.proc);
    // Site requests are answered by whichever process accepted the connection; the request id's
    // prefix names the process. A new connection per request lets the kernel pick again.
    const seen = new Set<string>();
    const deadline = Date.now() + 60_000;
    let asked = 0;
    while (seen.size < 2 && Date.now() < deadline) {
      const r = await fetch(`${s.url}/`, { headers: { host: "nosuchsite1.localhost", connection: "close" } });
      await r.text();
      asked++;
      expect(r.status).toBe(404);
      seen.add((r.headers.get("x-request-id") ?? "").slice(0, 13));
      await Bun.sleep(20);
    }
    expect(seen.size).toBe(2);
    // /metrics counts both processes' answers (the worker's reach the primary over IPC).
    const siteMisses = (text: string) => Number(/^pier_http_requests_total\{host="site",group="page",status="4xx"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    let counted = 0;
    for (const until = Date.now() + 30_000; counted < asked && Date.now() < until; await Bun.sleep(200))
      counted = siteMisses(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
    expect(counted).toBe(asked);
    // The API (relayed to the primary by the worker) answers whichever process took the connection.
    for (let i = 0; i < 6; i++) expect((await fetch(`${s.url}/api/v1/status`, { headers: { connection: "close" } })).status).toBe(200);
    expect(await stop(s)).toBe(0);
    // Nobody is left on the port: the worker went with the primary.
    let refused = false;
    for (let i = 0; i < 100 && !refused; i++) {
      refused = await fetch(`${s.url}/api/v1/status`, { headers: { connection: "close" } }).then(
        () => false,
        () => true,
      );
      if (!refused) await Bun.sleep(100);
    }
    expect(refused).toBe(true);
  }, 120_000);
});
