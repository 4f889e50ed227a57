// Website analytics roll-ups. Visits are never stored one by one: the site server counts them in
// memory and a flush adds the counts to hourly and daily rows (GoatCounter's memstore pattern).
// No IPs, no user agents, no cookies: a visitor is a salted hash that only lives for its day.
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { publications } from "./publish";

const counters = {
  hits: integer("hits").notNull().default(0),
  hitsBots: integer("hits_bots").notNull().default(0),
  hitsAssets: integer("hits_assets").notNull().default(0),
  hitsNotFound: integer("hits_not_found").notNull().default(0),
  /** Visitors first seen on their day within this row's period (a day's rows sum to its uniques). */
  visitors: integer("visitors").notNull().default(0),
  clicks: integer("clicks").notNull().default(0),
  downloads: integer("downloads").notNull().default(0),
};

/** One row per publication and UTC hour ("YYYY-MM-DDTHH"). Kept a few days (the 24h range). */
export const analyticsHourly = sqliteTable(
  "analytics_hourly",
  {
    publicationId: text("publication_id")
      .notNull()
      .references(() => publications.id, { onDelete: "cascade" }),
    hour: text("hour").notNull(),
    ...counters,
  },
  (t) => [primaryKey({ columns: [t.publicationId, t.hour] })],
);

/** One row per publication and UTC day ("YYYY-MM-DD"). Kept --analytics-retention-days. */
export const analyticsDaily = sqliteTable(
  "analytics_daily",
  {
    publicationId: text("publication_id")
      .notNull()
      .references(() => publications.id, { onDelete: "cascade" }),
    day: text("day").notNull(),
    ...counters,
  },
  (t) => [primaryKey({ columns: [t.publicationId, t.day] })],
);

export type DimensionKind = "path" | "referrer" | "country" | "bot" | "not_found";

/** Top-list counts per hour: paths, referrer hosts, countries, bot names, 404 paths. */
export const analyticsHourlyDims = sqliteTable(
  "analytics_hourly_dims",
  {
    publicationId: text("publication_id")
      .notNull()
      .references(() => publications.id, { onDelete: "cascade" }),
    hour: text("hour").notNull(),
    kind: text("kind", { enum: ["path", "referrer", "country", "bot", "not_found"] }).notNull(),
    value: text("value").notNull(),
    hits: integer("hits").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.publicationId, t.kind, t.hour, t.value] })],
);

/** The same per day: the 7d-90d ranges read these (at most a few thousand values a day). */
export const analyticsDailyDims = sqliteTable(
  "analytics_daily_dims",
  {
    publicationId: text("publication_id")
      .notNull()
      .references(() => publications.id, { onDelete: "cascade" }),
    day: text("day").notNull(),
    kind: text("kind", { enum: ["path", "referrer", "country", "bot", "not_found"] }).notNull(),
    value: text("value").notNull(),
    hits: integer("hits").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.publicationId, t.kind, t.day, t.value] })],
);

/**
 * The same per ISO week ("YYYY-MM-DD" of its Monday, UTC), written with the daily rows: a 90-day
 * window sums at most 13 weeks plus 12 edge days instead of 90 days. Always equal to the sum of
 * the week's stored daily rows (retention rebuilds a partly pruned week).
 */
export const analyticsWeeklyDims = sqliteTable(
  "analytics_weekly_dims",
  {
    publicationId: text("publication_id")
      .notNull()
      .references(() => publications.id, { onDelete: "cascade" }),
    week: text("week").notNull(),
    kind: text("kind", { enum: ["path", "referrer", "country", "bot", "not_found"] }).notNull(),
    value: text("value").notNull(),
    hits: integer("hits").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.publicationId, t.kind, t.week, t.value] })],
);

/** Cached all-time figures for the publication resource (never cut by retention). */
export const analyticsTotals = sqliteTable("analytics_totals", {
  publicationId: text("publication_id")
    .primaryKey()
    .references(() => publications.id, { onDelete: "cascade" }),
  hitsAllTime: integer("hits_all_time").notNull().default(0),
  firstEventAt: text("first_event_at").notNull(),
  lastEventAt: text("last_event_at").notNull(),
});

/**
 * Visitor hashes of today (and yesterday, until the day is over everywhere): a hash seen again the
 * same day is not a new visitor. Rows of older days are deleted with their day's salt.
 */
export const analyticsVisitors = sqliteTable(
  "analytics_visitors",
  {
    publicationId: text("publication_id").notNull(),
    day: text("day").notNull(),
    hash: text("hash").notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.publicationId, t.hash] })],
);

/** The random salt of each UTC day's visitor hashes; deleted once the day is over (then no hash can be recomputed). */
export const analyticsSalts = sqliteTable("analytics_salts", {
  day: text("day").primaryKey(),
  salt: text("salt").notNull(),
});
