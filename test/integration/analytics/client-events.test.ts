// Client events: the /_pier/events.js script in real Chromium reports outbound clicks and
// downloads of files hosted elsewhere (local downloads are the server's to count), and the
// /_pier/event endpoint never fails a visitor: junk, a disabled site or a flood is just not counted.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { EVENTS_PER_MINUTE } from "../../../src/features/analytics";
import { FLUSH_MS } from "../../../src/features/analytics/recorder";
import { launchChromium } from "../../helpers/chromium";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";

const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";
let t: TestPier;
let browser: Browser;
beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

const totals = async (s: PublishedSite) => {
  t.pier.deps.analytics.flush();
  const r = await t.api("GET", `/api/v1/publications/${s.pub.id}/analytics?range=24h`, { key: s.user.key });
  return r.body.data.analytics.totals;
};
const beacon = (s: PublishedSite, body: string, ip = "203.0.113.7", userAgent = BROWSER) =>
  siteFetch(t, s.host, "/_pier/event", { method: "POST", body, headers: { "content-type": "text/plain", "x-forwarded-for": ip, "user-agent": userAgent } });

describe("the events script in Chromium", () => {
  test("an outbound click and an off-site download are counted once each; on-site links are not reported", async () => {
    const other = `http://elsewhere.localhost:${t.pier.httpPort}`;
    const html = `<!doctype html><html><head><title>Events</title><link rel="icon" href="data:,"><script src="/_pier/events.js" defer></script>
      <script>document.addEventListener("click", (e) => e.preventDefault());</script></head><body>
      <a id="out" href="${other}/page">elsewhere</a> <a id="zip" href="${other}/files/app.zip">zip</a>
      <a id="pdf" href="/report.pdf">report</a> <a id="about" href="/about.html">about</a></body></html>`;
    const s = await publishSite(t, {
      files: [
        { path: "index.html", bytes: html },
        { path: "about.html", bytes: "<h1>About</h1>" },
        { path: "report.pdf", bytes: "%PDF" },
      ],
    });
    // Headless Chromium says so in its user agent (a bot's events are not counted): a person's browser here.
    const page = await browser.newPage({ userAgent: BROWSER });
    try {
      await page.goto(`http://${s.host}:${t.pier.httpPort}/`);
      await page.waitForFunction(() => document.readyState === "complete");
      for (const id of ["#out", "#zip", "#pdf", "#about"]) await page.click(id);
      // The page's hits may have been answered by a serving worker (PIER_TEST_WORKERS), which
      // flushes its own buffer every FLUSH_MS: wait for those too, with a deadline.
      let seen = { clicks: 0, downloads: 0, hits: 0 };
      for (const until = Date.now() + 3 * FLUSH_MS + 5_000; Date.now() < until && (seen.clicks < 1 || seen.downloads < 1 || seen.hits < 1); ) {
        await Bun.sleep(100);
        seen = await totals(s);
      }
      await Bun.sleep(300); // anything reported twice would have arrived by now
      // The page alone (its icon is inline, so no browser asks for /favicon.ico); /_pier/ is never a hit.
      expect(await totals(s)).toMatchObject({ clicks: 1, downloads: 1, hits: 1, views: 1 });
    } finally {
      await page.close();
    }
  }, 60_000);
});

describe("the event endpoint", () => {
  test("junk is answered 204 and not counted; a valid beacon is", async () => {
    const s = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });
    for (const body of ["", "not json", '{"type":"pageview"}', JSON.stringify({ type: "click", pad: "x".repeat(5000) }), "\u0000\u00ff"]) {
      expect((await beacon(s, body)).status).toBe(204);
    }
    expect((await beacon(s, '{"type":"click"}')).status).toBe(204);
    expect(await totals(s)).toMatchObject({ clicks: 1, downloads: 0, hits: 0 });
  });

  test("a bot's beacons are answered alike and not counted; a browser's are", async () => {
    const s = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });
    const googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    expect((await beacon(s, '{"type":"click"}', "203.0.113.8", googlebot)).status).toBe(204);
    expect((await beacon(s, '{"type":"download"}', "203.0.113.8", googlebot)).status).toBe(204);
    expect((await beacon(s, '{"type":"click"}', "203.0.113.8", "")).status).toBe(204); // no user agent: a script
    expect(await totals(s)).toMatchObject({ clicks: 0, downloads: 0 });
    expect((await beacon(s, '{"type":"click"}', "203.0.113.9")).status).toBe(204);
    expect((await beacon(s, '{"type":"download"}', "203.0.113.9")).status).toBe(204);
    expect(await totals(s)).toMatchObject({ clicks: 1, downloads: 1 });
  });

  test("one client is counted at most the rate per minute; others still are", async () => {
    const s = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });
    const statuses = await Promise.all(
      Array.from({ length: EVENTS_PER_MINUTE + 10 }, () => beacon(s, '{"type":"download"}', "198.51.100.1").then((r) => r.status)),
    );
    expect(new Set(statuses)).toEqual(new Set([204]));
    await beacon(s, '{"type":"download"}', "198.51.100.2");
    expect((await totals(s)).downloads).toBe(EVENTS_PER_MINUTE + 1);
  });

  test("addresses of one IPv6 /64 are one client for the per-minute rate", async () => {
    const s = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });
    for (let i = 1; i <= EVENTS_PER_MINUTE + 10; i++) await beacon(s, '{"type":"click"}', `2001:db8:7:7::${i.toString(16)}`);
    expect((await totals(s)).clicks).toBe(EVENTS_PER_MINUTE);
  });

  test("a gated site counts the events of visitors who passed its gate only", async () => {
    const s = await publishSite(t, { access: "password", password: "events-pass", files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });
    expect((await beacon(s, '{"type":"click"}')).status).toBe(204); // answered alike, not counted
    const login = await siteFetch(t, s.host, "/_pier/gate/password", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ password: "events-pass", next: "/" }).toString(),
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const passed = await siteFetch(t, s.host, "/_pier/event", {
      method: "POST",
      body: '{"type":"click"}',
      headers: { "content-type": "text/plain", cookie, "user-agent": BROWSER },
    });
    expect(passed.status).toBe(204);
    expect((await totals(s)).clicks).toBe(1);
  });

  test("client events off: the script is a no-op comment and beacons are not counted", async () => {
    const s = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });
    const p = await t.api("PATCH", `/api/v1/publications/${s.pub.id}`, { key: s.user.key, body: { publication_client_events_enabled: false } });
    expect(p.body.data.publication.publication_client_events_enabled).toBe(false);
    const script = await siteFetch(t, s.host, "/_pier/events.js");
    expect(script.headers.get("content-type")).toStartWith("text/javascript");
    expect(await script.text()).not.toContain("addEventListener");
    expect((await beacon(s, '{"type":"click"}')).status).toBe(204);
    expect((await totals(s)).clicks).toBe(0);
  });
});
