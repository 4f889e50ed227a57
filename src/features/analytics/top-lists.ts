// Top lists (paths, referrers, countries, bots, 404 paths) of day windows. A 90-day window sums
// up to 90 days x 1,000 values; whole ISO weeks are read from the weekly roll-up instead (at most
// 13 weeks and 12 edge days). Almost all of a window's days are also closed: nothing counted
// later can land on them. So the sums of a window's closed days are kept in a small cache and
// only the last two days are read for each later request. Any write to a cached day (a fake clock going back, a
// replay) or a retention prune drops the entries it touches, so an answer is never stale.
import type { Deps } from "../../core/context";

export interface TopRow {
  /** The publication id when the list is per site (404 paths), else "". */
  id: string;
  value: string;
  hits: number;
}

interface Entry {
  /** Last day the entry sums (days after it are read live). */
  closedLast: string;
  rows: Map<string, TopRow>;
  /** The same rows, largest first. */
  sorted: TopRow[];
}

const DAY_MS = 86_400_000;
/** Entries kept per database; the oldest goes first. */
const ENTRIES_MAX = 16;
/** A window with more distinct values than this (a flooded site) is not cached: memory stays bounded. */
const VALUES_MAX = 20_000;

const caches = new WeakMap<object, Map<string, Entry>>();
const cacheOf = (deps: Deps) => {
  let c = caches.get(deps.sqlite);
  if (!c) caches.set(deps.sqlite, (c = new Map()));
  return c;
};

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The last closed day at `nowMs`: the day before yesterday. A flush writes the hour of each hit,
 * so yesterday can still gain counts for a few seconds after midnight; earlier days cannot.
 */
export const lastClosedDay = (nowMs: number) => dayOf(nowMs - 2 * DAY_MS);

/** A write touched days from `fromDay` on: cached sums that include any of them are dropped. */
export function forgetCachedDaysFrom(deps: Deps, fromDay: string): void {
  const cache = caches.get(deps.sqlite);
  if (!cache) return;
  for (const [key, e] of cache) if (e.closedLast >= fromDay) cache.delete(key);
}

/** The ISO week of a day: the "YYYY-MM-DD" of its Monday (UTC). */
export function weekOf(day: string): string {
  const ms = Date.parse(`${day}T00:00:00Z`);
  return dayOf(ms - ((new Date(ms).getUTCDay() + 6) % 7) * DAY_MS);
}

/**
 * The days [first, last] as whole ISO weeks (read from the weekly roll-up) and the days of the
 * partial weeks at the edges (read from the daily one): a 90-day window is at most 13 weeks and
 * 12 days instead of 90 days.
 */
export function splitIntoWeeks(first: string, last: string): { weeks: string[]; days: string[] } {
  const weeks: string[] = [];
  const days: string[] = [];
  const lastMs = Date.parse(`${last}T00:00:00Z`);
  for (let ms = Date.parse(`${first}T00:00:00Z`); ms <= lastMs; ) {
    const day = dayOf(ms);
    if (weekOf(day) === day && ms + 6 * DAY_MS <= lastMs) {
      weeks.push(day);
      ms += 7 * DAY_MS;
    } else {
      days.push(day);
      ms += DAY_MS;
    }
  }
  return { weeks, days };
}

const sumSql = (bySite: boolean) => {
  const part = (table: string, key: string, param: string) =>
    `SELECT publication_id, value, hits FROM ${table} WHERE publication_id IN (SELECT value FROM json_each(?1)) AND kind = ?2 ` +
    `AND ${key} IN (SELECT value FROM json_each(${param}))`;
  return (
    `SELECT ${bySite ? "publication_id" : "''"} AS id, value, sum(hits) AS hits FROM (` +
    `${part("analytics_weekly_dims", "week", "?3")} UNION ALL ${part("analytics_daily_dims", "day", "?4")}) ` +
    `GROUP BY ${bySite ? "publication_id, " : ""}value`
  );
};

function sums(deps: Deps, ids: string, kind: string, first: string, last: string, bySite: boolean): TopRow[] {
  const { weeks, days } = splitIntoWeeks(first, last);
  return deps.sqlite.query(sumSql(bySite)).all(ids, kind, JSON.stringify(weeks), JSON.stringify(days)) as TopRow[];
}

const rowKey = (r: TopRow) => `${r.id}\n${r.value}`;

/**
 * The `limit` largest values of `kind` over the days [first, last] of the publications `ids`
 * (a JSON array), ordered as SQL's `ORDER BY hits DESC, value` would.
 */
export function topOfDays(deps: Deps, ids: string, kind: string, first: string, last: string, bySite: boolean, limit: number, nowMs: number): TopRow[] {
  const closedLast = [last, lastClosedDay(nowMs)].sort()[0]!;
  let closed: Entry | null = null;
  if (first <= closedLast) {
    const cache = cacheOf(deps);
    const key = `${ids}\n${kind}\n${bySite}\n${first}\n${closedLast}`;
    closed = cache.get(key) ?? null;
    if (closed === null) {
      const rows = sums(deps, ids, kind, first, closedLast, bySite);
      closed = { closedLast, rows: new Map(rows.map((r) => [rowKey(r), r])), sorted: rows.sort(byHitsThenValue) };
      if (rows.length <= VALUES_MAX) {
        if (cache.size >= ENTRIES_MAX) cache.delete(cache.keys().next().value!);
        cache.set(key, closed);
      }
    }
  }
  const liveFirst = first > closedLast ? first : nextDay(closedLast);
  // Values with live counts get their new sums; the rest keep their closed order, so only the
  // first `limit` of them can make the list.
  const live = new Map<string, TopRow>();
  if (liveFirst <= last) {
    for (const r of sums(deps, ids, kind, liveFirst, last, bySite)) {
      const k = rowKey(r);
      const before = closed?.rows.get(k);
      live.set(k, before ? { id: r.id, value: r.value, hits: before.hits + r.hits } : r);
    }
  }
  const candidates = [...live.values()];
  if (closed !== null) {
    let taken = 0;
    for (const r of closed.sorted) {
      if (taken === limit) break;
      if (live.has(rowKey(r))) continue;
      candidates.push(r);
      taken += 1;
    }
  }
  return candidates.sort(byHitsThenValue).slice(0, limit);
}

const nextDay = (day: string) => dayOf(Date.parse(`${day}T00:00:00Z`) + DAY_MS);

function byHitsThenValue(a: TopRow, b: TopRow): number {
  return b.hits - a.hits || compareText(a.value, b.value) || compareText(a.id, b.id);
}

// SQLite compares text as UTF-8 bytes; JS's < compares UTF-16 units, which agrees except for
// characters from U+D800 up. Those (rare) ties are compared as bytes.
const HIGH_UNITS = /[\uD800-\uFFFF]/;
function compareText(a: string, b: string): number {
  if (a === b) return 0;
  if (HIGH_UNITS.test(a) || HIGH_UNITS.test(b)) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return a < b ? -1 : 1;
}
