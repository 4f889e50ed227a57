// The Analytics result resource as the spec shows it, shared by REST and MCP. With details
// hidden (plan entitlement analytics_details: false) every detail number except
// totals.hits_all_time is null and every list is empty.
import type { SiteRef } from "./service";
import { bucketLabel, type Window } from "./window";

export interface Totals {
  views: number;
  hits: number;
  visitors: number;
  clicks: number;
  downloads: number;
  hits_assets: number;
  hits_not_found: number;
  hits_bots: number;
}

const KEYS: (keyof Totals)[] = ["views", "hits", "visitors", "clicks", "downloads", "hits_assets", "hits_not_found", "hits_bots"];
const nulls = () => Object.fromEntries(KEYS.map((k) => [k, null])) as Record<keyof Totals, null>;
const pick = (t: Totals) => Object.fromEntries(KEYS.map((k) => [k, t[k]])) as unknown as Totals;

export type AnalyticsFigures =
  | { visible: false; hitsAllTime: number }
  | {
      visible: true;
      hitsAllTime: number;
      totals: Totals;
      /** null: the previous period is unavailable (before the site or its analytics existed). */
      previous: Totals | null;
      series: { key: string; row: Omit<Totals, "views"> | null }[];
      firstEventAt: string | null;
      lastEventAt: string | null;
      sites: { site: SiteRef; hits: number }[];
      paths: { value: string; hits: number }[];
      referrers: { value: string; hits: number }[];
      countries: { value: string; hits: number }[];
      bots: { value: string; hits: number }[];
      notFound: { site: SiteRef; path: string; hits: number }[];
    };

export function presentAnalytics(w: Window, f: AnalyticsFigures) {
  const head = {
    range: w.range,
    granularity: w.granularity,
    from: w.from,
    to: w.to,
    /** The IANA zone whose local dates the days are (the account's setting; hours are UTC). */
    time_zone: w.timeZone,
    details_visible: f.visible,
    previous_period: w.previous,
  };
  if (!f.visible) {
    return {
      ...head,
      first_event_at: null,
      last_event_at: null,
      totals: { hits_all_time: f.hitsAllTime, ...nulls() },
      previous_period_totals: nulls(),
      diff_vs_previous_period: nulls(),
      daily: [],
      buckets: [],
      paths: [],
      referrers: [],
      countries: [],
      bots: [],
      paths_not_found: [],
    };
  }
  const prev = f.previous;
  return {
    ...head,
    first_event_at: f.firstEventAt,
    last_event_at: f.lastEventAt,
    totals: { hits_all_time: f.hitsAllTime, ...pick(f.totals) },
    previous_period_totals: prev ? pick(prev) : nulls(),
    diff_vs_previous_period: prev ? (Object.fromEntries(KEYS.map((k) => [k, f.totals[k] - prev[k]])) as unknown as Totals) : nulls(),
    daily: f.series.map(({ key, row }) => ({
      date: bucketLabel(key),
      hits: row?.hits ?? 0,
      visitors: row?.visitors ?? 0,
      hits_not_found: row?.hits_not_found ?? 0,
      hits_bots: row?.hits_bots ?? 0,
    })),
    buckets: f.sites.map(({ site, hits }) => ({
      bucket_id: site.bucketId,
      bucket_title: site.bucketTitle,
      publication_id: site.publicationId,
      public_slug: site.slug,
      url: site.url,
      hits,
    })),
    paths: f.paths.map((r) => ({ path: r.value, hits: r.hits })),
    referrers: f.referrers.map((r) => ({ referrer: r.value, hits: r.hits })),
    countries: f.countries.map((r) => ({ country: r.value, hits: r.hits })),
    bots: f.bots.map((r) => ({ bot: r.value, hits: r.hits })),
    paths_not_found: f.notFound.map((r) => ({
      bucket_id: r.site.bucketId,
      publication_id: r.site.publicationId,
      public_slug: r.site.slug,
      path: r.path,
      hits: r.hits,
    })),
  };
}

export type AnalyticsResult = ReturnType<typeof presentAnalytics>;
