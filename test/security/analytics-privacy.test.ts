// Analytics attacks and privacy promises, each reproduced over real HTTP: a random-path flood
// must not grow storage past the caps; no IP or user agent may be stored; a day's salt and its
// visitor hashes must be gone once the day is over, so nobody can link or recompute visitors.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { CAPS, OTHER } from "../../src/features/analytics/recorder";
import { startTestPier, type TestPier } from "../helpers/pier";
import { publishSite, type PublishedSite } from "../helpers/sites";

let t: TestPier;
let s: PublishedSite;
const DAY = 86_400_000;
const IP = "203.0.113.77";
const UA = "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0 PrivacyProbe/9.9";

beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
  const now = t.clock.now().getTime();
  t.clock.advance(Math.ceil(now / 3_600_000) * 3_600_000 + 60_000 - now); // the flood stays within one hour
  s = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });
});
afterAll(() => t.stop());

// Site requests go to the primary (through the relay when PIER_TEST_WORKERS runs serving workers):
// the counts checked here are the ones this process holds and flushes.
const rows = (table: string) => t.pier.deps.sqlite.query(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];

test("a flood of random 404 paths is stored within the hourly cap, the rest as (other)", async () => {
  const flood = CAPS.not_found + 100;
  for (let i = 0; i < flood; i += 50)
    await Promise.all(Array.from({ length: 50 }, (_, j) => t.primaryFetch(s.host, `/probe-${i + j}-${Math.random()}`).then((r) => r.arrayBuffer())));
  t.pier.deps.analytics.flush();
  const stored = rows("analytics_hourly_dims").filter((r) => r.kind === "not_found");
  expect(stored.length).toBe(CAPS.not_found + 1);
  expect(stored.find((r) => r.value === OTHER)?.hits).toBe(100);
  const a = (await t.api("GET", `/api/v1/publications/${s.pub.id}/analytics?range=24h`, { key: s.user.key })).body.data.analytics;
  expect(a.totals.hits_not_found).toBe(flood); // every hit still counted
});

test("no IP address or user agent is written anywhere in the database", async () => {
  await t.primaryFetch(s.host, "/", { headers: { "x-forwarded-for": IP, "user-agent": UA } }).then((r) => r.arrayBuffer());
  t.pier.deps.analytics.flush();
  const tables = (t.pier.deps.sqlite.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);
  const dump = JSON.stringify(tables.map((name) => rows(`"${name}"`)));
  expect(dump).not.toContain(IP);
  expect(dump).not.toContain("PrivacyProbe");
  expect(rows("analytics_visitors").length).toBeGreaterThan(0); // a visitor was counted, as a hash only
});

test("once the day after is over, the day's salt and its visitor hashes are deleted", async () => {
  const day0 = t.clock.now().toISOString().slice(0, 10);
  expect(rows("analytics_salts").map((r) => r.day)).toContain(day0);
  t.clock.advance(2 * DAY);
  await t.primaryFetch(s.host, "/", { headers: { "x-forwarded-for": IP, "user-agent": UA } }).then((r) => r.arrayBuffer());
  t.pier.deps.analytics.flush();
  expect(rows("analytics_salts").map((r) => r.day)).not.toContain(day0);
  expect(rows("analytics_visitors").filter((r) => r.day === day0)).toEqual([]);
  // The same person on a later day is a different, unlinkable hash.
  const later = rows("analytics_visitors");
  expect(later).toHaveLength(1);
});
