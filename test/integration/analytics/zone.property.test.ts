// The calendar-day arithmetic analytics relies on, against the runtime's own time-zone data: for
// any instant and any zone, the local date's first instant (dayStart) is at or before the
// instant and the next date's first instant after it, so a day window's bounds hold exactly the
// hits the recorder keyed to its dates; ZoneDays.segment never spans two local dates.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { dayStart, localDay, nextDate, ZoneDays } from "../../../src/features/analytics/zone";

const ZONES = Intl.supportedValuesOf("timeZone");
const FROM = Date.parse("2020-01-01T00:00:00Z");
/**
 * The zones whose days between FROM and TO last other than 23-25 hours, found by walking every
 * zone's days in that range (6-hour steps): Troll's summer time is two hours (+00/+02), Casey's
 * clocks jumped three hours (+08/+11) in 2020-2023, Vostok moved from +06 to +05 on 2023-12-18.
 */
const ODD_DAYS: Record<string, [number, number]> = {
  "Antarctica/Troll": [22, 26],
  "Antarctica/Casey": [21, 27],
  "Antarctica/Vostok": [23, 26],
};
const TO = Date.parse("2035-01-01T00:00:00Z");

test("a local day's bounds hold every instant keyed to it, in every zone", () => {
  fc.assert(
    fc.property(fc.constantFrom(...ZONES, "UTC"), fc.integer({ min: FROM, max: TO }), (zone, ms) => {
      const day = localDay(zone, ms);
      const start = dayStart(zone, day);
      const end = dayStart(zone, nextDate(day));
      expect(start).toBeLessThanOrEqual(ms);
      expect(end).toBeGreaterThan(ms);
      expect(localDay(zone, start)).toBe(day);
      expect(localDay(zone, start - 1)).not.toBe(day);
      // 23 to 25 hours where summer time moves clocks by an hour, except in the zones of
      // ODD_DAYS. A date-line move (Samoa 2011) is before FROM.
      const [shortest, longest] = ODD_DAYS[zone] ?? [23, 25];
      expect(end - start).toBeGreaterThanOrEqual(shortest * 3_600_000);
      expect(end - start).toBeLessThanOrEqual(longest * 3_600_000);
    }),
    { numRuns: 3000 },
  );
});

test("Antarctica/Troll's two-hour clock changes make days of 22 and 26 hours", () => {
  // The counterexample a random run found: 2023-10-29 starts at 22:00 UTC the day before (+02)
  // and ends at 00:00 UTC the day after (+00).
  const day = localDay("Antarctica/Troll", Date.parse("2023-10-28T22:00:00Z"));
  expect(day).toBe("2023-10-29");
  expect(dayStart("Antarctica/Troll", nextDate(day)) - dayStart("Antarctica/Troll", day)).toBe(26 * 3_600_000);
  expect(dayStart("Antarctica/Troll", "2024-04-01") - dayStart("Antarctica/Troll", "2024-03-31")).toBe(22 * 3_600_000);
});

test("a segment of an hour shares its local date from start to end", () => {
  fc.assert(
    fc.property(fc.constantFrom(...ZONES), fc.integer({ min: FROM, max: TO }), (zone, ms) => {
      const seg = new ZoneDays(zone).segment(ms);
      expect(seg.fromMs).toBeLessThanOrEqual(ms);
      expect(seg.untilMs).toBeGreaterThan(ms);
      expect(localDay(zone, seg.fromMs)).toBe(seg.day);
      expect(localDay(zone, seg.untilMs - 1)).toBe(seg.day);
    }),
    { numRuns: 3000 },
  );
});

test("the DST days of Europe/Berlin and the +05:45 midnight of Asia/Kathmandu", () => {
  expect(new Date(dayStart("Europe/Berlin", "2026-03-29")).toISOString()).toBe("2026-03-28T23:00:00.000Z");
  expect(dayStart("Europe/Berlin", "2026-03-30") - dayStart("Europe/Berlin", "2026-03-29")).toBe(23 * 3_600_000);
  expect(dayStart("Europe/Berlin", "2026-10-26") - dayStart("Europe/Berlin", "2026-10-25")).toBe(25 * 3_600_000);
  expect(new Date(dayStart("Asia/Kathmandu", "2026-11-25")).toISOString()).toBe("2026-11-24T18:15:00.000Z");
  expect(localDay("Asia/Kathmandu", Date.parse("2026-11-24T18:14:59Z"))).toBe("2026-11-24");
  expect(localDay("Asia/Kathmandu", Date.parse("2026-11-24T18:15:00Z"))).toBe("2026-11-25");
});

test("Antarctica/Casey's three-hour clock changes make days of 21 and 27 hours", () => {
  // The counterexample a random run found: on 2020-10-04 Casey moved from +08 to +11 a minute
  // after midnight, so that date began at 16:00 UTC the day before and ended at 13:00 UTC.
  const day = localDay("Antarctica/Casey", Date.parse("2020-10-03T16:00:00Z"));
  expect(day).toBe("2020-10-04");
  expect(dayStart("Antarctica/Casey", day)).toBe(Date.parse("2020-10-03T16:00:00Z"));
  expect(dayStart("Antarctica/Casey", nextDate(day)) - dayStart("Antarctica/Casey", day)).toBe(21 * 3_600_000);
  // And back: at midnight of 2021-03-14 (+11) the clocks went to 21:00 (+08), so 2021-03-13 lasted 27 hours.
  expect(dayStart("Antarctica/Casey", "2021-03-14") - dayStart("Antarctica/Casey", "2021-03-13")).toBe(27 * 3_600_000);
});
