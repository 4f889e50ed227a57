// Day windows answer their top lists from cached sums of closed days (days before yesterday).
// These tests make a closed day change behind the cache's back the ways it can (a clock set
// back and new traffic on it, the retention prune) and check the API never shows stale figures.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { pruneAnalytics } from "../../../src/features/analytics";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, type PublishedSite } from "../../helpers/sites";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

let t: TestPier;
let s: PublishedSite;
let day0: string;

// To the primary: only it follows the test's clock (the public port may be serving workers').
const view = (path: string, ip: string) =>
  t.primaryFetch(s.host, path, { headers: { "user-agent": FIREFOX, "x-forwarded-for": ip } }).then(async (r) => {
    await r.arrayBuffer();
    expect(r.status).toBe(200);
  });
const analytics = async (query: string) => {
  const r = await t.api("GET", `/api/v1/publications/${s.pub.id}/analytics${query}`, { key: s.user.key });
  expect(r.status).toBe(200);
  return r.body.data.analytics;
};

beforeAll(async () => {
  t = await startTestPier({ trustProxy: true, analyticsRetentionDays: 5 });
  const now = t.clock.now().getTime();
  t.clock.advance(Math.ceil(now / DAY) * DAY + HOUR - now); // 01:00 UTC of a fresh day
  day0 = t.clock.now().toISOString().slice(0, 10);
  s = await publishSite(t, {
    files: [
      { path: "index.html", bytes: "<h1>Home</h1>" },
      { path: "about.html", bytes: "<h1>About</h1>" },
    ],
  });
  await view("/", "192.0.2.1");
  await view("/", "192.0.2.2");
  await view("/about", "192.0.2.1");
  t.pier.deps.analytics.flush();
  t.clock.advance(3 * DAY); // day0 is now closed
});
afterAll(() => t.stop());

test("a closed day's top lists, then new traffic written to that day, are both shown exactly", async () => {
  const before = await analytics("?range=7d");
  expect(before.paths).toEqual([
    { path: "/", hits: 2 },
    { path: "/about", hits: 1 },
  ]);
  expect(await analytics("?range=7d")).toEqual(before); // answered again, now from the cache

  t.clock.advance(-3 * DAY); // back on day0: traffic lands on the cached day
  await view("/about", "192.0.2.3");
  await view("/about", "192.0.2.4");
  t.pier.deps.analytics.flush();
  t.clock.advance(3 * DAY);

  const after = await analytics("?range=7d");
  expect(after.paths).toEqual([
    { path: "/about", hits: 3 },
    { path: "/", hits: 2 },
  ]);
  expect(after.totals.hits).toBe(5);
});

test("today's traffic adds to the cached closed days", async () => {
  await view("/", "192.0.2.9");
  t.pier.deps.analytics.flush();
  const a = await analytics(`?from=${day0}&to=${t.clock.now().toISOString().slice(0, 10)}`);
  expect(a.paths).toEqual([
    { path: "/", hits: 3 },
    { path: "/about", hits: 3 },
  ]);
});

test("days removed by the retention prune disappear from cached top lists", async () => {
  const window = `?from=${day0}&to=${t.clock.now().toISOString().slice(0, 10)}`;
  t.clock.advance(4 * DAY); // day0 is now 7 days old: past the 5 days kept in every time zone
  expect((await analytics(window)).paths).toHaveLength(2); // cached with day0 in it
  pruneAnalytics(t.pier.deps);
  expect((await analytics(window)).paths).toEqual([{ path: "/", hits: 1 }]);
});
