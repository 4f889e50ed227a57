// Visitor counting across flushes, serving processes and retention: a reader seen again in a later
// flush of the same hour is one visitor (the hour's hash cap counts people, not page views); two
// processes starting a day hash with the one stored salt; a previous period reaching past the
// retention cut is unknown (null), not zero; a failed roll-up does not lose the visitors whose
// hashes were already stored.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { HourCounts, VISITOR_HASHES_PER_HOUR } from "../../../src/features/analytics/recorder";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier({ analyticsRetentionDays: 30 });
});
afterAll(() => t.stop());

test("a reader seen again in later flushes of the hour is neither admitted again nor counted over the cap", () => {
  const c = new HourCounts("pub_x", "2026-03-01T10");
  const readers = Array.from({ length: 200 }, (_, i) => `reader-${i}`);
  for (const r of readers) c.addVisitor(r);
  expect(c.visitors.size).toBe(200);
  // 100 more flush intervals of the same 200 readers: nothing new to store or count.
  for (let flush = 0; flush < 100; flush++) {
    c.reset();
    for (const r of readers) c.addVisitor(r);
    expect(c.visitors.size).toBe(0);
    expect(c.overflowVisitors.size).toBe(0);
  }
  // The cap is for distinct hashes: filled by new ones, then only newcomers go over it.
  c.reset();
  for (let i = 200; i < VISITOR_HASHES_PER_HOUR; i++) c.addVisitor(`reader-${i}`);
  expect(c.visitors.size).toBe(VISITOR_HASHES_PER_HOUR - 200);
  c.reset();
  for (let i = 0; i < VISITOR_HASHES_PER_HOUR; i++) c.addVisitor(`reader-${i}`);
  expect(c.visitors.size + c.overflowVisitors.size).toBe(0);
  c.addVisitor("newcomer");
  expect(c.overflowVisitors.size).toBe(1);
});

test("a process that finds no salt for the day and loses the race to store one hashes with the stored salt", async () => {
  const site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>salt</h1>" }] });
  const deps = t.pier.deps;
  const other = new Database(join(deps.config.dataDir, "pier.db"));
  const storedByOther = "salt-stored-by-the-other-process-0123456789";
  const query = deps.sqlite.query.bind(deps.sqlite);
  let raced = false;
  // The other serving process stores the day's salt right after this one read that there was none.
  deps.sqlite.query = ((sqlText: string) => {
    const statement = query(sqlText);
    if (raced || !sqlText.startsWith("SELECT salt FROM analytics_salts")) return statement;
    return {
      get: (day: string) => {
        const row = statement.get(day);
        if (!raced && row === null) {
          raced = true;
          other.query("INSERT INTO analytics_salts (day, salt) VALUES (?, ?)").run(day, storedByOther);
        }
        return row;
      },
    };
  }) as typeof deps.sqlite.query;
  const ip = "198.51.100.7";
  const ua = "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0";
  try {
    deps.analytics.hit(deps.analytics.now(), site.pub.id, site.host.split(".")[0]!, "/", "page", false, null, ua, null, ip);
    deps.analytics.flush();
  } finally {
    deps.sqlite.query = query;
    other.close();
  }
  expect(raced).toBe(true);
  const stored = deps.sqlite.query("SELECT hash FROM analytics_visitors WHERE publication_id = ?").all(site.pub.id) as { hash: string }[];
  const withStoredSalt = new Bun.CryptoHasher("sha256", storedByOther).update(`${ip}\n${ua}\n${site.pub.id}`).digest("base64url").slice(0, 22);
  expect(stored.map((r) => r.hash)).toEqual([withStoredSalt]);
});

test("a previous period reaching back past the retention cut is null, not zeros", async () => {
  const site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>old</h1>" }] });
  const DAY = 86_400_000;
  t.clock.advance(100 * DAY);
  try {
    const read = async (q: string) => (await t.api("GET", `/api/v1/publications/${site.pub.id}/analytics${q}`, { key: site.user.key })).body.data.analytics;
    // 30 days of retention: the 30 days before this 30d window were deleted, though the site is older.
    const month = await read("?range=30d");
    for (const v of Object.values(month.previous_period_totals)) expect(v).toBeNull();
    for (const v of Object.values(month.diff_vs_previous_period)) expect(v).toBeNull();
    // A week's previous week is inside the retention: known, and zero here.
    const week = await read("?range=7d");
    expect(week.previous_period_totals.hits).toBe(0);
  } finally {
    t.clock.advance(-100 * DAY);
  }
});

test("visitors whose hashes were stored before a failed roll-up are counted by the next flush", async () => {
  const site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>flush</h1>" }] });
  const deps = t.pier.deps;
  const visitorsOfSite = () =>
    (deps.sqlite.query("SELECT coalesce(sum(visitors), 0) AS n FROM analytics_daily WHERE publication_id = ?").get(site.pub.id) as { n: number }).n;
  deps.analytics.hit(deps.analytics.now(), site.pub.id, site.host.split(".")[0]!, "/", "page", false, null, "Mozilla/5.0 Firefox/133.0", null, "198.51.100.9");
  // The roll-up transaction fails (a real SQLite error) after the visitor hashes were written.
  deps.sqlite.exec("CREATE TRIGGER fail_rollups BEFORE INSERT ON analytics_hourly BEGIN SELECT RAISE(ABORT, 'disk trouble'); END");
  try {
    // What the flush timer runs: visitor hashes in small steps, then the roll-ups.
    await (deps.analytics as unknown as { flushQuietly(inSteps: boolean): Promise<void> }).flushQuietly(true);
  } finally {
    deps.sqlite.exec("DROP TRIGGER fail_rollups");
  }
  expect((deps.sqlite.query("SELECT count(*) AS n FROM analytics_visitors WHERE publication_id = ?").get(site.pub.id) as { n: number }).n).toBe(1);
  expect(visitorsOfSite()).toBe(0);
  deps.analytics.flush();
  expect(visitorsOfSite()).toBe(1);
});
