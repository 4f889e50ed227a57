// Website analytics end to end: real HTTP requests to a real published site (browsers, bots,
// referrers, countries through X-Forwarded-For), the flush, then the exact API numbers. The test
// clock starts at 01:00 UTC of a fresh day so hours and days are known.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, type PublishedSite } from "../../helpers/sites";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
const SAFARI = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15";
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
const US = "8.8.8.8";
const NL = "193.0.6.139";

let t: TestPier;
let s: PublishedSite;
let day0: string;
let day1: string;

// Site requests go to the primary: only it follows the test's clock and flushes on `flush()`
// (with serving workers, PIER_TEST_WORKERS, the public port is theirs).
const get = (path: string, ua: string, ip: string, referer?: string) =>
  t.primaryFetch(s.host, path, { headers: { "user-agent": ua, "x-forwarded-for": ip, ...(referer ? { referer } : {}) } }).then(async (r) => {
    await r.arrayBuffer();
    return r.status;
  });
const analytics = (query: string, key = s.user.key) => t.api("GET", `/api/v1/publications/${s.pub.id}/analytics${query}`, { key });
const flush = () => t.pier.deps.analytics.flush();

beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
  const now = t.clock.now().getTime();
  t.clock.advance(Math.ceil(now / DAY) * DAY + HOUR - now); // 01:00 UTC of the next day
  day0 = t.clock.now().toISOString().slice(0, 10);
  day1 = new Date(t.clock.now().getTime() + DAY).toISOString().slice(0, 10);
  s = await publishSite(t, {
    files: [
      { path: "index.html", bytes: "<!doctype html><h1>Home</h1>" },
      { path: "about.html", bytes: "<!doctype html><h1>About</h1>" },
      { path: "style.css", bytes: "body{}" },
      { path: "report.pdf", bytes: "%PDF-1.4 not really" },
    ],
  });
  const own = `http://${s.host}/`;
  expect(await get("/", FIREFOX, US, "https://www.example.org/post?id=1")).toBe(200);
  expect(await get("/style.css", FIREFOX, US, own)).toBe(200);
  expect(await get("/about", FIREFOX, US, own)).toBe(200);
  expect(await get("/", SAFARI, NL)).toBe(200);
  expect(await get("/", GOOGLEBOT, "66.249.66.1")).toBe(200);
  expect(await get("/missing", GPTBOT, "20.15.240.64")).toBe(404);
  expect(await get("/nope.html", SAFARI, NL)).toBe(404);
  expect(await get("/report.pdf", FIREFOX, US, own)).toBe(200);
  flush();
});

afterAll(() => t.stop());

describe("one day of traffic", () => {
  test("7d totals count hits, bots, assets, 404s, visitors and downloads exactly", async () => {
    const r = await analytics("?range=7d");
    expect(r.status).toBe(200);
    const a = r.body.data.analytics;
    expect(a.range).toBe("7d");
    expect(a.granularity).toBe("day");
    expect(a.details_visible).toBe(true);
    expect(a.totals).toEqual({
      hits_all_time: 8,
      views: 6,
      hits: 8,
      visitors: 2,
      clicks: 0,
      downloads: 1,
      hits_assets: 2,
      hits_not_found: 2,
      hits_bots: 2,
    });
    expect(a.to).toBe(day0);
    expect(a.daily).toHaveLength(7);
    expect(a.daily[6]).toEqual({ date: day0, hits: 8, visitors: 2, hits_not_found: 2, hits_bots: 2 });
    expect(a.daily[0]).toEqual({ date: a.from, hits: 0, visitors: 0, hits_not_found: 0, hits_bots: 0 });
  });

  test("the previous period is before the site existed: its totals and the diffs are null, never 0", async () => {
    const a = (await analytics("?range=7d")).body.data.analytics;
    for (const v of Object.values(a.previous_period_totals)) expect(v).toBeNull();
    for (const v of Object.values(a.diff_vs_previous_period)) expect(v).toBeNull();
  });

  test("top lists: page paths of people, referrer hosts (own host is none), countries, named bots, 404s", async () => {
    const a = (await analytics("")).body.data.analytics;
    expect(a.paths).toEqual([
      { path: "/", hits: 2 },
      { path: "/about", hits: 1 },
    ]);
    expect(a.referrers).toEqual([
      { referrer: "direct", hits: 1 },
      { referrer: "example.org", hits: 1 },
    ]);
    expect(a.countries).toEqual([
      { country: "US", hits: 2 },
      { country: "NL", hits: 1 },
    ]);
    expect(a.bots).toEqual([
      { bot: "GPTBot", hits: 1 },
      { bot: "Googlebot", hits: 1 },
    ]);
    expect(a.paths_not_found).toEqual([
      { bucket_id: s.pub.bucketId, publication_id: s.pub.id, public_slug: s.pub.publicSlug, path: "/missing", hits: 1 },
      { bucket_id: s.pub.bucketId, publication_id: s.pub.id, public_slug: s.pub.publicSlug, path: "/nope.html", hits: 1 },
    ]);
    expect(a.buckets).toEqual([
      {
        bucket_id: s.pub.bucketId,
        bucket_title: "Site",
        publication_id: s.pub.id,
        public_slug: s.pub.publicSlug,
        url: expect.stringContaining(s.host),
        hits: 8,
      },
    ]);
  });

  test("24h: 24 hourly buckets ending with the current hour, the hits in theirs", async () => {
    t.clock.advance(2 * HOUR); // 03:xx
    const a = (await analytics("?range=24h")).body.data.analytics;
    expect(a.granularity).toBe("hour");
    expect(a.daily).toHaveLength(24);
    expect(a.daily[23].date).toBe(`${day0}T03:00:00.000Z`);
    expect(a.daily[21]).toEqual({ date: `${day0}T01:00:00.000Z`, hits: 8, visitors: 2, hits_not_found: 2, hits_bots: 2 });
    expect(a.daily.reduce((n: number, d: { hits: number }) => n + d.hits, 0)).toBe(8);
    expect(a.previous_period).toEqual({ from: new Date(Date.parse(a.from) - DAY).toISOString(), to: a.from });
    expect(a.diff_vs_previous_period.hits).toBeNull();
    t.clock.advance(-2 * HOUR);
  });

  test("the publication read carries hits_all_time and last_event_at", async () => {
    const r = await t.api("GET", `/api/v1/publications/${s.pub.id}?include_manifest=false`, { key: s.user.key });
    expect(r.body.data.publication.analytics.hits_all_time).toBe(8);
    expect(Date.parse(r.body.data.publication.analytics.last_event_at)).toBeGreaterThan(Date.parse(`${day0}T00:59:59Z`));
    expect(r.body.data.publication.publication_analytics_enabled).toBe(true);
  });
});

describe("the next day", () => {
  beforeAll(async () => {
    t.clock.advance(DAY);
    expect(await get("/", FIREFOX, US)).toBe(200); // the same person: a new day, a new visitor
    expect(await get("/about", FIREFOX, US)).toBe(200);
    expect(await get("/", GOOGLEBOT, "66.249.66.1")).toBe(200);
    flush();
  });

  test("visitors is the sum of each day's uniques", async () => {
    const a = (await analytics("?range=7d")).body.data.analytics;
    expect(a.totals.visitors).toBe(3);
    expect(a.totals.hits).toBe(11);
    expect(a.daily[6]).toEqual({ date: day1, hits: 3, visitors: 1, hits_not_found: 0, hits_bots: 1 });
  });

  test("a custom one-day window compares with the day before: signed diffs", async () => {
    const a = (await analytics(`?from=${day1}&to=${day1}&range=90d`)).body.data.analytics;
    expect(a.range).toBeNull();
    expect(a.previous_period).toEqual({ from: day0, to: day0 });
    expect(a.totals).toMatchObject({ hits: 3, views: 2, visitors: 1, hits_bots: 1, hits_not_found: 0 });
    expect(a.previous_period_totals).toEqual({ views: 6, hits: 8, visitors: 2, clicks: 0, downloads: 1, hits_assets: 2, hits_not_found: 2, hits_bots: 2 });
    expect(a.diff_vs_previous_period).toEqual({
      views: -4,
      hits: -5,
      visitors: -1,
      clicks: 0,
      downloads: -1,
      hits_assets: -2,
      hits_not_found: -2,
      hits_bots: -1,
    });
  });

  test("the account-wide endpoint adds up the account's sites", async () => {
    const r = await t.api("GET", "/api/v1/analytics?range=30d", { key: s.user.key });
    expect(r.status).toBe(200);
    expect(r.body.data.analytics.totals.hits).toBe(11);
    expect(r.body.data.analytics.buckets.map((b: { publication_id: string }) => b.publication_id)).toEqual([s.pub.id]);
  });

  test("turning analytics off stops counting at once and keeps what was counted", async () => {
    const p = await t.api("PATCH", `/api/v1/publications/${s.pub.id}`, { key: s.user.key, body: { publication_analytics_enabled: false } });
    expect(p.status).toBe(200);
    expect(p.body.data.publication.publication_analytics_enabled).toBe(false);
    expect(await get("/", FIREFOX, US)).toBe(200);
    flush();
    expect((await analytics("?range=7d")).body.data.analytics.totals.hits).toBe(11);
    await t.api("PATCH", `/api/v1/publications/${s.pub.id}`, { key: s.user.key, body: { analytics_enabled: true } });
    expect(await get("/", FIREFOX, US)).toBe(200);
    flush();
    expect((await analytics("?range=7d")).body.data.analytics.totals.hits).toBe(12);
  });
});

describe("who is a visitor: page views and downloads, not assets", () => {
  // Its own site and account, driven through the primary (whose recorder the test flushes).
  let v: PublishedSite;
  const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";
  const visit = async (path: string, ua: string, ip: string) => {
    const r = await t.primaryFetch(v.host, path, { headers: { "user-agent": ua, "x-forwarded-for": ip } });
    await r.arrayBuffer();
    return r.status;
  };
  const totals = async () => {
    flush();
    const r = await t.api("GET", `/api/v1/publications/${v.pub.id}/analytics?range=7d`, { key: v.user.key });
    expect(r.status).toBe(200);
    return r.body.data.analytics;
  };

  beforeAll(async () => {
    v = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "<!doctype html><link rel=stylesheet href=app.css><script src=app.js></script><img src=logo.png>" },
        { path: "app.css", bytes: "body{}" },
        { path: "app.js", bytes: "void 0" },
        { path: "logo.png", bytes: "\x89PNG not really" },
        { path: "manual.pdf", bytes: "%PDF-1.4 not really" },
      ],
    });
  });

  test("a page and the assets it loads, from one client, are one visitor", async () => {
    for (const path of ["/", "/app.css", "/app.js", "/logo.png"]) expect(await visit(path, FIREFOX, US)).toBe(200);
    const a = await totals();
    expect(a.totals).toMatchObject({ hits: 4, views: 4, visitors: 1, hits_assets: 3, downloads: 0 });
    expect(a.countries).toEqual([{ country: "US", hits: 1 }]);
  });

  test("assets alone (a hotlinked image) and a missing favicon from a new client add no visitor and no country", async () => {
    expect(await visit("/logo.png", SAFARI, NL)).toBe(200);
    expect(await visit("/app.css", SAFARI, NL)).toBe(200);
    expect(await visit("/favicon.ico", SAFARI, NL)).toBe(404);
    const a = await totals();
    expect(a.totals).toMatchObject({ hits: 7, views: 7, visitors: 1, hits_assets: 5, hits_not_found: 1 });
    expect(a.countries).toEqual([{ country: "US", hits: 1 }]);
  });

  test("a download alone is a visitor", async () => {
    expect(await visit("/manual.pdf", CHROME, NL)).toBe(200);
    const a = await totals();
    expect(a.totals).toMatchObject({ hits: 8, visitors: 2, downloads: 1, hits_assets: 6 });
    expect(a.paths).toEqual([{ path: "/", hits: 1 }]); // the top lists still describe page views
  });

  test("a person following a broken link to a page path is a visitor; a bot never is", async () => {
    expect(await visit("/old-post", CHROME, "8.8.4.4")).toBe(404);
    expect(await visit("/", GOOGLEBOT, "66.249.66.1")).toBe(200);
    const a = await totals();
    expect(a.totals).toMatchObject({ hits: 10, hits_bots: 1, hits_not_found: 2, visitors: 3 });
  });
});

describe("bad input and other accounts", () => {
  test.each([
    ["?range=1y", "range"],
    ["?from=2026-01-10&to=2026-01-01", "from"],
    ["?from=2026-01-01&to=2026-04-01", "to"],
    ["?from=2026-02-31&to=2026-03-01", "from"],
    ["?from=yesterday&to=2026-03-01", "from"],
    ["?from=2026-01-01", "to"],
    ["?to=2026-01-01", "from"],
    ["?from=0000-01-01&to=0000-01-02", "from"], // its previous period would fall before year 0
    // A repeated key is refused, not read as its last value.
    ["?range=7d&range=30d", "range"],
    ["?range=7d&range=7d", "range"],
    ["?from=2026-01-01&to=2026-01-05&from=2026-01-03", "from"],
    ["?from=2026-01-01&to=2026-01-05&to=2026-01-09", "to"],
  ])("%s is 422 VALIDATION_FAILED naming %s", async (query, field) => {
    for (const path of [`/api/v1/publications/${s.pub.id}/analytics${query}`, `/api/v1/analytics${query}`]) {
      const r = await t.api("GET", path, { key: s.user.key });
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe("VALIDATION_FAILED");
      expect(r.body.error.details.field).toBe(field);
    }
  });

  test("a repeated key is named, with the way to fix it", async () => {
    const r = await analytics("?range=7d&range=30d");
    expect(r.body.error.message).toContain("'range' is given more than once");
    expect(r.body.error.details.fields).toEqual([{ path: "/range", message: "'range' is given more than once; give it once" }]);
  });

  test("the same holds on other routes with single-valued query fields (the shared check)", async () => {
    const r = await t.api("GET", "/api/v1/buckets?limit=5&limit=50", { key: s.user.key });
    expect(r.status).toBe(422);
    expect(r.body.error.details.field).toBe("limit");
    expect((await t.api("GET", "/api/v1/buckets?limit=5", { key: s.user.key })).status).toBe(200);
  });

  test("a window of exactly 90 days is fine", async () => {
    expect((await analytics("?from=2026-01-01&to=2026-03-31")).status).toBe(200);
  });

  test("another account's publication is 404, and its figures never appear account-wide", async () => {
    const other = await t.user();
    const r = await analytics("?range=7d", other.key);
    expect(r.status).toBe(404);
    const mine = await t.api("GET", "/api/v1/analytics", { key: other.key });
    expect(mine.status).toBe(200);
    expect(mine.body.data.analytics.totals.hits_all_time).toBe(0);
    expect(mine.body.data.analytics.buckets).toEqual([]);
  });

  test("huge and binary referrers and user agents and odd paths are counted, never an error", async () => {
    const junk = "\u00ff\u00fe".repeat(3000);
    for (const [path, ua, ref, status] of [
      ["/caf%C3%A9", junk, junk, 404],
      ["/x%20y", "x".repeat(8000), "http://" + "a".repeat(5000) + ".example/", 404],
      ["/" + "z".repeat(1500), FIREFOX, "not a url at all", 404],
      ["/%ff%fe", FIREFOX, "", 400], // refused by the site server: a bad request is not a hit
    ] as const) {
      const r = await t.primaryFetch(s.host, path, { headers: { "user-agent": ua, referer: ref } });
      expect(r.status).toBe(status);
    }
    flush();
    const a = (await analytics("?range=24h")).body.data.analytics;
    expect(a.totals.hits_not_found).toBe(3);
    expect(a.paths_not_found.map((p: { path: string }) => p.path)).toContain("/café");
    for (const p of a.paths_not_found) expect(p.path.length).toBeLessThanOrEqual(512);
  });
});

describe("plans without analytics details", () => {
  let t2: TestPier;
  afterAll(() => t2?.stop());

  test("every detail number but hits_all_time is null and the lists are empty", async () => {
    const plansFile = join(mkdtempSync(join(tmpdir(), "pier-plans-")), "plans.json");
    writeFileSync(plansFile, JSON.stringify([{ id: "lite", extends: "free", entitlements: { analytics_details: false } }]));
    t2 = await startTestPier({ plansFile });
    const user = await t2.user({ plan: "lite" });
    const site = await publishSite(t2, { user, files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });
    await t2.primaryFetch(site.host, "/", { headers: { "user-agent": FIREFOX } }).then((r) => r.arrayBuffer());
    await t2.primaryFetch(site.host, "/", { headers: { "user-agent": SAFARI } }).then((r) => r.arrayBuffer());
    t2.pier.deps.analytics.flush();
    const r = await t2.api("GET", `/api/v1/publications/${site.pub.id}/analytics?range=30d`, { key: user.key });
    const a = r.body.data.analytics;
    expect(a.details_visible).toBe(false);
    expect(a.totals).toEqual({
      hits_all_time: 2,
      views: null,
      hits: null,
      visitors: null,
      clicks: null,
      downloads: null,
      hits_assets: null,
      hits_not_found: null,
      hits_bots: null,
    });
    for (const v of [...Object.values(a.previous_period_totals), ...Object.values(a.diff_vs_previous_period)]) expect(v).toBeNull();
    for (const list of ["daily", "buckets", "paths", "referrers", "countries", "bots", "paths_not_found"]) expect(a[list]).toEqual([]);
    expect(a.first_event_at).toBeNull();
    const pub = await t2.api("GET", `/api/v1/publications/${site.pub.id}`, { key: user.key });
    expect(pub.body.data.publication.analytics).toEqual({ hits_all_time: 2, last_event_at: null });
  });
});
