// Shared bench helpers: a real `pier serve` subprocess on a temp data dir with a seeded key,
// RSS sampling from /proc, and percentile maths.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { Actor, Deps } from "../src/core/context";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { createApiKey } from "../src/features/accounts/keys";
import { hashPassword, insertUserWithAccount } from "../src/features/accounts/service";
import { buckets } from "../src/db/schema";
import { activateDeploy, writeDeploy } from "../src/features/publish/deploys";
import { createPublication } from "../src/features/publish/publications";
import { createDeps } from "../src/runtime";
import { spawnFromSource } from "../test/helpers/binary";

export const root = join(import.meta.dir, "..");

export interface BenchServer {
  url: string;
  key: string;
  dataDir: string;
  proc: Subprocess;
  stop(): Promise<void>;
}

export async function startServer(
  dataDir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "pier-bench-")),
  extraArgs: string[] = [],
): Promise<BenchServer> {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  const config = { ...loadConfig({}, {}), dataDir, httpPort: port, smtpPort: null };
  const deps = await createDeps(config, port, { log: silentLogger });
  const { user, account } = insertUserWithAccount(deps, {
    email: `bench${Date.now()}@example.com`,
    passwordHash: await hashPassword("bench password 123"),
    plan: undefined,
  });
  const key = createApiKey(deps, { accountId: account.id, userId: user.id, label: "bench", kind: "owner", scope: "bucket_admin" }).key;
  deps.close();
  const { proc, url } = await spawnFromSource({
    dataDir,
    httpPort: port,
    args: ["--log-level", "error", "--rate-limit-per-minute", "1000000", ...extraArgs],
  });
  return {
    url,
    key,
    dataDir,
    proc,
    stop: async () => {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** RSS in MiB; 0 once the process is gone. */
export function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

// --- /proc: a server's process tree (serving workers are its children), CPU ticks and RSS.
function children(pid: number): number[] {
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const kids = tasks.flatMap((t) => {
    try {
      return readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
  return kids.flatMap((k) => [k, ...children(k)]);
}
export const processTree = (pid: number): number[] => [pid, ...children(pid)];
/** [user, system] clock ticks a process has used (0, 0 once it is gone). */
export function cpuTicks(pid: number): [number, number] {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return [Number(fields[11]), Number(fields[12])]; // utime, stime
  } catch {
    return [0, 0];
  }
}
/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on Linux). */
export const TICKS_PER_SECOND = 100;

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function api(s: BenchServer, method: string, path: string, body?: unknown) {
  const res = await fetch(s.url + path, {
    method,
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: "manual",
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/**
 * A fresh data dir holding one account and one live main site `slug` serving `files`, published
 * through the real deploy code; closed again, ready for `pier serve --data-dir`.
 */
export async function publishFixtureSite(dataDir: string, secretKey: string, slug: string, files: Record<string, Uint8Array>): Promise<void> {
  const config = { ...loadConfig({}, {}), dataDir, secretKey };
  const deps = await createDeps(config, 0, { log: silentLogger });
  const { account } = insertUserWithAccount(deps, { email: "bench@example.com", passwordHash: "x" });
  const now = new Date().toISOString();
  const bucket = deps.db
    .insert(buckets)
    .values({ id: `bkt_${slug}`, accountId: account.id, title: slug, createdAt: now, updatedAt: now })
    .returning()
    .get();
  const pub = createPublication(deps, { bucketId: bucket.id, accountId: account.id, kind: "main", slug });
  const deploy = await writeDeploy(
    deps,
    pub.id,
    Object.entries(files).map(([path, bytes]) => ({ path, bytes })),
  );
  activateDeploy(deps, pub.id, deploy.deployId);
  deps.close();
}

/** A new user's account and that owner acting with a whole-account key (benchmarks that call services directly). */
export function benchOwner(deps: Deps): { accountId: string; actor: Actor } {
  const { user, account } = insertUserWithAccount(deps, { email: "bench@example.com", passwordHash: "x" });
  const actor: Actor = {
    kind: "api_key",
    credentialId: "bench",
    userId: user.id,
    accountId: account.id,
    scope: "bucket_admin",
    bucketAccess: "all",
    bucketPermissions: {},
    isAccountOwner: true,
    isInstanceAdmin: false,
  };
  return { accountId: account.id, actor };
}

/** Wall time of `run` and the longest gap between 1 ms ticks meanwhile (the event loop held). */
export async function measureStall<T>(run: () => Promise<T> | T): Promise<{ ms: number; stall: number; out: T }> {
  let last = performance.now();
  let stall = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 1);
  const start = performance.now();
  const out = await run();
  const ms = performance.now() - start;
  clearInterval(tick);
  return { ms, stall: Math.max(stall, performance.now() - last), out };
}
