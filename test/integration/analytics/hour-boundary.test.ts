// Hits that are not a person's visit (assets, crawlers' requests) are counted into their hour as
// they are served, visits when their raw facts are folded: both must land in the hour they
// happened in, across an hour's end that no flush separates, and keep counting after a flush.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, type PublishedSite } from "../../helpers/sites";

const HOUR = 3_600_000;
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";

let t: TestPier;
let s: PublishedSite;
const get = async (path: string, ua: string) => {
  const r = await t.primaryFetch(s.host, path, { headers: { "user-agent": ua, "x-forwarded-for": "198.51.100.20" } });
  await r.arrayBuffer();
  return r.status;
};

beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
  s = await publishSite(t, {
    files: [
      { path: "index.html", bytes: "<!doctype html><h1>Home</h1>" },
      { path: "style.css", bytes: "body{}" },
    ],
  });
});
afterAll(() => t.stop());

test("assets and crawlers' requests count in their own hour, with no flush at the hour's end, and after a flush", async () => {
  const now = t.clock.now().getTime();
  t.clock.advance(Math.ceil(now / HOUR) * HOUR - 1000 - now); // one second before an hour ends
  const first = new Date(t.clock.now().getTime()).toISOString().slice(0, 13);
  expect(await get("/style.css", FIREFOX)).toBe(200);
  expect(await get("/", GOOGLEBOT)).toBe(200);
  expect(await get("/missing", GPTBOT)).toBe(404);
  expect(await get("/", FIREFOX)).toBe(200); // the one visit
  t.clock.advance(2000); // the next hour, no flush in between
  const second = new Date(t.clock.now().getTime()).toISOString().slice(0, 13);
  expect(await get("/style.css", FIREFOX)).toBe(200);
  expect(await get("/style.css", GOOGLEBOT)).toBe(200);
  t.pier.deps.analytics.flush();
  expect(await get("/style.css", FIREFOX)).toBe(200); // counted after the flush, into the same hour
  t.pier.deps.analytics.flush();

  const r = await t.api("GET", `/api/v1/publications/${s.pub.id}/analytics?range=24h`, { key: s.user.key });
  expect(r.status).toBe(200);
  const a = r.body.data.analytics;
  const hour = (h: string) => a.daily.find((d: { date: string }) => d.date === `${h}:00:00.000Z`);
  expect(hour(first)).toEqual({ date: `${first}:00:00.000Z`, hits: 4, visitors: 1, hits_not_found: 1, hits_bots: 2 });
  expect(hour(second)).toEqual({ date: `${second}:00:00.000Z`, hits: 3, visitors: 0, hits_not_found: 0, hits_bots: 1 });
  expect(a.totals).toMatchObject({ hits: 7, views: 4, hits_assets: 4, hits_bots: 3, hits_not_found: 1, visitors: 1 });
  expect(a.bots).toEqual([
    { bot: "Googlebot", hits: 2 },
    { bot: "GPTBot", hits: 1 },
  ]);
  expect(a.paths_not_found.map((p: { path: string; hits: number }) => [p.path, p.hits])).toEqual([["/missing", 1]]);
  expect(a.paths).toEqual([{ path: "/", hits: 1 }]);
});
