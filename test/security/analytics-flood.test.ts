// A flood of distinct clients (every request a new IP, as a botnet or a spoofed-address scan
// looks) must not grow the stored visitor hashes without bound, and the flush must not hold the
// site server for one long transaction; each visitor is still counted.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { VISITOR_HASHES_PER_HOUR } from "../../src/features/analytics/recorder";
import { startTestPier, type TestPier } from "../helpers/pier";
import { publishSite, type PublishedSite } from "../helpers/sites";

let t: TestPier;
let s: PublishedSite;
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
const ipOf = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
// The flood goes to the primary: the test drives and reads this process's recorder on its
// ManualClock (with serving workers on, each worker has its own recorder on the real clock).
const visit = (i: number) =>
  t.primaryFetch(s.host, `/scan-${i}`, { headers: { "user-agent": FIREFOX, "x-forwarded-for": ipOf(i) } }).then((r) => r.arrayBuffer());

beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
  // The test runs every flush itself: the 5-second timer's flush, landing while a slow machine is
  // still sending the flood, would take the batch (and its report) from the flush under test.
  const recorder = t.pier.deps.analytics as unknown as { timer: ReturnType<typeof setInterval> | null };
  if (recorder.timer) clearInterval(recorder.timer);
  recorder.timer = null;
  const now = t.clock.now().getTime();
  t.clock.advance(Math.ceil(now / 86_400_000) * 86_400_000 + 3_600_000 + 60_000 - now); // 01:01 UTC: the flood stays within one hour
  s = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });
});
afterAll(() => t.stop());

test("distinct clients beyond the hourly cap are counted as visitors but their hashes are not stored", async () => {
  const flood = VISITOR_HASHES_PER_HOUR + 500;
  for (let i = 0; i < flood; i += 100) await Promise.all(Array.from({ length: 100 }, (_, j) => visit(i + j)));

  // The timer's flush: hashes go in chunks, the site keeps answering between them.
  const finished: string[] = [];
  const flushing = t.pier.deps.analytics.flushInSteps().then((report) => {
    finished.push("flush");
    return report;
  });
  const during = visit(flood).then(() => finished.push("request"));
  const [report] = await Promise.all([flushing, during]);
  expect(report.publications).toBe(1);
  expect(finished).toEqual(["request", "flush"]);
  t.pier.deps.analytics.flush();

  const stored = t.pier.deps.sqlite.query("SELECT count(*) AS n FROM analytics_visitors").get() as { n: number };
  expect(stored.n).toBe(VISITOR_HASHES_PER_HOUR);
  const a = (await t.api("GET", `/api/v1/publications/${s.pub.id}/analytics?range=24h`, { key: s.user.key })).body.data.analytics;
  expect(a.totals.hits).toBe(flood + 1);
  expect(a.totals.visitors).toBe(flood + 1); // every distinct client once
});

test("in a later hour of the day, a visitor whose hash was stored is not counted again", async () => {
  t.clock.advance(3_600_000); // within the flood's hour, past the cap, a returning client counts again (docs/analytics.md)
  await visit(0);
  t.pier.deps.analytics.flush();
  const a = (await t.api("GET", `/api/v1/publications/${s.pub.id}/analytics?range=24h`, { key: s.user.key })).body.data.analytics;
  expect(a.totals.hits).toBe(VISITOR_HASHES_PER_HOUR + 502);
  expect(a.totals.visitors).toBe(VISITOR_HASHES_PER_HOUR + 501);
});
