// Start a real Pier in-process on free loopback ports with a temp data dir, and talk HTTP to it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type Config } from "../../src/config";
import { ManualClock } from "../../src/core/clock";
import type { Scope } from "../../src/core/context";
import { silentLogger, type Logger } from "../../src/core/log";
import { createApiKey } from "../../src/features/accounts/keys";
import { hashPassword, insertUserWithAccount } from "../../src/features/accounts/service";
import { startPier, type Pier } from "../../src/runtime";
import { RELAY_PEER_HEADER, RELAY_PROTO_HEADER, relaySocketPath } from "../../src/serving-relay";
import { tableResolver } from "../../src/features/mail/sender-auth";
import type { DNSResolver } from "mailauth";

export interface TestPier {
  pier: Pier;
  url: string;
  clock: ManualClock;
  dataDir: string;
  /** Serving processes of this server (PIER_TEST_WORKERS or the servingWorkers option; 1 = this process alone). */
  servingWorkers: number;
  api: (method: string, path: string, opts?: RequestOpts) => Promise<ApiResult>;
  /** A user with its own account and an account-owner key of the given scope. */
  user: (opts?: { email?: string; plan?: string; scope?: Scope }) => Promise<TestUser>;
  key: (u: TestUser, opts: { scope: Scope; bucketAccess?: "all" | "selected"; bucketPermissions?: Record<string, "read" | "write" | "admin"> }) => string;
  /**
   * A request answered by this test process's Pier (the primary) even with serving workers on
   * (PIER_TEST_WORKERS): sent through the relay socket, as a worker passes requests on. Only for
   * what only this process can show: answers that follow the test's ManualClock (workers run on
   * the real clock) and lines of the test's logger (workers log to their own output); everything
   * else goes to the shared port like any client.
   */
  primaryFetch: (host: string, path: string, init?: { method?: string; headers?: Record<string, string> }) => Promise<Response>;
  stop: () => Promise<void>;
}

export interface TestUser {
  userId: string;
  accountId: string;
  email: string;
  password: string;
  key: string;
}

export interface RequestOpts {
  key?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface ApiResult {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

let counter = 0;

// Every test user has the same password, so one argon2id hash of it serves them all: a fresh hash
// costs a tenth of a second of CPU and 64 MiB (more on a busy machine), and hundreds of test users
// are made per run. Sign-in still verifies the password against this real argon2id hash.
const TEST_PASSWORD = "correct horse battery staple";
let testPasswordHash: Promise<string> | null = null;
const hashOfTestPassword = () => (testPasswordHash ??= hashPassword(TEST_PASSWORD));

export async function startTestPier(
  overrides: Partial<Config> = {},
  opts: {
    startWorker?: boolean;
    mailResolver?: DNSResolver;
    log?: Logger;
    servingWorkers?: number;
    changePollMs?: number;
    /** How git sync resolves git server names (default: the system resolver). */
    gitLookup?: (host: string) => Promise<string[]>;
  } = {},
): Promise<TestPier> {
  const dataDir = mkdtempSync(join(tmpdir(), "pier-test-"));
  const config = {
    ...loadConfig({}, {}),
    dataDir,
    host: "127.0.0.1",
    httpPort: 0,
    smtpPort: null,
    httpsPort: null,
    secretKey: "test-secret-key-test-secret-key-test-secret-key",
    // Every test request comes from 127.0.0.1; rate-limit tests pass their own small limits.
    rateLimitAnonPerMinute: 100_000,
    // Custom-domain checks never ask real DNS in tests: a closed loopback port answers nothing
    // (tests that check records pass the challtestsrv DNS server of test/helpers/challtestsrv.ts).
    dnsResolver: "127.0.0.1:9",
    ...overrides,
  };
  const clock = new ManualClock();
  // Mail authentication checks never query real DNS in tests: an empty table fails every lookup.
  const mailResolver = opts.mailResolver ?? tableResolver({});
  // PIER_TEST_WORKERS=2 runs every test server with serving workers (docs/deployment.md).
  const servingWorkers = opts.servingWorkers ?? Number(process.env.PIER_TEST_WORKERS ?? 1);
  const pier = await startPier(config, {
    clock,
    log: opts.log ?? silentLogger,
    startWorker: opts.startWorker ?? false,
    mailResolver,
    servingWorkers,
    changePollMs: opts.changePollMs,
    gitLookup: opts.gitLookup,
  });
  const url = `http://127.0.0.1:${pier.httpPort}`;

  const api = async (method: string, path: string, o: RequestOpts = {}): Promise<ApiResult> => {
    const headers: Record<string, string> = { accept: "application/json", ...o.headers };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    let body: string | undefined = o.rawBody;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers["content-type"] = "application/json";
    }
    if (o.rawBody !== undefined && !headers["content-type"]) headers["content-type"] = "application/json";
    const res = await fetch(url + path, { method, headers, body, redirect: "manual" });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, headers: res.headers, body: parsed, text };
  };

  const user = async (o: { email?: string; plan?: string; scope?: Scope } = {}): Promise<TestUser> => {
    const email = o.email ?? `user${++counter}-${Date.now()}@example.com`;
    const password = TEST_PASSWORD;
    // Test users stand for ordinary users: a test that wants the owner plan asks for it, even
    // for the instance's first user (who gets the owner plan when nobody names one).
    const { user: u, account } = insertUserWithAccount(pier.deps, {
      email,
      passwordHash: await hashOfTestPassword(),
      plan: o.plan ?? pier.deps.config.defaultPlan,
    });
    const { key } = createApiKey(pier.deps, { accountId: account.id, userId: u.id, label: "test", kind: "owner", scope: o.scope ?? "bucket_admin" });
    return { userId: u.id, accountId: account.id, email, password, key };
  };

  const key: TestPier["key"] = (u, k) =>
    createApiKey(pier.deps, {
      accountId: u.accountId,
      userId: u.userId,
      label: `test ${k.scope}`,
      kind: "named",
      scope: k.scope,
      bucketAccess: k.bucketAccess,
      bucketPermissions: k.bucketPermissions,
    }).key;

  const primaryFetch: TestPier["primaryFetch"] = (host, path, init = {}) => {
    const headers = { host, ...init.headers };
    if (servingWorkers <= 1) return fetch(url + path, { method: init.method, headers, redirect: "manual" });
    return fetch(`http://${host}${path}`, {
      unix: relaySocketPath(dataDir),
      method: init.method,
      headers: { ...headers, [RELAY_PEER_HEADER]: "127.0.0.1", [RELAY_PROTO_HEADER]: "http" },
      redirect: "manual",
    } as RequestInit);
  };

  return {
    pier,
    url,
    clock,
    dataDir,
    servingWorkers,
    api,
    user,
    key,
    primaryFetch,
    stop: async () => {
      await pier.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** What a user's all-buckets API key resolves to, for tests that call a service directly. */
export const apiKeyActorOf = (u: TestUser, scope: "bucket_admin" | "bucket_read" = "bucket_admin") => ({
  kind: "api_key" as const,
  credentialId: "test",
  userId: u.userId,
  accountId: u.accountId,
  scope,
  bucketAccess: "all" as const,
  bucketPermissions: {},
  isAccountOwner: true,
  isInstanceAdmin: false,
});
