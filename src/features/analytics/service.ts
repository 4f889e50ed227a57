// Analytics queries: the account's sites or one publication, over a window and its previous
// period, from the hourly (24h) or daily roll-ups. Access is the publication's: another
// account's publication is a 404 through loadPublication, like every other read.
import type { Actor, Deps } from "../../core/context";
import { entitlementsOf, getAccount } from "../accounts";
import { loadBucket } from "../buckets";
import { listPublications, loadPublication, publicUrlOf, type PublicationRow } from "../publish";
import { presentAnalytics, type AnalyticsFigures, type Totals } from "./present";
import { retentionCut } from "./rollups";
import { topOfDays } from "./top-lists";
import { bucketStart, parseWindowQuery, previousAvailable, windowOf, type Window } from "./window";

export interface AnalyticsQuery {
  range?: string;
  from?: string;
  to?: string;
}

export interface SiteRef {
  publicationId: string;
  bucketId: string;
  bucketTitle: string;
  slug: string;
  url: string;
  createdAtMs: number;
}

/** Entries per top list (paths, referrers, countries, bots, 404 paths). */
export const TOP_N = 50;

/**
 * The account's time zone: its days are the windows' days (the recorder keys daily rows by the
 * same zone). A publication's figures use the zone of the account that owns it.
 */
const timeZoneOf = (deps: Deps, accountId: string) => getAccount(deps, accountId).timeZone;

export function publicationAnalytics(deps: Deps, actor: Actor, publicationId: string, q: AnalyticsQuery) {
  const query = parseWindowQuery(q);
  const { pub, bucket } = loadPublication(deps, actor, publicationId, "bucket_read");
  const w = windowOf(query, deps.clock.now().getTime(), timeZoneOf(deps, pub.accountId));
  return analyticsFor(deps, actor.accountId, [siteRef(deps, pub, bucket.title)], w);
}

export function accountAnalytics(deps: Deps, actor: Actor, q: AnalyticsQuery) {
  const w = windowOf(parseWindowQuery(q), deps.clock.now().getTime(), timeZoneOf(deps, actor.accountId));
  const sites: SiteRef[] = [];
  for (let offset = 0; ; ) {
    const page = listPublications(deps, actor, { limit: 1000, offset });
    for (const pub of page.publications) {
      let title = pub.title;
      try {
        title = loadBucket(deps, actor, pub.bucketId, "bucket_read").title;
      } catch {
        // A bucket being deleted still has figures; its publication title stands in.
      }
      sites.push(siteRef(deps, pub, title));
    }
    if (page.pagination.next_offset == null) break;
    offset = page.pagination.next_offset;
  }
  return analyticsFor(deps, actor.accountId, sites, w);
}

function siteRef(deps: Deps, pub: PublicationRow, bucketTitle: string): SiteRef {
  return {
    publicationId: pub.id,
    bucketId: pub.bucketId,
    bucketTitle,
    slug: pub.publicSlug,
    url: publicUrlOf(deps, pub),
    createdAtMs: Date.parse(pub.createdAt),
  };
}

export function detailsVisible(deps: Deps, accountId: string): boolean {
  const account = getAccount(deps, accountId);
  return account ? entitlementsOf(deps, account).analytics_details : false;
}

const SUMS =
  "coalesce(sum(hits), 0) AS hits, coalesce(sum(hits_bots), 0) AS hits_bots, coalesce(sum(hits_assets), 0) AS hits_assets, " +
  "coalesce(sum(hits_not_found), 0) AS hits_not_found, coalesce(sum(visitors), 0) AS visitors, coalesce(sum(clicks), 0) AS clicks, " +
  "coalesce(sum(downloads), 0) AS downloads";
const IN_SCOPE = "publication_id IN (SELECT value FROM json_each(?1))";

type Row = Omit<Totals, "views">;
const withViews = (r: Row): Totals => ({ ...r, views: Math.max(0, r.hits - r.hits_bots) });

export function analyticsFor(deps: Deps, accountId: string, sites: SiteRef[], w: Window) {
  const db = deps.sqlite;
  const ids = JSON.stringify(sites.map((s) => s.publicationId));
  const [table, key, dims] =
    w.granularity === "hour" ? ["analytics_hourly", "hour", "analytics_hourly_dims"] : ["analytics_daily", "day", "analytics_daily_dims"];
  const first = w.keys[0]!;
  const last = w.keys[w.keys.length - 1]!;
  const inWindow = `${IN_SCOPE} AND ${key} BETWEEN ?2 AND ?3`;

  const all = db
    .query(`SELECT coalesce(sum(hits_all_time), 0) AS hits, min(first_event_at) AS first, max(last_event_at) AS last FROM analytics_totals WHERE ${IN_SCOPE}`)
    .get(ids) as { hits: number; first: string | null; last: string | null };
  const visible = detailsVisible(deps, accountId);
  if (!visible) return presentAnalytics(w, { visible: false, hitsAllTime: all.hits });

  const totals = withViews(db.query(`SELECT ${SUMS} FROM ${table} WHERE ${inWindow}`).get(ids, first, last) as Row);
  const trackingSince = sites.length ? Math.min(...sites.map((s) => s.createdAtMs)) : null;
  // A previous period reaching back past the retention cut is partly deleted: unknown, not zero.
  const kept = w.granularity === "hour" || w.previousKeys.first >= retentionCut(deps.clock.now().getTime(), deps.config.analyticsRetentionDays);
  const previous =
    kept && previousAvailable(w, trackingSince)
      ? withViews(db.query(`SELECT ${SUMS} FROM ${table} WHERE ${inWindow}`).get(ids, w.previousKeys.first, w.previousKeys.last) as Row)
      : null;

  const series = new Map(
    (db.query(`SELECT ${key} AS k, ${SUMS} FROM ${table} WHERE ${inWindow} GROUP BY ${key}`).all(ids, first, last) as (Row & { k: string })[]).map((r) => [
      r.k,
      r,
    ]),
  );
  const now = deps.clock.now().getTime();
  // Day windows: closed days' sums come from a cache (top-lists.ts); hours are few and live.
  const top = (kind: string) =>
    w.granularity === "day"
      ? topOfDays(deps, ids, kind, first, last, false, TOP_N, now)
      : (db
          .query(
            `SELECT value, sum(hits) AS hits FROM ${dims} WHERE ${IN_SCOPE} AND kind = ?4 AND ${key} BETWEEN ?2 AND ?3 GROUP BY value ORDER BY hits DESC, value LIMIT ${TOP_N}`,
          )
          .all(ids, first, last, kind) as { value: string; hits: number }[]);
  const notFound =
    w.granularity === "day"
      ? topOfDays(deps, ids, "not_found", first, last, true, TOP_N, now)
      : (db
          .query(
            `SELECT publication_id AS id, value, sum(hits) AS hits FROM ${dims} WHERE ${IN_SCOPE} AND kind = 'not_found' AND ${key} BETWEEN ?2 AND ?3 ` +
              `GROUP BY publication_id, value ORDER BY hits DESC, value LIMIT ${TOP_N}`,
          )
          .all(ids, first, last) as { id: string; value: string; hits: number }[]);
  const perSite = new Map(
    (
      db.query(`SELECT publication_id AS id, sum(hits) AS hits FROM ${table} WHERE ${inWindow} GROUP BY publication_id`).all(ids, first, last) as {
        id: string;
        hits: number;
      }[]
    ).map((r) => [r.id, r.hits]),
  );
  const span = db
    .query(`SELECT min(${key}) AS first, max(${key}) AS last FROM ${table} WHERE ${inWindow} AND hits + clicks + downloads > 0`)
    .get(ids, first, last) as {
    first: string | null;
    last: string | null;
  };

  const figures: AnalyticsFigures = {
    visible: true,
    hitsAllTime: all.hits,
    totals,
    previous,
    series: w.keys.map((k) => ({ key: k, row: series.get(k) ?? null })),
    firstEventAt: eventAt(all.first, span.first, w),
    lastEventAt: eventAt(all.last, span.last, w),
    sites: sites.map((s) => ({ site: s, hits: perSite.get(s.publicationId) ?? 0 })).sort((a, b) => b.hits - a.hits || a.site.slug.localeCompare(b.site.slug)),
    paths: top("path"),
    referrers: top("referrer"),
    countries: top("country"),
    bots: top("bot"),
    notFound: notFound.map((r) => ({ site: sites.find((s) => s.publicationId === r.id)!, path: r.value, hits: r.hits })),
  };
  return presentAnalytics(w, figures);
}

/**
 * The exact all-time timestamp when it falls inside the window; otherwise the start of the
 * first/last hour or local day of the window that has events (roll-ups keep no finer time).
 */
function eventAt(exact: string | null, bucketKey: string | null, w: Window): string | null {
  if (bucketKey === null) return null;
  if (exact !== null) {
    const ms = Date.parse(exact);
    if (ms >= w.startMs && ms < w.endMs) return exact;
  }
  return bucketStart(bucketKey, w);
}

/** `analytics` on every publication read: all-time hits always, the last event when details show. */
export function publicationSummary(deps: Deps, pub: { id: string; accountId: string }): { hits_all_time: number; last_event_at: string | null } {
  const row = deps.sqlite.query("SELECT hits_all_time AS hits, last_event_at AS last FROM analytics_totals WHERE publication_id = ?").get(pub.id) as {
    hits: number;
    last: string;
  } | null;
  return { hits_all_time: row?.hits ?? 0, last_event_at: row && detailsVisible(deps, pub.accountId) ? row.last : null };
}
