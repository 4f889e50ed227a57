// /metrics, /livez and /readyz over real HTTP (and SMTP for the mail counters): what an operator
// scrapes and what each counter counts. Who may scrape, and what never becomes a label value:
// test/security/metrics.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { publishSite, siteFetch } from "../../helpers/sites";
import { directUpload, textFile } from "../../helpers/uploads";
import { RawSmtp } from "../mail/smtp-harness";

const TOKEN = "metrics-token-for-tests-0123456789";
let t: TestPier;
let u: TestUser;

beforeAll(async () => {
  t = await startTestPier({ metricsToken: TOKEN, metricsPort: 0, smtpPort: 0, mailDomain: "mail.pier.test" });
  u = await t.user({ email: "secret-person@example.com" });
});
afterAll(() => t?.stop());

const scrape = async (token: string | null = TOKEN) => {
  const res = await fetch(`${t.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text(), headers: res.headers };
};

/** One sample's value: `name{labels} value`, labels given as a subset to match. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  let found = false;
  for (const line of text.split("\n")) {
    const m = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? "").matchAll(/([a-z_]+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) {
      total += Number(m[3]);
      found = true;
    }
  }
  return found ? total : NaN;
}

describe("/metrics", () => {
  test("with the token: Prometheus text format", async () => {
    const r = await scrape();
    expect(r.status).toBe(200);
    expect(r.type).toContain("text/plain; version=0.0.4");
    expect(r.text).toContain("# TYPE pier_http_requests_total counter");
    expect(r.text).toContain("# TYPE pier_http_request_duration_seconds histogram");
    for (const name of [
      "pier_database_bytes",
      "pier_database_wal_bytes",
      "pier_blob_store_bytes",
      "pier_process_memory_bytes",
      "pier_event_loop_lag_seconds",
      "pier_jobs",
    ])
      expect(r.text).toContain(`# TYPE ${name} gauge`);
    expect(sample(r.text, "pier_database_bytes")).toBeGreaterThan(0);
    expect(sample(r.text, "pier_process_memory_bytes", { kind: "rss" })).toBeGreaterThan(1_000_000);
  });
});

describe("what is counted", () => {
  test("API and site requests by host kind, route group and status class, with latencies", async () => {
    const before = await scrape();
    const b = await createBucket(t, u, { title: "Quarterly Secret Plans" });
    expect((await t.api("GET", `/api/v1/buckets/${b.id}`, { key: u.key })).status).toBe(200);
    expect((await t.api("GET", "/api/v1/buckets/bkt_doesnotexist", { key: u.key })).status).toBe(404);
    const site = await publishSite(t, { files: [{ path: "index.html", bytes: "x".repeat(1000) }], user: u });
    // identity: the counter counts the bytes sent, which for a compressible page would be its gzip or br copy.
    expect((await siteFetch(t, site.host, "/", { headers: { "accept-encoding": "identity" } })).status).toBe(200);
    const missing = await siteFetch(t, site.host, "/no-such-page-secret-path.html");
    await missing.text();
    const after = await scrape();
    const delta = (labels: Record<string, string>) =>
      (sample(after.text, "pier_http_requests_total", labels) || 0) - (sample(before.text, "pier_http_requests_total", labels) || 0);
    expect(delta({ host: "api", group: "api", status: "2xx" })).toBeGreaterThanOrEqual(2);
    expect(delta({ host: "api", group: "api", status: "4xx" })).toBeGreaterThanOrEqual(1);
    expect(delta({ host: "site", group: "page", status: "2xx" })).toBeGreaterThanOrEqual(1);
    expect(delta({ host: "site", group: "page", status: "4xx" })).toBeGreaterThanOrEqual(1);
    expect(sample(after.text, "pier_http_request_duration_seconds_count", { host: "site", group: "page", status: "2xx" })).toBeGreaterThanOrEqual(1);
    expect(sample(after.text, "pier_http_request_duration_seconds_bucket", { host: "api", group: "api", status: "2xx", le: "+Inf" })).toBeGreaterThanOrEqual(2);
    expect(sample(after.text, "pier_site_bytes_served_total") - (sample(before.text, "pier_site_bytes_served_total") || 0)).toBeGreaterThanOrEqual(1000);
  });

  test("storage uploads count under host storage", async () => {
    const b = await createBucket(t, u);
    const before = sample((await scrape()).text, "pier_http_requests_total", { host: "storage", group: "storage", status: "2xx" }) || 0;
    const r = await directUpload(t, u.key, b.id, textFile("a.txt", "hello storage"));
    expect(r.status).toBe(201);
    expect(sample((await scrape()).text, "pier_http_requests_total", { host: "storage", group: "storage", status: "2xx" })).toBe(before + 1);
  });

  test("SMTP sessions, refusals by reason and accepted messages", async () => {
    const before = await scrape();
    const c = await RawSmtp.open(t.pier.smtp!.port);
    await c.cmd("EHLO client.test");
    await c.cmd("MAIL FROM:<a@sender.test>");
    expect((await c.cmd("RCPT TO:<nobody-here@mail.pier.test>")).code).toBe(550);
    c.close();
    const after = await scrape();
    expect(sample(after.text, "pier_smtp_sessions_total") - (sample(before.text, "pier_smtp_sessions_total") || 0)).toBe(1);
    expect(
      sample(after.text, "pier_smtp_refused_total", { reason: "unknown_recipient" }) -
        (sample(before.text, "pier_smtp_refused_total", { reason: "unknown_recipient" }) || 0),
    ).toBe(1);
  });

  test("job runs, failures and run times by kind; queue depth", async () => {
    t.pier.deps.jobs.enqueue("uploads.expire", {});
    await t.pier.runner.drain();
    const r = await scrape();
    expect(sample(r.text, "pier_job_runs_total", { kind: "uploads.expire" })).toBeGreaterThanOrEqual(1);
    expect(sample(r.text, "pier_job_run_seconds_count", { kind: "uploads.expire" })).toBeGreaterThanOrEqual(1);
    expect(sample(r.text, "pier_jobs", { state: "queued" })).toBeGreaterThanOrEqual(0);
  });
});

describe("health", () => {
  test("/livez answers 200 on the API host", async () => {
    const r = await t.api("GET", "/livez");
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe("ok");
  });

  test("/readyz: 200 with every check ok", async () => {
    const r = await t.api("GET", "/readyz");
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ status: "ready", checks: { database: "ok", disk: "ok", migrations: "ok" } });
  });

  test("/readyz: 503 NOT_READY naming the check when a migration is missing (and, to the metrics token, the migration)", async () => {
    const db = t.pier.deps.sqlite;
    const last = db.query<{ name: string; applied_at: string }, []>("SELECT name, applied_at FROM __pier_migrations ORDER BY name DESC LIMIT 1").get()!;
    db.query("DELETE FROM __pier_migrations WHERE name = ?").run(last.name);
    try {
      expect((await t.api("GET", "/readyz")).body.error.details.checks.migrations).toBe("not_applied");
      const r = await t.api("GET", "/readyz", { key: TOKEN });
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe("NOT_READY");
      expect(r.body.error.details.checks.migrations).toContain(last.name);
      expect(r.body.error.details.checks.database).toBe("ok");
    } finally {
      db.query("INSERT INTO __pier_migrations (name, applied_at) VALUES (?, ?)").run(last.name, last.applied_at);
    }
    expect((await t.api("GET", "/readyz")).status).toBe(200);
  });
});

describe("health probes and the anonymous rate limit", () => {
  let small: TestPier;
  beforeAll(async () => {
    small = await startTestPier({ rateLimitAnonPerMinute: 3 });
  });
  afterAll(() => small?.stop());

  test("a load balancer probing /livez and /readyz from one address is never throttled; other anonymous calls still are", async () => {
    for (let i = 0; i < 12; i++) {
      expect((await small.api("GET", "/livez")).status).toBe(200);
      expect((await small.api("GET", "/readyz")).status).toBe(200);
    }
    // The same address's anonymous budget (3 a minute) is untouched by the 24 probes above.
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await small.api("GET", "/api/v1/status")).status);
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses.slice(3)).toEqual([429, 429]);
    // And probes keep answering while the address is limited.
    expect((await small.api("GET", "/livez")).status).toBe(200);
    expect((await small.api("GET", "/readyz")).status).toBe(200);
  });
});
