// Property: with the weekly roll-up of top lists, the API's answers for any day window equal the
// answers summed from the daily rows alone (per value, ORDER BY hits DESC, value, first 50), for
// random traffic over 120 days written through the real roll-up code, with and without the
// closed-days cache, and after the retention prune cut a week in two. Also: the migration's
// backfill builds the weekly rows of daily rows recorded before it existed.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { migrate } from "../../../src/db/migrate";
import { migrations } from "../../../src/db/migrations";
import { pruneAnalytics } from "../../../src/features/analytics";
import { HourCounts } from "../../../src/features/analytics/recorder";
import { writeRollups } from "../../../src/features/analytics/rollups";
import { forgetCachedDaysFrom, weekOf } from "../../../src/features/analytics/top-lists";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, type PublishedSite } from "../../helpers/sites";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BASE = Date.parse("2026-01-01T00:00:00Z"); // a Thursday: weeks start mid-range
const RETENTION_DAYS = 100;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

let t: TestPier;
let s: PublishedSite;
beforeAll(async () => {
  t = await startTestPier({ analyticsRetentionDays: RETENTION_DAYS });
  s = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });
});
afterAll(() => t?.stop());

const setClock = (ms: number) => t.clock.advance(ms - t.clock.now().getTime());

// Enough values that the 50-entry lists cut, few enough that they tie; some that SQLite and JS order differently.
const value = fc.oneof(
  fc.integer({ min: 0, max: 70 }).map((n) => `/p${n}`),
  fc.constantFrom("/", "/é", "/\uFFFD", "/😀", "/\uE000"),
);
const hit = fc.record({
  day: fc.integer({ min: 0, max: 119 }),
  hour: fc.integer({ min: 0, max: 23 }),
  kind: fc.constantFrom("path", "referrer", "not_found"),
  value,
  hits: fc.integer({ min: 1, max: 9 }),
});
// Days 4, 11, 18, ... are Mondays: window edges often land next to a week's edge.
const day = fc.oneof(
  fc.integer({ min: 0, max: 119 }),
  fc.tuple(fc.integer({ min: 0, max: 16 }), fc.integer({ min: -2, max: 2 })).map(([week, off]) => Math.min(119, Math.max(0, 4 + 7 * week + off))),
);
const window = fc.tuple(day, day).map(([a, b]) => ({ first: Math.min(a, b), last: Math.min(Math.max(a, b), Math.min(a, b) + 89) }));

function fromDailyRows(kind: string, first: string, last: string) {
  return t.pier.deps.sqlite
    .query(
      "SELECT value, sum(hits) AS hits FROM analytics_daily_dims WHERE publication_id = ?1 AND kind = ?2 AND day BETWEEN ?3 AND ?4 " +
        "GROUP BY value ORDER BY hits DESC, value LIMIT 50",
    )
    .all(s.pub.id, kind, first, last) as { value: string; hits: number }[];
}

async function topLists(first: string, last: string) {
  const r = await t.api("GET", `/api/v1/publications/${s.pub.id}/analytics?from=${first}&to=${last}`, { key: s.user.key });
  expect(r.status).toBe(200);
  const a = r.body.data.analytics;
  return {
    path: a.paths.map((e: { path: string; hits: number }) => ({ value: e.path, hits: e.hits })),
    referrer: a.referrers.map((e: { referrer: string; hits: number }) => ({ value: e.referrer, hits: e.hits })),
    not_found: a.paths_not_found.map((e: { path: string; hits: number }) => ({ value: e.path, hits: e.hits })),
  };
}

async function expectEqualToDailyRows(w: { first: number; last: number }) {
  const first = dayOf(BASE + w.first * DAY);
  const last = dayOf(BASE + w.last * DAY);
  const expected = {
    path: fromDailyRows("path", first, last),
    referrer: fromDailyRows("referrer", first, last),
    not_found: fromDailyRows("not_found", first, last),
  };
  forgetCachedDaysFrom(t.pier.deps, ""); // the first request of a window: weeks and edge days
  expect(await topLists(first, last)).toEqual(expected);
  expect(await topLists(first, last)).toEqual(expected); // again, through the closed-days cache
}

const weeklyRowsDifferingFromDays = () =>
  t.pier.deps.sqlite
    .query(
      "SELECT count(*) AS n FROM (SELECT publication_id, kind, date(day, 'weekday 0', '-6 days') AS week, value, sum(hits) AS hits FROM analytics_daily_dims " +
        "GROUP BY 1, 2, 3, 4) d FULL JOIN analytics_weekly_dims w USING (publication_id, kind, week, value) WHERE d.hits IS NOT w.hits",
    )
    .get() as { n: number };

test("top lists with the weekly roll-up equal the sums of the daily rows alone, also after retention", async () => {
  const deps = t.pier.deps;
  await fc.assert(
    fc.asyncProperty(
      fc.array(hit, { minLength: 30, maxLength: 200 }),
      fc.array(window, { minLength: 1, maxLength: 3 }),
      fc.integer({ min: 0, max: 30 }),
      async (hits, windows, pruneAfter) => {
        for (const table of [
          "analytics_daily_dims",
          "analytics_weekly_dims",
          "analytics_daily",
          "analytics_hourly",
          "analytics_hourly_dims",
          "analytics_totals",
        ])
          deps.sqlite.query(`DELETE FROM ${table}`).run();
        forgetCachedDaysFrom(deps, "");
        setClock(BASE + 121 * DAY + HOUR);
        for (const h of hits) {
          const c = new HourCounts(s.pub.id, new Date(BASE + h.day * DAY + h.hour * HOUR).toISOString().slice(0, 13));
          c.hits = h.hits;
          c.touch(BASE + h.day * DAY + h.hour * HOUR);
          c.count(h.kind as "path", h.value, h.hits);
          writeRollups(deps, [c]);
        }
        for (const w of windows) await expectEqualToDailyRows(w);

        // Retention cuts the days before the cut: whole weeks go, the cut week is rebuilt.
        setClock(BASE + (RETENTION_DAYS + pruneAfter) * DAY + HOUR);
        pruneAnalytics(deps);
        expect(weeklyRowsDifferingFromDays().n).toBe(0);
        // The cut is the date RETENTION_DAYS ago in the zone furthest behind UTC (UTC-12).
        const cut = dayOf(BASE + pruneAfter * DAY + HOUR - 12 * HOUR);
        expect((deps.sqlite.query("SELECT count(*) AS n FROM analytics_weekly_dims WHERE week < ?").get(weekOf(cut)) as { n: number }).n).toBe(0);
        for (const w of windows) await expectEqualToDailyRows(w);
      },
    ),
    { numRuns: 40 },
  );
}, 120_000);

test("the migration builds the weekly rows of daily rows recorded before it", () => {
  const db = new Database(":memory:");
  const at = migrations.findIndex((m) => m.name.includes("analytics_weekly"));
  expect(at).toBeGreaterThan(0);
  migrate(db, migrations.slice(0, at));
  const daily = db.query("INSERT INTO analytics_daily_dims (publication_id, day, kind, value, hits) VALUES (?, ?, ?, ?, ?)");
  // 2026-11-22 is a Sunday, 2026-11-23 a Monday: two weeks.
  for (const [day, value, hits] of [
    ["2026-11-16", "/a", 2],
    ["2026-11-22", "/a", 3],
    ["2026-11-22", "/b", 1],
    ["2026-11-23", "/a", 5],
  ] as const)
    daily.run("pub1", day, "path", value, hits);
  migrate(db, migrations);
  expect(db.query("SELECT week, value, hits FROM analytics_weekly_dims ORDER BY week, value").all()).toEqual([
    { week: "2026-11-16", value: "/a", hits: 5 },
    { week: "2026-11-16", value: "/b", hits: 1 },
    { week: "2026-11-23", value: "/a", hits: 5 },
  ]);
  db.close();
});
