// The crash matrix's rig: the compiled binary on a temp data dir, SIGKILLed at a random moment of
// an operation and started again on the same data dir, with the client calls and the checks that
// every crash test makes afterwards (the in-process `pier admin check`, listings, downloads).
import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { DiskBlobStore } from "../../src/blobs/disk";
import { systemClock } from "../../src/core/clock";
import { checkDataDir } from "../../src/features/operations";
import { buildBinary, startBinary, type RunningBinary } from "../helpers/binary";
import type { TestPier } from "../helpers/pier";

const SECRET = "crash-matrix-secret-key-0123456789-abcdefghijklmnop";

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export class CrashRig {
  work = "";
  dataDir = "";
  bin = "";
  key = "";
  server: RunningBinary | null = null;

  constructor(private readonly serveArgs: string[] = []) {}

  env(): Record<string, string> {
    return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: this.work, PIER_SECRET_KEY: SECRET, PIER_LOG_LEVEL: "error" };
  }

  run(args: string[]): { code: number; stdout: string; stderr: string } {
    const r = Bun.spawnSync([this.bin, ...args], { cwd: this.work, env: this.env(), stdout: "pipe", stderr: "pipe" });
    return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  }

  /** Build the binary, bootstrap an admin (its key in `key`) and start the server. */
  async setUp(prefix: string): Promise<void> {
    this.work = mkdtempSync(join(tmpdir(), prefix));
    this.dataDir = join(this.work, "data");
    this.bin = await buildBinary();
    const boot = this.run(["admin", "bootstrap", "--email", "ops@example.com", "--password", "correct horse battery staple", "--data-dir", this.dataDir]);
    if (boot.code !== 0) throw new Error(`bootstrap failed: ${boot.stderr}`);
    this.key = boot.stdout.trim();
    await this.start();
  }

  tearDown(): void {
    this.server?.proc.kill("SIGKILL");
    if (this.work) rmSync(this.work, { recursive: true, force: true });
  }

  async start(): Promise<void> {
    const t0 = Date.now();
    this.server = await startBinary(this.bin, { dataDir: this.dataDir, cwd: this.work, env: this.env(), args: this.serveArgs });
    if (process.env.PIER_CRASH_TIMING) console.log(`start ${Date.now() - t0} ms`);
  }

  async crash(): Promise<void> {
    this.server!.proc.kill("SIGKILL");
    await this.server!.proc.exited;
    this.server = null;
  }

  /**
   * Kill at a random moment between `minMs` and `maxMs` from now, while `op` runs, then start
   * again; the op's own outcome is ignored. `whileDown` looks at the data dir between the kill
   * and the restart.
   */
  async killDuring(op: () => Promise<unknown>, maxMs: number, whileDown?: () => void, minMs = 0): Promise<void> {
    const pending = op().catch(() => null);
    await Bun.sleep(Math.floor(minMs + Math.random() * Math.max(0, maxMs - minMs)));
    await this.crash();
    await pending;
    whileDown?.();
    await this.start();
  }

  /** One value read from the data dir's database (read-only, the server may be down or running). */
  sql<T>(query: string, ...params: string[]): T | null {
    const db = new Database(join(this.dataDir, "pier.db"), { readonly: true });
    try {
      return db.query<T, string[]>(query).get(...params);
    } finally {
      db.close();
    }
  }

  get url(): string {
    return this.server!.url;
  }

  /** A URL the server handed out (it says localhost and its own port) pointed at the running server. */
  local(url: string): string {
    return url.replace(/^http:\/\/localhost:\d+/, this.url);
  }

  async api(method: string, path: string, o: { key?: string; body?: unknown } = {}): Promise<ApiAnswer> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${o.key ?? this.key}`,
        accept: "application/json",
        ...(o.body !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: o.body !== undefined ? JSON.stringify(o.body) : undefined,
      redirect: "manual",
    });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, headers: res.headers, body, text };
  }

  /** The upload helpers take a TestPier; only its `api` is used. */
  client(): TestPier {
    return { api: (m: string, p: string, o: { key?: string; body?: unknown } = {}) => this.api(m, p, o) } as unknown as TestPier;
  }

  /** The same check as `pier admin check`, in-process (the binary is slow to start: once per test). */
  async quickCheck(): Promise<void> {
    const sqlite = new Database(join(this.dataDir, "pier.db"));
    try {
      const report = await checkDataDir({ sqlite, blobs: new DiskBlobStore(join(this.dataDir, "blobs")), clock: systemClock, dataDir: this.dataDir });
      expect(report.findings).toEqual([]);
    } finally {
      sqlite.close();
    }
  }

  /** `pier admin check` through the binary: exit 0, nothing printed. */
  adminCheck(): void {
    const t0 = Date.now();
    const r = this.run(["admin", "check", "--data-dir", this.dataDir]);
    if (process.env.PIER_CRASH_TIMING) console.log(`check ${Date.now() - t0} ms`);
    expect({ code: r.code, out: r.stdout, err: r.code ? r.stderr : "" }).toEqual({ code: 0, out: "", err: "" });
  }

  async newBucket(title: string): Promise<string> {
    const r = await this.api("POST", "/api/v1/buckets", { body: { bucket: { title } } });
    if (r.status !== 201) throw new Error(`bucket: ${r.text}`);
    return r.body.data.bucket.id;
  }

  /** `path:sha256` of every current file, sorted. */
  async listing(bucket: string): Promise<string[]> {
    const out: string[] = [];
    for (let offset = 0; ; offset += 1000) {
      const r = await this.api("GET", `/api/v1/buckets/${bucket}/files?limit=1000&offset=${offset}`);
      expect(r.status).toBe(200);
      const files = r.body.data.files as { path: string; sha256: string }[];
      out.push(...files.map((f) => `${f.path}:${f.sha256}`));
      if (files.length < 1000) break;
    }
    return out.sort();
  }

  async download(bucket: string, path: string): Promise<Uint8Array | null> {
    const dl = await this.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=${encodeURIComponent(path)}`);
    const loc = dl.headers.get("location");
    if (!loc) return null;
    const res = await fetch(this.local(loc));
    return res.status === 200 ? new Uint8Array(await res.arrayBuffer()) : null;
  }

  /**
   * The version a crash test's site serves (its index says `<h1>vN</h1>`, page i `<p>vN page i</p>`)
   * once the index and the sampled pages agree. Answers may disagree for a moment without a mix:
   * a deploy switching between two requests, or a serving worker that has not yet heard of it
   * (docs/decisions.md D194: about 200 ms). A disagreement that lasts 5 s fails.
   */
  async siteVersion(slug: string, sample: number[]): Promise<number> {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const index = await this.page(slug, "/");
      const m = /^<h1>v(\d+)<\/h1>$/.exec(index);
      if (!m) throw new Error(`the site answers ${index}`);
      const v = Number(m[1]);
      const pages = await Promise.all(sample.map((i) => this.page(slug, `/p${i}.html`)));
      const whole = sample.map((i) => `<p>v${v} page ${i}</p>`);
      if (pages.every((page, k) => page === whole[k])) return v;
      if (Date.now() > deadline) expect({ index, pages }).toEqual({ index, pages: whole });
      await Bun.sleep(50);
    }
  }

  /** Wait as long as a change may take to reach every serving worker, and some, for version v to serve whole. */
  async expectSiteVersion(slug: string, v: number, sample: number[]): Promise<void> {
    const deadline = Date.now() + 5_000;
    let live = await this.siteVersion(slug, sample);
    while (live !== v && Date.now() < deadline) {
      await Bun.sleep(50);
      live = await this.siteVersion(slug, sample);
    }
    expect(live).toBe(v);
  }

  /** A page of a published site (by its slug's host), or `status N`. */
  async page(slug: string, path: string): Promise<string> {
    const res = await fetch(`${this.url}${path}`, { headers: { host: `${slug}.localhost` } });
    return res.status === 200 ? res.text() : `status ${res.status}`;
  }
}

export async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}
