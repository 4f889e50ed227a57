// The time window of an analytics query and its previous period (spec: ranges 24h/7d/30d/90d,
// or from/to as inclusive dates of at most 90 days, which override range). Days are local dates
// of the account's time zone (daily rows are keyed by them); the 24h range is 24 UTC hours.
import { ApiError } from "../../core/errors";
import { dayStart, localDay, nextDate, utcDay } from "./zone";

export const RANGES = ["24h", "7d", "30d", "90d"] as const;
export type Range = (typeof RANGES)[number];
export const MAX_WINDOW_DAYS = 90;
export const DEFAULT_RANGE: Range = "7d";

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export interface Window {
  /** The IANA time zone whose local dates the day keys are. */
  timeZone: string;
  /** null for a custom from/to window. */
  range: Range | null;
  granularity: "hour" | "day";
  /** Bucket keys in order: "YYYY-MM-DDTHH" hours or "YYYY-MM-DD" days. */
  keys: string[];
  previousKeys: { first: string; last: string };
  /** What the answer shows: dates for daily windows, timestamps (start, end) for 24h. */
  from: string;
  to: string;
  previous: { from: string; to: string };
  /** Epoch ms bounds [start, end) of the window, to clamp event timestamps. */
  startMs: number;
  endMs: number;
}

const hourOf = (ms: number) => new Date(ms).toISOString().slice(0, 13);

function parseDate(field: "from" | "to", raw: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? Date.parse(`${raw}T00:00:00Z`) : Number.NaN;
  // Date.parse accepts 2026-02-31 as March 3rd: a date must round-trip to itself.
  if (Number.isNaN(ms) || utcDay(ms) !== raw) throw new ApiError("VALIDATION_FAILED", `${field} must be a date as YYYY-MM-DD.`, { field });
  // Pier counted nothing before 2000, and a window there would make a previous period before year 0.
  if (raw < "2000-01-01") throw new ApiError("VALIDATION_FAILED", `${field} must be 2000-01-01 or later.`, { field });
  return ms;
}

function dayWindow(range: Range | null, fromMs: number, toMs: number, zone: string): Window {
  const days = Math.round((toMs - fromMs) / DAY_MS) + 1;
  const keys = Array.from({ length: days }, (_, i) => utcDay(fromMs + i * DAY_MS));
  const prevFrom = fromMs - days * DAY_MS;
  const prevTo = fromMs - DAY_MS;
  return {
    timeZone: zone,
    range,
    granularity: "day",
    keys,
    previousKeys: { first: utcDay(prevFrom), last: utcDay(prevTo) },
    from: utcDay(fromMs),
    to: utcDay(toMs),
    previous: { from: utcDay(prevFrom), to: utcDay(prevTo) },
    // Local days last 23, 24 or 25 hours: the bounds are the zone's midnights, not multiples of a day.
    startMs: dayStart(zone, utcDay(fromMs)),
    endMs: dayStart(zone, nextDate(utcDay(toMs))),
  };
}

/** The checked query: a preset range or a custom pair of dates (as UTC-midnight ms of the date strings). */
export type WindowQuery = { range: Range } | { range: null; from: number; to: number };

/** Check range/from/to (422 VALIDATION_FAILED naming the field); no clock or zone needed yet. */
export function parseWindowQuery(q: { range?: string; from?: string; to?: string }): WindowQuery {
  if (q.range !== undefined && !(RANGES as readonly string[]).includes(q.range))
    throw new ApiError("VALIDATION_FAILED", `range must be one of ${RANGES.join(", ")}.`, { field: "range", allowed: RANGES });
  if (q.from !== undefined || q.to !== undefined) {
    if (q.from === undefined) throw new ApiError("VALIDATION_FAILED", "from is required with to (both as YYYY-MM-DD).", { field: "from" });
    if (q.to === undefined) throw new ApiError("VALIDATION_FAILED", "to is required with from (both as YYYY-MM-DD).", { field: "to" });
    const from = parseDate("from", q.from);
    const to = parseDate("to", q.to);
    if (from > to) throw new ApiError("VALIDATION_FAILED", "from must not be after to.", { field: "from" });
    if ((to - from) / DAY_MS + 1 > MAX_WINDOW_DAYS)
      throw new ApiError("VALIDATION_FAILED", `A window spans at most ${MAX_WINDOW_DAYS} days (from and to inclusive).`, {
        field: "to",
        max_days: MAX_WINDOW_DAYS,
      });
    return { range: null, from, to };
  }
  return { range: (q.range ?? DEFAULT_RANGE) as Range };
}

/** The window of a checked query at `nowMs`, in local dates of `zone` (an IANA name). */
export function windowOf(q: WindowQuery, nowMs: number, zone: string): Window {
  if (q.range === null) return dayWindow(null, q.from, q.to, zone);
  const range = q.range;
  if (range === "24h") {
    // The current (partial) hour and the 23 before it; the previous period is the 24 hours before.
    // UTC hours in every zone: hourly rows are UTC hours, and the answer's timestamps are instants.
    const last = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
    const first = last - 23 * HOUR_MS;
    return {
      timeZone: zone,
      range,
      granularity: "hour",
      keys: Array.from({ length: 24 }, (_, i) => hourOf(first + i * HOUR_MS)),
      previousKeys: { first: hourOf(first - 24 * HOUR_MS), last: hourOf(first - HOUR_MS) },
      from: new Date(first).toISOString(),
      to: new Date(last + HOUR_MS).toISOString(),
      previous: { from: new Date(first - 24 * HOUR_MS).toISOString(), to: new Date(first).toISOString() },
      startMs: first,
      endMs: last + HOUR_MS,
    };
  }
  const days = Number.parseInt(range, 10);
  // Today is the local date in the zone; the arithmetic on dates is the same in every zone.
  const today = Date.parse(`${localDay(zone, nowMs)}T00:00:00Z`);
  return dayWindow(range, today - (days - 1) * DAY_MS, today, zone);
}

/** Whether the previous period lies wholly after tracking began (else its numbers are unknown, not zero). */
export function previousAvailable(w: Window, trackingSinceMs: number | null): boolean {
  if (trackingSinceMs === null) return false;
  const since = w.granularity === "hour" ? hourOf(trackingSinceMs) : localDay(w.timeZone, trackingSinceMs);
  return w.previousKeys.first >= since;
}

/** The timestamp of a bucket key ("YYYY-MM-DDTHH" -> ISO hour, "YYYY-MM-DD" stays a date). */
export const bucketLabel = (key: string) => (key.length === 13 ? `${key}:00:00.000Z` : key);

/** The first instant of a bucket (a UTC hour, or a local day of the window's zone) as an ISO timestamp. */
export const bucketStart = (key: string, w: Window) => new Date(key.length === 13 ? Date.parse(`${key}:00:00.000Z`) : dayStart(w.timeZone, key)).toISOString();
