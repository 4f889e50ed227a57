// The HTTP core over real sockets: request ids and version headers on every kind of response,
// rate limits with Retry-After, the start-up banner and `pier healthcheck` against a live server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import pkg from "../../../package.json";
import { connectHost, healthcheck } from "../../../src/cli/healthcheck";
import { startupBanner } from "../../../src/cli/serve";
import { startTestPier, type TestPier } from "../../helpers/pier";

const REQ_ID = /^req_[a-z0-9]{20}$/;

describe("every response carries X-Request-Id and X-Pier-Client-Version", () => {
  let t: TestPier;
  beforeAll(async () => {
    t = await startTestPier();
  });
  afterAll(() => t.stop());

  const raw = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) => fetch(`${t.url}${path}`, { redirect: "manual", ...init });

  const cases: Array<[string, () => Promise<Response>, number]> = [
    ["a success", () => raw("/api/v1/status"), 200],
    ["an unknown API route (404)", () => raw("/api/v1/nope"), 404],
    ["a path outside /api (404)", () => raw("/definitely/not/here"), 404],
    ["a missing key (401)", () => raw("/api/v1/buckets"), 401],
    ["a bad key (401)", () => raw("/api/v1/buckets", { headers: { authorization: "Bearer pier_wrong" } }), 401],
    ["malformed JSON (400)", () => raw("/api/v1/buckets", { method: "POST", body: "{nope", headers: { "content-type": "application/json" } }), 400],
    ["the API reference", () => raw("/docs"), 200],
    ["the OpenAPI JSON", () => raw("/docs/json"), 200],
    ["a site host with no site (404)", () => raw("/", { headers: { host: "nosuchsite.localhost" } }), 404],
    ["a malformed Host header (400)", () => raw("/api/v1/status", { headers: { host: "evil.com@localhost" } }), 400],
  ];
  for (const [name, send, status] of cases) {
    test(name, async () => {
      const res = await send();
      expect(res.status).toBe(status);
      expect(res.headers.get("x-request-id")).toMatch(REQ_ID);
      expect(res.headers.get("x-pier-client-version")).toBe(pkg.version);
      if (res.headers.get("content-type")?.includes("application/json") && status >= 400) {
        const body = (await res.json()) as { error: { request_id: string; code: string } };
        expect(body.error.request_id).toBe(res.headers.get("x-request-id")!);
      }
    });
  }

  test("request ids are unique per request", async () => {
    const ids = new Set<string | null>();
    for (let i = 0; i < 20; i++) ids.add((await raw("/api/v1/status")).headers.get("x-request-id"));
    expect(ids.size).toBe(20);
  });

  test("the Host header routes: the API host never serves sites and a site host never reaches the API", async () => {
    const viaIp = await raw("/api/v1/status", { headers: { host: `127.0.0.1:${t.pier.httpPort}` } });
    expect(viaIp.status).toBe(200);
    const viaSite = await raw("/api/v1/status", { headers: { host: "blog.localhost" } });
    expect(viaSite.status).toBe(404);
    expect(viaSite.headers.get("content-type")).toContain("text/html");
  });
});

describe("rate limits", () => {
  test("anonymous callers: 429 RATE_LIMIT_EXCEEDED with Retry-After after the per-IP budget", async () => {
    const t = await startTestPier({ rateLimitAnonPerMinute: 3 });
    try {
      for (let i = 0; i < 3; i++) expect((await t.api("GET", "/api/v1/status")).status).toBe(200);
      const limited = await t.api("GET", "/api/v1/status");
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe("RATE_LIMIT_EXCEEDED");
      expect(limited.body.error.request_id).toBe(limited.headers.get("x-request-id"));
      const retryAfter = Number(limited.headers.get("retry-after"));
      // 3 per minute: one token every 20 s.
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(20);
      expect(limited.body.error.details.retry_after).toBe(retryAfter);
      // Unauthenticated calls to protected routes spend the same budget (no free 401 probing).
      expect((await t.api("GET", "/api/v1/buckets")).status).toBe(429);
      expect((await t.api("GET", "/api/v1/buckets", { key: "pier_guess" })).status).toBe(429);
      // Without --trust-proxy, a forged X-Forwarded-For does not buy a new budget.
      expect((await t.api("GET", "/api/v1/status", { headers: { "x-forwarded-for": "203.0.113.9" } })).status).toBe(429);
      // A valid key is limited per account, not per IP.
      const u = await t.user();
      expect((await t.api("GET", "/api/v1/agent_auth/status", { key: u.key })).status).toBe(200);
    } finally {
      await t.stop();
    }
  });

  test("behind two trusted proxies the client IP is the second X-Forwarded-For entry from the right", async () => {
    const t = await startTestPier({ rateLimitAnonPerMinute: 1, trustProxy: true, trustedProxyHops: 2 });
    try {
      const from = (ip: string) => t.api("GET", "/api/v1/status", { headers: { "x-forwarded-for": `198.51.100.1, ${ip}, 10.0.0.1` } });
      expect((await from("203.0.113.1")).status).toBe(200);
      expect((await from("203.0.113.1")).status).toBe(429);
      expect((await from("203.0.113.2")).status).toBe(200);
    } finally {
      await t.stop();
    }
  });

  test("accounts: 429 after the per-account budget; other accounts are unaffected", async () => {
    const t = await startTestPier({ rateLimitPerMinute: 2 });
    try {
      const a = await t.user();
      const b = await t.user();
      const second = t.key(a, { scope: "bucket_read" });
      expect((await t.api("GET", "/api/v1/buckets", { key: a.key })).status).toBe(200);
      expect((await t.api("GET", "/api/v1/buckets", { key: second })).status).toBe(200);
      // The budget belongs to the account: a second key of it does not get a fresh one.
      const limited = await t.api("GET", "/api/v1/buckets", { key: a.key });
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe("RATE_LIMIT_EXCEEDED");
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect((await t.api("GET", "/api/v1/buckets", { key: second })).status).toBe(429);
      expect((await t.api("GET", "/api/v1/buckets", { key: b.key })).status).toBe(200);
    } finally {
      await t.stop();
    }
  });
});

describe("pier serve banner and pier healthcheck", () => {
  let t: TestPier;
  beforeAll(async () => {
    t = await startTestPier({ secretKey: "banner-secret-banner-secret-banner-secret" });
  });
  afterAll(() => t.stop());

  test("the banner prints the bound ports and addresses, never the secret", () => {
    const banner = startupBanner(t.pier, ["something to look at"]);
    expect(banner).toContain(`Pier ${pkg.version} is running`);
    expect(banner).toMatch(new RegExp(`^  HTTP +127\\.0\\.0\\.1:${t.pier.httpPort}$`, "m"));
    expect(t.pier.httpPort).toBeGreaterThan(0);
    expect(banner).toMatch(/^  SMTP +off$/m);
    expect(banner).toMatch(/^  HTTPS +off$/m);
    expect(banner).toContain(`http://localhost:${t.pier.httpPort}/docs`);
    expect(banner).toContain(`http://<slug>.localhost:${t.pier.httpPort}/`);
    expect(banner).toContain("warning: something to look at");
    expect(banner).not.toContain("banner-secret");
  });

  test("healthcheck exits 0 against a live server and 1 when nothing listens", async () => {
    expect(await healthcheck([], { PIER_HTTP_PORT: String(t.pier.httpPort) })).toBe(0);
    expect(await healthcheck(["--http-port", String(t.pier.httpPort)], {})).toBe(0);
    const free = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const unused = free.port!;
    free.stop(true);
    expect(await healthcheck(["--http-port", String(unused)], {})).toBe(1);
    expect(await healthcheck(["--http-port", "0"], {})).toBe(1);
  });

  test("healthcheck connects to the bound address: loopback for wildcards, the address otherwise", () => {
    expect(connectHost("0.0.0.0")).toBe("127.0.0.1");
    expect(connectHost("::")).toBe("127.0.0.1");
    expect(connectHost("127.0.0.1")).toBe("127.0.0.1");
    expect(connectHost("::1")).toBe("[::1]");
    expect(connectHost("10.0.0.5")).toBe("10.0.0.5");
  });

  test("healthcheck sends the API host, so it works when a base URL is configured", async () => {
    const c = await startTestPier({ baseUrl: "https://pier.example.test", sitesDomain: "sites.example.test", trustProxy: true });
    try {
      const env = { PIER_HTTP_PORT: String(c.pier.httpPort), PIER_BASE_URL: "https://pier.example.test", PIER_SITES_DOMAIN: "sites.example.test" };
      expect(await healthcheck([], env)).toBe(0);
    } finally {
      await c.stop();
    }
  });
});
