// Analytics in the account's time zone, end to end: real HTTP requests to real sites of accounts
// in Europe/Berlin, Asia/Kathmandu (+05:45) and UTC, the fake clock moved to exact instants
// around local midnights and a DST change, then the exact API numbers. Days are local dates of
// the site's account; the 24h range stays UTC hours.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pruneAnalytics } from "../../../src/features/analytics";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, type PublishedSite } from "../../helpers/sites";

const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
const SAFARI = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15";

let t: TestPier;
let berlin: PublishedSite;
let kathmandu: PublishedSite;
let utc: PublishedSite;

/** Move the test clock to an exact instant (real time keeps running from there: seconds, no more). */
const at = (iso: string) => t.clock.advance(Date.parse(iso) - t.clock.now().getTime());
const hit = async (site: PublishedSite, path = "/", ua = FIREFOX, ip = "8.8.8.8") => {
  const r = await t.primaryFetch(site.host, path, { headers: { "user-agent": ua, "x-forwarded-for": ip } });
  await r.arrayBuffer();
  expect(r.status).toBe(200);
};
const flush = () => t.pier.deps.analytics.flush();
const analytics = async (site: PublishedSite, query: string) => {
  const r = await t.api("GET", `/api/v1/publications/${site.pub.id}/analytics${query}`, { key: site.user.key });
  expect(r.status).toBe(200);
  return r.body.data.analytics;
};
const setZone = async (site: PublishedSite, zone: string) => {
  const r = await t.api("PATCH", "/api/v1/account", { key: site.user.key, body: { time_zone: zone } });
  expect(r.status).toBe(200);
  expect(r.body.data.account.time_zone).toBe(zone);
};
const dayHits = (a: { daily: { date: string; hits: number }[] }) => Object.fromEntries(a.daily.filter((d) => d.hits > 0).map((d) => [d.date, d.hits]));

beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
  at("2026-10-01T12:00:00Z"); // the sites exist from here: every previous period below is known
  const files = [{ path: "index.html", bytes: "<!doctype html><h1>Home</h1>" }];
  berlin = await publishSite(t, { files });
  kathmandu = await publishSite(t, { files });
  utc = await publishSite(t, { files });
  await setZone(berlin, "Europe/Berlin");
  await setZone(kathmandu, "Asia/Kathmandu");
});

afterAll(() => t?.stop());

describe("a DST change day in Berlin lasts 25 hours", () => {
  beforeAll(async () => {
    at("2026-10-24T21:30:00Z"); // Berlin Oct 24, 23:30 (CEST, +02:00)
    await hit(berlin);
    at("2026-10-24T22:30:00Z"); // Berlin Oct 25, 00:30 CEST
    await hit(berlin);
    at("2026-10-25T22:30:00Z"); // Berlin Oct 25, 23:30 CET (+01:00): the same local day, 24 h later
    await hit(berlin);
    at("2026-10-25T23:10:00Z"); // Berlin Oct 26, 00:10 CET
    await hit(berlin);
    flush();
  });

  test("the day holds every hit between its two midnights, 25 hours apart", async () => {
    const a = await analytics(berlin, "?from=2026-10-25&to=2026-10-25");
    expect(a.time_zone).toBe("Europe/Berlin");
    expect(a.daily).toEqual([{ date: "2026-10-25", hits: 2, visitors: 1, hits_not_found: 0, hits_bots: 0 }]);
    expect(a.first_event_at).toBe("2026-10-24T22:00:00.000Z"); // the day's first instant: local midnight CEST
    expect(a.previous_period).toEqual({ from: "2026-10-24", to: "2026-10-24" });
    expect(a.previous_period_totals.hits).toBe(1);
    expect(a.diff_vs_previous_period.hits).toBe(1);
    expect(dayHits(await analytics(berlin, "?from=2026-10-20&to=2026-10-27"))).toEqual({ "2026-10-24": 1, "2026-10-25": 2, "2026-10-26": 1 });
  });

  test("the day after the change starts at 23:00 UTC", async () => {
    const a = await analytics(berlin, "?from=2026-10-26&to=2026-10-26");
    expect(a.totals.hits).toBe(1);
    expect(a.first_event_at).toBe("2026-10-25T23:00:00.000Z");
  });
});

describe("hits at 23:30 UTC", () => {
  beforeAll(async () => {
    at("2026-11-09T12:00:00Z");
    for (const site of [berlin, kathmandu, utc]) await hit(site, "/", SAFARI, "193.0.6.139"); // Nov 9 everywhere
    at("2026-11-10T23:30:00Z"); // Berlin Nov 11 00:30; Kathmandu Nov 11 05:15; UTC Nov 10
    for (const site of [berlin, kathmandu, utc]) await hit(site);
    flush();
    at("2026-11-11T10:00:00Z"); // the same person, later the same Berlin day (the next UTC day)
    await hit(berlin);
    flush();
  });

  test("a Berlin account sees them on the next local day; its previous period and diffs are Berlin days", async () => {
    const a = await analytics(berlin, "?range=7d");
    expect(a.time_zone).toBe("Europe/Berlin");
    expect(a.to).toBe("2026-11-11");
    expect(a.from).toBe("2026-11-05");
    expect(dayHits(a)).toEqual({ "2026-11-09": 1, "2026-11-11": 2 });
    expect(a.previous_period).toEqual({ from: "2026-10-29", to: "2026-11-04" });
    const day = await analytics(berlin, "?from=2026-11-11&to=2026-11-11");
    expect(day.totals).toMatchObject({ hits: 2, views: 2, visitors: 1 });
    expect(day.previous_period).toEqual({ from: "2026-11-10", to: "2026-11-10" });
    expect(day.previous_period_totals.hits).toBe(0);
    expect(day.diff_vs_previous_period).toMatchObject({ hits: 2, visitors: 1 });
  });

  test("visitors are unique per local day: one person at 00:30 and 11:00 Berlin time is one visitor, though two UTC days", async () => {
    const a = await analytics(berlin, "?from=2026-11-11&to=2026-11-11");
    expect(a.daily).toEqual([{ date: "2026-11-11", hits: 2, visitors: 1, hits_not_found: 0, hits_bots: 0 }]);
  });

  test("another account's zone has no effect: the UTC account sees the same instant on Nov 10", async () => {
    const a = await analytics(utc, "?range=7d");
    expect(a.time_zone).toBe("UTC");
    expect(a.to).toBe("2026-11-11");
    expect(dayHits(a)).toEqual({ "2026-11-09": 1, "2026-11-10": 1 });
    const account = await t.api("GET", "/api/v1/analytics?range=7d", { key: utc.user.key });
    expect(account.body.data.analytics.time_zone).toBe("UTC");
    expect(dayHits(account.body.data.analytics)).toEqual({ "2026-11-09": 1, "2026-11-10": 1 });
  });

  test("the account-wide endpoint answers in the account's zone", async () => {
    const r = await t.api("GET", "/api/v1/analytics?from=2026-11-10&to=2026-11-11", { key: berlin.user.key });
    expect(r.status).toBe(200);
    expect(r.body.data.analytics.time_zone).toBe("Europe/Berlin");
    expect(r.body.data.analytics.daily.map((d: { date: string; hits: number }) => [d.date, d.hits])).toEqual([
      ["2026-11-10", 0],
      ["2026-11-11", 2],
    ]);
  });

  test("24h stays 24 UTC hours with UTC timestamps, whatever the zone", async () => {
    const a = await analytics(berlin, "?range=24h");
    expect(a.time_zone).toBe("Europe/Berlin");
    expect(a.granularity).toBe("hour");
    expect(a.daily[23].date).toBe("2026-11-11T10:00:00.000Z");
    expect(a.daily.find((d: { date: string }) => d.date === "2026-11-10T23:00:00.000Z").hits).toBe(1);
    expect(a.from).toBe("2026-11-10T11:00:00.000Z");
  });
});

describe("Kathmandu, +05:45: local midnight falls at 18:15 UTC", () => {
  beforeAll(async () => {
    at("2026-11-12T18:05:00Z"); // Nov 12, 23:50 local
    await hit(kathmandu, "/", SAFARI, "193.0.6.139");
    at("2026-11-12T18:20:00Z"); // Nov 13, 00:05 local: the same UTC hour, the next local day
    await hit(kathmandu, "/", SAFARI, "193.0.6.139");
    await hit(kathmandu, "/", FIREFOX, "8.8.4.4");
    flush();
  });

  test("one UTC hour splits between two local days; the same person counts once on each", async () => {
    const a = await analytics(kathmandu, "?from=2026-11-12&to=2026-11-13");
    expect(a.time_zone).toBe("Asia/Kathmandu");
    expect(a.daily).toEqual([
      { date: "2026-11-12", hits: 1, visitors: 1, hits_not_found: 0, hits_bots: 0 },
      { date: "2026-11-13", hits: 2, visitors: 2, hits_not_found: 0, hits_bots: 0 },
    ]);
    expect(Date.parse(a.last_event_at)).toBeGreaterThanOrEqual(Date.parse("2026-11-12T18:20:00Z"));
    const day = await analytics(kathmandu, "?from=2026-11-13&to=2026-11-13");
    expect(day.first_event_at).toBe("2026-11-12T18:15:00.000Z"); // the local day's first instant (the first event ever is older)
  });

  test("the 24h range shows the UTC hour with both", async () => {
    at("2026-11-12T19:30:00Z");
    const a = await analytics(kathmandu, "?range=24h");
    expect(a.daily.find((d: { date: string }) => d.date === "2026-11-12T18:00:00.000Z")).toMatchObject({ hits: 3, visitors: 3 });
  });

  test("the Berlin account's Nov 11 (hits of another zone at the same instants) is unchanged", async () => {
    expect(dayHits(await analytics(berlin, "?from=2026-11-09&to=2026-11-13"))).toEqual({ "2026-11-09": 1, "2026-11-11": 2 });
  });
});

describe("changing the zone", () => {
  test("moves the windows at once and the days of what is counted from then on", async () => {
    at("2026-11-14T23:30:00Z"); // Berlin Nov 15, 00:30
    expect((await analytics(berlin, "?range=7d")).to).toBe("2026-11-15");
    await hit(berlin);
    flush();
    await setZone(berlin, "UTC");
    let a = await analytics(berlin, "?range=7d");
    expect(a.time_zone).toBe("UTC");
    expect(a.to).toBe("2026-11-14");
    expect(a.previous_period).toEqual({ from: "2026-11-01", to: "2026-11-07" });
    // Counted from now on: the UTC day of the same instant.
    await hit(berlin);
    flush();
    a = await analytics(berlin, "?from=2026-11-14&to=2026-11-15");
    expect(dayHits(a)).toEqual({ "2026-11-14": 1, "2026-11-15": 1 }); // the earlier hit keeps the Berlin day it was counted on
    await setZone(berlin, "America/New_York");
    expect((await analytics(berlin, "?range=7d")).to).toBe("2026-11-14"); // 18:30 in New York
    await setZone(berlin, "Europe/Berlin");
  });
});

describe("privacy: a local date's salt", () => {
  const salts = () => (t.pier.deps.sqlite.query("SELECT day FROM analytics_salts ORDER BY day").all() as { day: string }[]).map((r) => r.day);
  const hashesOf = (day: string) => (t.pier.deps.sqlite.query("SELECT count(*) AS n FROM analytics_visitors WHERE day = ?").get(day) as { n: number }).n;

  test("is kept while the date lasts somewhere and deleted with its hashes once it is over everywhere", async () => {
    at("2026-11-20T23:30:00Z"); // Berlin Nov 21, 00:30: the hash is made with the salt of Nov 21
    await hit(berlin, "/", SAFARI, "203.0.113.9");
    flush();
    expect(salts()).toContain("2026-11-21");
    expect(hashesOf("2026-11-21")).toBeGreaterThan(0);
    at("2026-11-22T11:00:00Z"); // Nov 21 is over in Berlin, not yet at UTC-12 (until 12:00 UTC)
    flush();
    expect(salts()).toContain("2026-11-21");
    at("2026-11-23T00:00:30Z"); // over everywhere
    flush();
    expect(salts()).not.toContain("2026-11-21");
    expect(hashesOf("2026-11-21")).toBe(0);
  });
});

describe("retention counts days in the account's zone", () => {
  test("a day inside the retention in Los Angeles is kept although it is past it in UTC, and goes a day later", async () => {
    const la = await publishSite(t, { files: [{ path: "index.html", bytes: "<!doctype html><h1>LA</h1>" }] });
    await setZone(la, "America/Los_Angeles");
    at("2026-11-24T18:00:00Z"); // Los Angeles Nov 24, 10:00
    await hit(la);
    flush();
    const kept = t.pier.deps.config.analyticsRetentionDays;
    const lastDayKept = new Date(Date.parse("2026-11-24T00:00:00Z") + kept * 86_400_000).toISOString().slice(0, 10);
    // 03:00 UTC on the day after: still lastDayKept in Los Angeles (19:00 the evening before).
    at(`${new Date(Date.parse(lastDayKept) + 86_400_000).toISOString().slice(0, 10)}T03:00:00Z`);
    pruneAnalytics(t.pier.deps);
    expect((await analytics(la, "?from=2026-11-24&to=2026-11-24")).totals.hits).toBe(1);
    t.clock.advance(86_400_000); // a day later the day is past the retention in Los Angeles too
    pruneAnalytics(t.pier.deps);
    expect((await analytics(la, "?from=2026-11-24&to=2026-11-24")).totals.hits).toBe(0);
  });
});
