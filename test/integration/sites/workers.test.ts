// `--workers 2`: two serving workers (processes of their own) share the HTTP port with
// SO_REUSEPORT; the primary (this test process) hands them the port once they listen and answers
// what they relay. Every check opens a new connection per request so the kernel
// spreads them, and tells the processes apart by the request id's per-process prefix.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { MIN_FILL_MS, startedToken } from "../../../src/features/forms";
import { activateDeploy, writeDeploy } from "../../../src/features/publish/deploys";
import { markUnpublished, setPublicationAccess } from "../../../src/features/publish/publications";
import { loadConfig } from "../../../src/config";
import { MAX_AUTO_WORKERS, workerCount } from "../../../src/serving-workers";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { rawRequest } from "../../helpers/raw-http";
import { publishSite, type PublishedSite } from "../../helpers/sites";
import { directUpload, newBucket } from "../../helpers/uploads";

let t: TestPier;
const DEADLINE_MS = 45_000;
const METRICS_TOKEN = "metrics-token-for-worker-tests-0123456789";
let metricsPort: number;

/** A port free right now (a fixed --metrics-port: the primary's alone, which workers must leave to it). */
function freePort(): number {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(null) });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

beforeAll(async () => {
  metricsPort = freePort();
  t = await startTestPier({ rateLimitPerMinute: 10, metricsToken: METRICS_TOKEN, metricsPort }, { servingWorkers: 2 });
});
afterAll(async () => {
  await t?.stop();
});

/** The process that answered: request ids are a per-process prefix and a counter. */
const processOf = (r: Response) => (r.headers.get("x-request-id") ?? "").slice(0, "req_".length + 9);

/** A fresh connection per request (reusePort picks a process per connection). */
function fresh(host: string, path: string, headers: Record<string, string> = {}, body?: string) {
  return fetch(`${t.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    body,
    redirect: "manual",
    keepalive: false,
    headers: { host, connection: "close", ...headers },
  } as RequestInit);
}

/**
 * Ask until two different processes have each given an answer `ok` accepts (a process that has
 * not seen a change yet may answer the old way first: the deadline is what bounds the delay).
 */
async function untilEveryProcess(host: string, path: string, ok: (r: Response, body: string) => boolean, headers: Record<string, string> = {}) {
  const started = performance.now();
  const good = new Set<string>();
  const seen = new Set<string>();
  while (performance.now() - started < DEADLINE_MS) {
    const r = await fresh(host, path, headers);
    const body = await r.text();
    const who = processOf(r);
    seen.add(who);
    if (ok(r, body)) good.add(who);
    else good.delete(who);
    if (good.size >= 2) return { processes: good, ms: performance.now() - started };
    await Bun.sleep(10);
  }
  throw new Error(`only ${good.size} of the processes seen (${[...seen].join(", ")}) answered as expected within ${DEADLINE_MS} ms`);
}

describe("serving workers", () => {
  let site: PublishedSite;
  beforeAll(async () => {
    site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>first</h1>" }] });
  });

  test("a publish is served by every process; a new deploy, an access change, a slug rename and an unpublish reach all of them", async () => {
    const first = await untilEveryProcess(site.host, "/", (r, b) => r.status === 200 && b.includes("first"));
    expect(first.processes.size).toBe(2);

    const d = await writeDeploy(t.pier.deps, site.pub.id, [{ path: "index.html", bytes: "<h1>second</h1>" }]);
    activateDeploy(t.pier.deps, site.pub.id, d.deployId);
    // After the switch, every process serves the new deploy (the bound is a poll interval; the
    // deadline is generous for a loaded machine). Once seen new, a process never goes back.
    const second = await untilEveryProcess(site.host, "/", (r, b) => r.status === 200 && b.includes("second"));
    expect(second.processes.size).toBe(2);
    for (let i = 0; i < 10; i++) expect(await (await fresh(site.host, "/")).text()).toContain("second");

    await setPublicationAccess(t.pier.deps, site.pub.id, { mode: "password", password: "a long enough password 1" });
    await untilEveryProcess(site.host, "/", (r, b) => r.status !== 200 || !b.includes("second"));
    await setPublicationAccess(t.pier.deps, site.pub.id, { mode: "public" });
    await untilEveryProcess(site.host, "/", (r, b) => r.status === 200 && b.includes("second"));

    // A slug rename through the API (relayed to the primary): the site moves on every process.
    const slug = `renamed-${Date.now().toString(36)}`;
    const renamed = await t.api("PATCH", `/api/v1/buckets/${site.pub.bucketId}/custom_domains/public_slug`, {
      key: site.user.key,
      body: { public_slug: slug },
    });
    expect(renamed.status).toBe(200);
    const moved = `${slug}.${t.pier.deps.urls.sitesDomain}`;
    await untilEveryProcess(moved, "/", (r, b) => r.status === 200 && b.includes("second"));
    await untilEveryProcess(site.host, "/", (r, b) => r.status === 404 && !b.includes("second"));

    markUnpublished(t.pier.deps, site.pub.id);
    await untilEveryProcess(moved, "/", (r, b) => r.status === 404 && !b.includes("second"));
  }, 120_000);

  test("the primary hands the public port to its workers: every site answer comes from one of the two workers, every API answer from the primary", async () => {
    const site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>whose</h1>" }] });
    await untilEveryProcess(site.host, "/", (r) => r.status === 200);
    const siteAnswers = new Set<string>();
    const apiAnswers = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const page = await fresh(site.host, "/");
      await page.text();
      siteAnswers.add(processOf(page));
      // The API host's answers are the primary's, relayed by whichever worker took the connection.
      const status = await fetch(`${t.url}/api/v1/status`, { headers: { connection: "close" } });
      await status.text();
      apiAnswers.add(processOf(status));
    }
    expect(apiAnswers.size).toBe(1);
    const [primary] = [...apiAnswers];
    expect(siteAnswers.has(primary!)).toBe(false);
    expect(siteAnswers.size).toBe(2);
  }, 120_000);

  test("a gate cookie issued through one process opens the site on every process", async () => {
    const password = "correct horse battery staple 42";
    const locked = await publishSite(t, { access: "password", password, files: [{ path: "index.html", bytes: "<h1>members</h1>" }] });
    // Without the cookie no process shows the content.
    await untilEveryProcess(locked.host, "/", (r, b) => !b.includes("members"));
    // The password post is relayed to the primary (its attempt limits live there).
    const posted = await fetch(`${t.url}/_pier/gate/password`, {
      method: "POST",
      redirect: "manual",
      headers: { host: locked.host, connection: "close", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ password, next: "/" }).toString(),
    });
    expect(posted.status).toBe(303);
    const cookie = posted.headers.get("set-cookie")!.split(";")[0]!;
    const opened = await untilEveryProcess(locked.host, "/", (r, b) => r.status === 200 && b.includes("members"), { cookie });
    expect(opened.processes.size).toBe(2);
  }, 120_000);

  test("an oversized site POST gets its 413 from whichever process took the connection, never a reset", async () => {
    const locked = await publishSite(t, { access: "password", password: "a long enough password 2", files: [{ path: "index.html", bytes: "<h1>x</h1>" }] });
    // Every process knows the site (its gate page answers), so none is still starting.
    await untilEveryProcess(locked.host, "/", (r) => r.status < 500);
    const chunk = new Uint8Array(1024 * 1024);
    const answeredBy = new Set<string>();
    const started = performance.now();
    // Before, a worker relayed the body to the primary, which hung up on the relay at the limit:
    // the 413 carried the primary's request id, and now and then the client got a reset instead.
    // Four connections at a time: the kernel spreads them over the processes.
    const oversized = () =>
      rawRequest({
        port: t.pier.httpPort,
        head: `POST /_pier/gate/password HTTP/1.1\r\nHost: ${locked.host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${500 * 1024 * 1024}`,
        next: (i) => (i < 500 ? chunk : null),
        hangUpOnAnswer: true,
      });
    while (answeredBy.size < 2) {
      if (performance.now() - started > DEADLINE_MS) throw new Error(`413 only from ${[...answeredBy].join(", ")}`);
      for (const r of await Promise.all([oversized(), oversized(), oversized(), oversized()])) {
        expect(r.status).toBe(413);
        answeredBy.add(/x-request-id: (req_[a-z0-9]{9})/i.exec(r.text)?.[1] ?? "none");
      }
    }
    expect(answeredBy.has("none")).toBe(false);
  }, 120_000);

  test("a form post longer than the gates' 16 KiB but within the form's limits passes every process (CJK: 9 bytes a character)", async () => {
    const s = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>forms</h1>" }] });
    const r = await t.api("PATCH", `/api/v1/buckets/${s.pub.bucketId}`, {
      key: s.user.key,
      body: { bucket: { metadata: { publication_forms: { forms: [{ name: "contact" }] } } } },
    });
    expect(r.status).toBe(200);
    await untilEveryProcess(s.host, "/", (res) => res.status === 200);
    const started = startedToken(t.pier.deps, s.pub.id, "contact");
    t.clock.advance(MIN_FILL_MS + 1);
    const body = new URLSearchParams({ email: "cjk@example.com", message: "中".repeat(2000), _pier_started: started }).toString();
    expect(body.length).toBeGreaterThan(16 * 1024);
    // Fresh connections, so the kernel spreads them over the workers (each bounds the body before relaying it).
    for (let i = 0; i < 4; i++) {
      const posted = await fresh(s.host, "/_pier/form/contact", { origin: `http://${s.host}`, "content-type": "application/x-www-form-urlencoded" }, body);
      expect(posted.status).toBe(200);
      expect(await posted.text()).toContain("Thank you");
    }
  }, 120_000);

  test("the per-account API rate limit is one budget across processes", async () => {
    const u = await t.user();
    // Make sure the worker is up (it answers site requests) before spending the budget.
    const probe = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>probe</h1>" }] });
    await untilEveryProcess(probe.host, "/", (r) => r.status === 200);
    let ok = 0;
    let limited = 0;
    for (let i = 0; i < 24; i++) {
      const r = await fetch(`${t.url}/api/v1/buckets`, { headers: { authorization: `Bearer ${u.key}`, connection: "close" } });
      await r.text();
      if (r.status === 200) ok++;
      else if (r.status === 429) limited++;
    }
    // 10 a minute: two processes with a budget each would allow 20 (a token may refill meanwhile).
    expect(ok).toBeGreaterThanOrEqual(10);
    expect(ok).toBeLessThanOrEqual(12);
    expect(limited).toBe(24 - ok);
  }, 120_000);

  test("/metrics counts the requests of every process, each once, also with a fixed --metrics-port", async () => {
    const site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>counted</h1>" }] });
    await untilEveryProcess(site.host, "/", (r) => r.status === 200);
    // The loopback metrics port is not itself counted: scraping it moves no counter.
    const scrape = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { headers: { connection: "close" } })).text();
    const count = (text: string, labels: Record<string, string>) => {
      let total = 0;
      for (const line of text.split("\n")) {
        const m = /^pier_http_requests_total\{([^}]*)\} (\S+)$/.exec(line);
        if (m && Object.entries(labels).every(([k, v]) => m[1]!.includes(`${k}="${v}"`))) total += Number(m[2]);
      }
      return total;
    };
    const page = { host: "site", group: "page", status: "2xx" };
    const ops = { host: "api", group: "ops", status: "2xx" };
    const before = await scrape();

    // Site pages (answered by whichever process took the connection) and API probes (relayed
    // to the primary by a worker): until both processes have answered pages.
    const byProcess = new Map<string, number>();
    let pages = 0;
    const started = performance.now();
    while (pages < 20 || byProcess.size < 2) {
      if (performance.now() - started > DEADLINE_MS) throw new Error(`pages answered by ${[...byProcess.keys()].join(", ")} only`);
      const r = await fresh(site.host, "/");
      expect(await r.text()).toContain("counted");
      byProcess.set(processOf(r), (byProcess.get(processOf(r)) ?? 0) + 1);
      pages++;
    }
    const probes = 10;
    for (let i = 0; i < probes; i++) expect((await fetch(`${t.url}/livez`, { headers: { connection: "close" } })).status).toBe(200);

    // A worker's counts arrive when the scrape asks (or within a second): wait for them with a
    // deadline, then require the exact totals (a relayed request counted twice would exceed them).
    let after = await scrape();
    const waitUntil = performance.now() + DEADLINE_MS;
    while ((count(after, page) - count(before, page) < pages || count(after, ops) - count(before, ops) < probes) && performance.now() < waitUntil) {
      await Bun.sleep(200);
      after = await scrape();
    }
    expect(count(after, page) - count(before, page)).toBe(pages);
    expect(count(after, ops) - count(before, ops)).toBe(probes);

    // The API host's /metrics (relayed when a worker takes the connection) shows the same totals.
    const viaApi = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}`, connection: "close" } });
    expect(viaApi.status).toBe(200);
    expect(count(await viaApi.text(), page) - count(before, page)).toBe(pages);
  }, 120_000);

  test("commits that change no site (analytics flushes, other writes) reset no process's site cache; a publish still reaches every process", async () => {
    const site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>steady</h1>" }] });
    await untilEveryProcess(site.host, "/", (r, b) => r.status === 200 && b.includes("steady"));
    const scrape = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { headers: { connection: "close" } })).text();
    const resets = (text: string, scope: string) =>
      Number(new RegExp(`^pier_site_cache_resets_total\\{scope="${scope}"\\} (\\S+)$`, "m").exec(text)?.[1] ?? "0");
    // Another connection's commit to a table no site reads (what a session, a job or a mail
    // filing is to the serving processes).
    const other = new Database(join(t.pier.deps.config.dataDir, "pier.db"));
    other.exec("PRAGMA busy_timeout = 10000");
    let n = 0;
    const unrelatedCommit = () =>
      other.query("INSERT OR REPLACE INTO analytics_salts (day, salt) VALUES (?, 'x')").run(`1999-01-${String((n++ % 28) + 1).padStart(2, "0")}`);
    try {
      // Every process catches up with the log (earlier tests' publishes): the figures settle.
      unrelatedCommit();
      let baseline = await scrape();
      const settleBy = performance.now() + DEADLINE_MS;
      for (;;) {
        await Bun.sleep(1200); // longer than a worker's metrics push: a late report cannot land after the baseline
        const again = await scrape();
        if (resets(again, "publication") === resets(baseline, "publication")) break;
        if (performance.now() > settleBy) throw new Error("the site cache resets never settled");
        baseline = again;
      }

      // Steady traffic on every process with analytics on, analytics flushes from the primary
      // (a worker flushes its own every few seconds) and unrelated commits between.
      const byProcess = new Set<string>();
      for (let round = 0; round < 4; round++) {
        for (let i = 0; i < 10; i++) {
          const r = await fresh(site.host, "/");
          expect(await r.text()).toContain("steady");
          byProcess.add(processOf(r));
        }
        t.pier.deps.analytics.flush();
        unrelatedCommit();
        await Bun.sleep(300); // more than a poll interval: each process has looked at these commits
      }
      const after = await scrape();
      expect(byProcess.size).toBe(2);
      expect(resets(after, "all")).toBe(0);
      expect(resets(after, "publication")).toBe(resets(baseline, "publication"));

      // A publish is still seen by every process, and counted as what it is.
      const d = await writeDeploy(t.pier.deps, site.pub.id, [{ path: "index.html", bytes: "<h1>moved on</h1>" }]);
      activateDeploy(t.pier.deps, site.pub.id, d.deployId);
      await untilEveryProcess(site.host, "/", (r, b) => r.status === 200 && b.includes("moved on"));
      unrelatedCommit(); // the primary reads the log (its own publish among it) at another process's commit
      let counted = await scrape();
      const countedBy = performance.now() + DEADLINE_MS;
      while (resets(counted, "publication") < resets(baseline, "publication") + 2 && performance.now() < countedBy) {
        await Bun.sleep(200);
        counted = await scrape();
      }
      expect(resets(counted, "publication")).toBeGreaterThanOrEqual(resets(baseline, "publication") + 2);
      expect(resets(counted, "all")).toBe(0);
    } finally {
      other.close();
    }
  }, 120_000);
});

describe("serving workers without their poll", () => {
  let quiet: TestPier;
  beforeAll(async () => {
    // A minute between polls: within the test, only the primary's announcement can carry a change.
    quiet = await startTestPier({}, { servingWorkers: 2, changePollMs: 60_000 });
  });
  afterAll(async () => {
    await quiet?.stop();
  });

  test("a change the primary commits reaches every worker through its announcement, long before the next poll", async () => {
    const site = await publishSite(quiet, { files: [{ path: "index.html", bytes: "<h1>one</h1>" }] });
    const ask = () => fetch(`${quiet.url}/`, { redirect: "manual", keepalive: false, headers: { host: site.host, connection: "close" } } as RequestInit);
    const everyWorker = async (ok: (status: number, body: string) => boolean) => {
      const good = new Set<string>();
      const started = performance.now();
      while (good.size < 2) {
        if (performance.now() - started > 10_000) throw new Error(`only ${good.size} worker(s) answered as expected within 10 s`);
        const r = await ask();
        if (ok(r.status, await r.text())) good.add(processOf(r));
      }
    };
    // Workers that never looked the host up learn the site from the database on first ask.
    await everyWorker((status, body) => status === 200 && body.includes("one"));
    const d = await writeDeploy(quiet.pier.deps, site.pub.id, [{ path: "index.html", bytes: "<h1>two</h1>" }]);
    activateDeploy(quiet.pier.deps, site.pub.id, d.deployId);
    await everyWorker((status, body) => status === 200 && body.includes("two"));
    markUnpublished(quiet.pier.deps, site.pub.id);
    await everyWorker((status) => status === 404);
  }, 60_000);
});

describe("serving workers with a short --idle-timeout", () => {
  let idle: TestPier;
  beforeAll(async () => {
    idle = await startTestPier({ idleTimeoutSeconds: 4 }, { servingWorkers: 2 });
  });
  afterAll(async () => {
    await idle?.stop();
  });

  test("a connection kept alive after a relayed POST still idles out", async () => {
    // A worker switches its client's timer off while it relays a body (an upload may take
    // long); it stayed off after the answer, so such a connection was never closed.
    const u = await idle.user();
    const body = '{"bucket":{"title":"kept alive"}}';
    const idleAfter = async (status: number, head: string, next: (i: number) => string | null) => {
      const r = await rawRequest({ port: idle.pier.httpPort, head: `${head}\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${u.key}`, next, giveUpMs: 30_000 });
      expect(r.status).toBe(status);
      return r.closedAfterMs - r.answeredAfterMs;
    };
    const [post, get] = await Promise.all([
      idleAfter(201, `POST /api/v1/buckets HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}`, (i) => (i === 0 ? body : null)),
      idleAfter(200, "GET /api/v1/buckets HTTP/1.1", () => null),
    ]);
    // 4 s on Bun's 4-second tick: closed within 8 s of the answer (a margin for a busy machine).
    expect(post).toBeLessThan(12_000);
    expect(get).toBeLessThan(12_000);
  }, 60_000);

  test("a connection kept alive after a relayed gate post idles out too", async () => {
    // The worker reads a site's small post whole and relays a copy; the client's own timer (set
    // long for the body) was only ever reset on that copy, so the connection stayed open ~35 s.
    const password = "a long enough password 3";
    const locked = await publishSite(idle, { access: "password", password, files: [{ path: "index.html", bytes: "<h1>x</h1>" }] });
    const body = new URLSearchParams({ password, next: "/" }).toString();
    const r = await rawRequest({
      port: idle.pier.httpPort,
      head: `POST /_pier/gate/password HTTP/1.1\r\nHost: ${locked.host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}`,
      next: (i) => (i === 0 ? body : null),
      giveUpMs: 30_000,
    });
    expect(r.status).toBe(303);
    expect(r.closedAfterMs - r.answeredAfterMs).toBeLessThan(12_000);
  }, 60_000);

  test("a relayed request's own connection headers stay with its connection: an Upgrade header does not hold its body back", async () => {
    // Passed on, `Upgrade: websocket` made the relay wait for a 101 before sending the body, and
    // the primary answered 408 after --body-timeout; `Connection` names more such headers.
    const u = await idle.user();
    const body = '{"bucket":{"title":"upgrade asked"}}';
    const r = await rawRequest({
      port: idle.pier.httpPort,
      head: `POST /api/v1/buckets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${u.key}\r\nConnection: Upgrade, X-Hop\r\nUpgrade: websocket\r\nX-Hop: 1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}`,
      next: (i) => (i === 0 ? body : null),
      hangUpOnAnswer: true,
      giveUpMs: 20_000,
    });
    expect(r.status).toBe(201);
    expect(r.answeredAfterMs).toBeLessThan(10_000);
    expect(r.text).toContain('"title":"upgrade asked"');
  }, 60_000);
});

describe("serving workers and a visitor who pauses a relayed download", () => {
  let slow: TestPier;
  beforeAll(async () => {
    slow = await startTestPier({ idleTimeoutSeconds: 30 }, { servingWorkers: 2 });
  });
  afterAll(async () => {
    await slow?.stop();
  });

  test("a download relayed to the primary survives a 13 s pause within --idle-timeout (the relay cut it at 10 s)", async () => {
    const u = await slow.user();
    const bucket = await newBucket(slow, u.key, "large download");
    const bytes = new Uint8Array(64 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i % 251;
    expect((await directUpload(slow, u.key, bucket, { path: "big.bin", bytes, contentType: "application/octet-stream" })).status).toBe(201);
    const link = await slow.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=big.bin`, { key: u.key });
    expect(link.status).toBe(302);
    // Every public connection is a worker's: the signed download is relayed to the primary.
    const res = await fetch(new URL(link.headers.get("location")!, slow.url));
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let received = (await reader.read()).value?.length ?? 0;
    await Bun.sleep(13_000);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.length;
    }
    expect(received).toBe(bytes.length);
  }, 90_000);
});

describe("--workers", () => {
  test("defaults to auto: one serving process per core, at most 8; a number is taken as given", () => {
    const auto = loadConfig({}, {});
    expect(workerCount(auto, 1)).toBe(1);
    expect(workerCount(auto, 2)).toBe(2);
    expect(workerCount(auto, 64)).toBe(MAX_AUTO_WORKERS);
    expect(MAX_AUTO_WORKERS).toBe(8);
    expect(workerCount(loadConfig({ PIER_WORKERS: "1" }, {}), 16)).toBe(1);
    expect(workerCount(loadConfig({}, { workers: "12" }), 2)).toBe(12);
  });
});
