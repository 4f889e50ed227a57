// Property: a day window's top list answered through the closed-days cache (top-lists.ts) equals
// the plain SQL answer (sum per value, ORDER BY hits DESC, value), for random traffic written
// through the real roll-up code, random windows and clocks, with writes landing between queries
// (also on cached days) and values SQLite and JS order differently (characters from U+D800 up).
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { HourCounts } from "../../../src/features/analytics/recorder";
import { writeRollups } from "../../../src/features/analytics/rollups";
import { forgetCachedDaysFrom, topOfDays } from "../../../src/features/analytics/top-lists";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, type PublishedSite } from "../../helpers/sites";

const DAY = 86_400_000;
const BASE = Date.parse("2026-03-01T00:00:00Z");
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

let t: TestPier;
let s: PublishedSite;
beforeAll(async () => {
  t = await startTestPier();
  s = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });
});
afterAll(() => t.stop());

const value = fc.constantFrom("/", "/a", "/b", "/B", "/é", "/\uFFFD", "/😀", "/\uE000", "/z");
const write = fc.record({ day: fc.integer({ min: 0, max: 12 }), hour: fc.integer({ min: 0, max: 23 }), value, hits: fc.integer({ min: 1, max: 5 }) });
const query = fc.record({ first: fc.integer({ min: 0, max: 12 }), span: fc.integer({ min: 0, max: 12 }), now: fc.integer({ min: 0, max: 15 }) });

function plainTop(ids: string, first: string, last: string) {
  return t.pier.deps.sqlite
    .query(
      "SELECT '' AS id, value, sum(hits) AS hits FROM analytics_daily_dims WHERE publication_id IN (SELECT value FROM json_each(?1)) " +
        "AND kind = 'path' AND day BETWEEN ?2 AND ?3 GROUP BY value ORDER BY hits DESC, value LIMIT 3",
    )
    .all(ids, first, last);
}

test("cached top lists equal the plain SQL answer", () => {
  const deps = t.pier.deps;
  const ids = JSON.stringify([s.pub.id]);
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.array(write, { maxLength: 6 }), query), { minLength: 1, maxLength: 8 }), (steps) => {
      deps.sqlite.query("DELETE FROM analytics_daily_dims").run();
      deps.sqlite.query("DELETE FROM analytics_weekly_dims").run();
      forgetCachedDaysFrom(deps, ""); // the table was emptied behind the roll-up code's back
      for (const [writes, q] of steps) {
        for (const w of writes) {
          const c = new HourCounts(s.pub.id, new Date(BASE + w.day * DAY + w.hour * 3_600_000).toISOString().slice(0, 13));
          c.hits = w.hits;
          c.touch(BASE + w.day * DAY);
          c.count("path", w.value, w.hits);
          writeRollups(deps, [c]);
        }
        const first = dayOf(BASE + q.first * DAY);
        const last = dayOf(BASE + (q.first + q.span) * DAY);
        const nowMs = BASE + q.now * DAY + 3_600_000;
        expect(topOfDays(deps, ids, "path", first, last, false, 3, nowMs)).toEqual(plainTop(ids, first, last) as never);
      }
    }),
    { numRuns: 150 },
  );
});
