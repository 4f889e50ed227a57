// Attacks on the metrics endpoint: scraping without (or with a wrong, partial or borrowed)
// token, reaching it where it should not exist (by default, on site hosts, on a public address
// for the loopback port), and smuggling user-chosen text (paths, emails, titles, tokens) into
// label values to blow up cardinality or leak it to whoever reads the metrics.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HOST_KINDS, ROUTE_GROUPS, SITE_CACHE_RESET_SCOPES, SMTP_REFUSALS, STATUS_CLASSES } from "../../src/core/pier-metrics";
import { createBucket } from "../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { sessionCookie } from "../helpers/oauth";
import { publishSite, siteFetch } from "../helpers/sites";

const TOKEN = "metrics-token-for-tests-0123456789";
let t: TestPier;
let u: TestUser;

beforeAll(async () => {
  t = await startTestPier({ metricsToken: TOKEN, metricsPort: 0 });
  u = await t.user({ email: "secret-person@example.com" });
});
afterAll(() => t?.stop());

const scrape = async (token: string | null = TOKEN) => {
  const res = await fetch(`${t.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text(), headers: res.headers };
};

describe("who can scrape", () => {
  test("without the token, with a wrong one or a prefix of it: 401 and no metric in the body", async () => {
    for (const token of [null, "wrong-token-wrong-token-wrong", TOKEN.slice(0, -1), `${TOKEN}x`]) {
      const r = await scrape(token);
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toContain("Bearer");
      expect(r.text).not.toContain("pier_http_requests_total");
      expect(JSON.parse(r.text).error.code).toBe("UNAUTHORIZED");
    }
  });

  test("an API key is not the metrics token", async () => {
    expect((await scrape(u.key)).status).toBe(401);
  });

  test("not served on the API host when no token is configured (never open by default)", async () => {
    const bare = await startTestPier();
    try {
      const r = await fetch(`${bare.url}/metrics`);
      expect(r.status).toBe(404);
      expect(await r.text()).not.toContain("pier_");
      expect(bare.pier.ports.metrics).toBeNull();
    } finally {
      await bare.stop();
    }
  });

  test("not served on a site host even with the token", async () => {
    const site = await publishSite(t, { files: [{ path: "index.html", bytes: "<p>hi</p>" }], user: u });
    const r = await siteFetch(t, site.host, "/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await r.text()).not.toContain("pier_http_requests_total");
  });

  test("the metrics port is bound to loopback and needs no token", async () => {
    const port = t.pier.ports.metrics!;
    expect(port).toBeGreaterThan(0);
    const r = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(r.status).toBe(200);
    expect(await r.text()).toContain("pier_http_requests_total");
    expect((await fetch(`http://127.0.0.1:${port}/livez`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/anything-else`)).status).toBe(404);
    // Not reachable on any other address of this machine.
    const { networkInterfaces } = await import("node:os");
    const other = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal);
    if (other) await expect(fetch(`http://${other.address}:${port}/metrics`, { signal: AbortSignal.timeout(5000) })).rejects.toThrow();
  });
});

describe("/readyz: anyone learns whether Pier is ready and which check fails, only the operator why", () => {
  const localReadyz = async () => {
    const res = await fetch(`http://127.0.0.1:${t.pier.ports.metrics}/readyz`);
    return { status: res.status, body: (await res.json()) as any };
  };

  test("a failing check is one word for a stranger, a member's key or a wrong credential; the sentence for the metrics token, an instance admin or the loopback port", async () => {
    // u is the instance's first user: its instance admin.
    const admin = t.pier.deps.sqlite.query<{ a: number }, [string]>("SELECT is_instance_admin AS a FROM users WHERE id = ?").get(u.userId)!;
    expect(admin.a).toBe(1);
    const member = await t.user();
    const db = t.pier.deps.sqlite;
    const last = db.query<{ name: string; applied_at: string }, []>("SELECT name, applied_at FROM __pier_migrations ORDER BY name DESC LIMIT 1").get()!;
    db.query("DELETE FROM __pier_migrations WHERE name = ?").run(last.name);
    try {
      const narrowAdminKey = t.key(u, { scope: "bucket_read" });
      for (const key of [undefined, member.key, narrowAdminKey, "pier_not_a_real_key_0000000000000000", TOKEN.slice(0, -1)]) {
        const r = await t.api("GET", "/readyz", { key });
        expect(r.status).toBe(503);
        expect(r.body.error.code).toBe("NOT_READY");
        expect(r.body.error.details.checks).toEqual({ database: "ok", disk: "ok", migrations: "not_applied" });
        expect(r.text).not.toContain(last.name);
      }
      for (const key of [TOKEN, u.key]) {
        const r = await t.api("GET", "/readyz", { key });
        expect(r.status).toBe(503);
        expect(r.body.error.details.checks.migrations).toBe(`not applied: ${last.name}`);
      }
      // The instance admin signed in to the dashboard, opening /readyz in the same browser.
      const browser = await t.api("GET", "/readyz", { headers: { cookie: sessionCookie(t, u) } });
      expect(browser.body.error.details.checks.migrations).toBe(`not applied: ${last.name}`);
      const local = await localReadyz();
      expect(local.status).toBe(503);
      expect(local.body.error.details.checks.migrations).toBe(`not applied: ${last.name}`);
    } finally {
      db.query("INSERT INTO __pier_migrations (name, applied_at) VALUES (?, ?)").run(last.name, last.applied_at);
    }
  });
});

describe("label values", () => {
  test("no label value is a path, email, title or token: every label value is one of the declared ones", async () => {
    await createBucket(t, u, { title: "Quarterly Secret Plans" });
    const site = await publishSite(t, { files: [{ path: "index.html", bytes: "hi" }], user: u, title: "Quarterly Secret Plans" });
    await (await siteFetch(t, site.host, "/no-such-page-secret-path.html?email=secret-person@example.com")).text();
    await t.api("GET", "/api/v1/buckets/secret-person@example.com/files?path=Quarterly%20Secret%20Plans", { key: u.key });
    await fetch(`${t.url}/_storage/some-signed-token-value`, { method: "PUT", body: "x" }).then((r) => r.text());
    const r = await scrape();
    for (const needle of ["secret-person", "example.com", "Quarterly", "Secret", "no-such-page", "some-signed-token", TOKEN, u.key, "bkt_"])
      expect(r.text).not.toContain(needle);
    const allowed: Record<string, Set<string>> = {
      host: new Set(HOST_KINDS),
      group: new Set(ROUTE_GROUPS),
      status: new Set(STATUS_CLASSES),
      reason: new Set(SMTP_REFUSALS),
      state: new Set(["queued", "running", "failed", "pending", "issued"]),
      kind: new Set([...Object.keys((await import("../../src/jobs/tasks")).jobHandlers), "other", "rss", "heap_used", "heap_total", "external"]),
      quantile: new Set(["mean", "p99", "max"]),
      certificate: new Set(["api", "mx", "earliest_other"]),
      scope: new Set(SITE_CACHE_RESET_SCOPES),
    };
    for (const line of r.text.split("\n")) {
      if (line.startsWith("#") || !line.includes("{")) continue;
      for (const [, name, value] of line.matchAll(/([a-z_]+)="([^"]*)"/g)) {
        if (name === "le") continue;
        expect(allowed[name!]?.has(value!) ? value : `${name}=${value} in ${line}`).toBe(value!);
      }
    }
  });
});
