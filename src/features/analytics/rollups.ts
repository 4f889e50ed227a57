// The database side of analytics: one transaction adds a batch of hour counts to the hourly and
// daily roll-ups, their top lists and the all-time totals; the prune task applies retention.
// Raw prepared statements (bun:sqlite caches them): this runs every few seconds and seeds the
// benchmarks' ten million hits, so it stays close to the metal.
import type { Deps } from "../../core/context";
import type { DimensionKind } from "../../db/schema";
import type { HourCounts } from "./counts";
import { forgetCachedDaysFrom, weekOf } from "./top-lists";

export interface FlushReport {
  rows: number;
  publications: number;
}

const COUNTERS = "hits, hits_bots, hits_assets, hits_not_found, visitors, clicks, downloads";
const ADD = ["hits", "hits_bots", "hits_assets", "hits_not_found", "visitors", "clicks", "downloads"].map((c) => `${c} = ${c} + excluded.${c}`).join(", ");

const SQL = {
  live: "SELECT id FROM publications WHERE id IN (SELECT value FROM json_each(?))",
  visitor: "INSERT OR IGNORE INTO analytics_visitors (publication_id, day, hash) VALUES (?, ?, ?)",
  hourly: `INSERT INTO analytics_hourly (publication_id, hour, ${COUNTERS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (publication_id, hour) DO UPDATE SET ${ADD}`,
  daily: `INSERT INTO analytics_daily (publication_id, day, ${COUNTERS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (publication_id, day) DO UPDATE SET ${ADD}`,
  hourlyDim:
    "INSERT INTO analytics_hourly_dims (publication_id, hour, kind, value, hits) VALUES (?, ?, ?, ?, ?) ON CONFLICT (publication_id, kind, hour, value) DO UPDATE SET hits = hits + excluded.hits",
  dailyDim:
    "INSERT INTO analytics_daily_dims (publication_id, day, kind, value, hits) VALUES (?, ?, ?, ?, ?) ON CONFLICT (publication_id, kind, day, value) DO UPDATE SET hits = hits + excluded.hits",
  weeklyDim:
    "INSERT INTO analytics_weekly_dims (publication_id, week, kind, value, hits) VALUES (?, ?, ?, ?, ?) ON CONFLICT (publication_id, kind, week, value) DO UPDATE SET hits = hits + excluded.hits",
  totals:
    "INSERT INTO analytics_totals (publication_id, hits_all_time, first_event_at, last_event_at) VALUES (?, ?, ?, ?) " +
    "ON CONFLICT (publication_id) DO UPDATE SET hits_all_time = hits_all_time + excluded.hits_all_time, " +
    "first_event_at = min(first_event_at, excluded.first_event_at), last_event_at = max(last_event_at, excluded.last_event_at)",
};

export function writeRollups(deps: Deps, batch: HourCounts[]): FlushReport {
  const db = deps.sqlite;
  let rows = 0;
  const write = db.transaction(() => {
    // A publication deleted since its hits were counted has nothing left to count them against.
    const ids = [...new Set(batch.map((c) => c.publicationId))];
    const live = new Set((db.query(SQL.live).all(JSON.stringify(ids)) as { id: string }[]).map((r) => r.id));
    const totals = new Map<string, { hits: number; first: number; last: number }>();
    const visitor = db.query(SQL.visitor);
    for (const c of batch) {
      if (!live.has(c.publicationId)) continue;
      const day = c.day; // the local date in the account's time zone
      const week = weekOf(day);
      let visitors = c.visitorsWritten + c.overflowVisitors.size;
      for (const hash of c.visitors) visitors += visitor.run(c.publicationId, day, hash).changes;
      const values = [c.hits, c.hitsBots, c.hitsAssets, c.hitsNotFound, visitors, c.clicks, c.downloads];
      db.query(SQL.hourly).run(c.publicationId, c.hour, ...values);
      db.query(SQL.daily).run(c.publicationId, day, ...values);
      rows += 2;
      for (const [kind, values] of Object.entries(c.dims) as [DimensionKind, Map<string, number>][]) {
        for (const [value, hits] of values) {
          db.query(SQL.hourlyDim).run(c.publicationId, c.hour, kind, value, hits);
          db.query(SQL.dailyDim).run(c.publicationId, day, kind, value, hits);
          db.query(SQL.weeklyDim).run(c.publicationId, week, kind, value, hits);
          rows += 3;
        }
      }
      const t = totals.get(c.publicationId) ?? { hits: 0, first: c.firstAt, last: c.lastAt };
      t.hits += c.hits;
      t.first = Math.min(t.first, c.firstAt);
      t.last = Math.max(t.last, c.lastAt);
      totals.set(c.publicationId, t);
    }
    for (const [id, t] of totals) {
      db.query(SQL.totals).run(id, t.hits, new Date(t.first).toISOString(), new Date(t.last).toISOString());
      rows += 1;
    }
    return totals.size;
  });
  const publications = write.immediate();
  if (batch.length)
    forgetCachedDaysFrom(
      deps,
      batch.reduce((min, c) => (c.day < min ? c.day : min), batch[0]!.day),
    );
  return { rows, publications };
}

/**
 * Store a chunk of a publication-day's visitor hashes in its own short transaction; returns how
 * many were new for the day (the visitors to count). The timer's flush writes hashes this way
 * ahead of the roll-ups so a flood never holds the event loop for one long transaction.
 */
export function writeVisitorHashes(deps: Deps, publicationId: string, day: string, hashes: string[]): number {
  const db = deps.sqlite;
  const visitor = db.query(SQL.visitor);
  return db
    .transaction(() => {
      let added = 0;
      for (const hash of hashes) added += visitor.run(publicationId, day, hash).changes;
      return added;
    })
    .immediate();
}

/**
 * Forget salts of days before `keepFrom` and the visitor hashes made with them: after this no
 * visitor of those days can be recognised or recomputed.
 */
export function pruneSalts(deps: Deps, keepFrom: string): void {
  deps.sqlite.query("DELETE FROM analytics_salts WHERE day < ?").run(keepFrom);
  deps.sqlite.query("DELETE FROM analytics_visitors WHERE day < ?").run(keepFrom);
}

/**
 * The first day kept: daily rows are keyed by each account's local date, so the cut is the date
 * N days ago in the zone furthest behind UTC (UTC-12). No account then loses a day that is
 * still inside its retention; accounts ahead of that zone keep up to one day more.
 */
export function retentionCut(nowMs: number, retentionDays: number): string {
  return new Date(nowMs - FURTHEST_BEHIND_UTC_MS - retentionDays * 86_400_000).toISOString().slice(0, 10);
}
const FURTHEST_BEHIND_UTC_MS = 12 * 3_600_000;

/** Hourly figures serve the 24h range and its previous period: three days is enough. */
const HOURLY_KEEP_MS = 3 * 86_400_000;

/**
 * The periodic retention task: hourly rows after 3 days, daily rows after
 * --analytics-retention-days, weekly top lists once their whole week has expired. The week the
 * cut falls in is rebuilt from its remaining days, so a week row always equals its stored days.
 */
export function pruneAnalytics(deps: Deps): { hourly: number; daily: number; weekly: number } {
  const now = deps.clock.now().getTime();
  const hourCut = new Date(now - HOURLY_KEEP_MS).toISOString().slice(0, 13);
  const dayCut = retentionCut(now, deps.config.analyticsRetentionDays);
  const cutWeek = weekOf(dayCut);
  const db = deps.sqlite;
  const pruned = db.transaction(() => {
    const hourly = db.query("DELETE FROM analytics_hourly WHERE hour < ?").run(hourCut).changes;
    db.query("DELETE FROM analytics_hourly_dims WHERE hour < ?").run(hourCut);
    const daily = db.query("DELETE FROM analytics_daily WHERE day < ?").run(dayCut).changes;
    const dailyDims = db.query("DELETE FROM analytics_daily_dims WHERE day < ?").run(dayCut).changes;
    let weekly = db.query("DELETE FROM analytics_weekly_dims WHERE week < ?").run(cutWeek).changes;
    if (dailyDims > 0 && cutWeek < dayCut) {
      // Part of the cut's week is gone: its rows are summed again from the days that remain.
      weekly += db.query("DELETE FROM analytics_weekly_dims WHERE week = ?").run(cutWeek).changes;
      db.query(
        "INSERT INTO analytics_weekly_dims (publication_id, week, kind, value, hits) " +
          "SELECT publication_id, ?1, kind, value, sum(hits) FROM analytics_daily_dims WHERE day BETWEEN ?1 AND date(?1, '+6 days') " +
          "GROUP BY publication_id, kind, value",
      ).run(cutWeek);
    }
    return { hourly, daily, weekly };
  })();
  forgetCachedDaysFrom(deps, ""); // sums that included pruned days would show them
  return pruned;
}
