// The Analytics tab in real Chromium: a site gets real visits, the owner opens the bucket's
// Analytics tab, sees the same totals as the API, the uPlot chart drawn over the per-day table,
// switches to 24h and to a custom window (a bad one is refused on the page), then opens the
// account-wide Analytics page (/dashboard/analytics); axe checks them.
import { describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { dashboardUrl, expectAccessible, screenshot, signIn, submit, withDashboard } from "../../helpers/dashboard";
import type { TestPier } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";

let t: TestPier;
let browser: Browser;
withDashboard({}, (d) => ({ t, browser } = d));

describe("the Analytics tab in Chromium", () => {
  test("figures, chart, ranges and a refused window", async () => {
    const u = await t.user({ email: "dash-analytics@example.com" });
    const s = await publishSite(t, {
      user: u,
      files: [
        { path: "index.html", bytes: "<h1>hi</h1>" },
        { path: "about.html", bytes: "<h1>about</h1>" },
      ],
    });
    // Counted by the primary (through the relay with PIER_TEST_WORKERS), whose counts flush() writes.
    const visit = (path: string, ua: string, referer?: string) =>
      t.primaryFetch(s.host, path, { headers: { "user-agent": ua, ...(referer ? { referer } : {}) } }).then((r) => r.arrayBuffer());
    await visit("/", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "https://news.example.org/x");
    await visit("/about", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0");
    await visit("/", "Mozilla/5.0 (compatible; bingbot/2.0)");
    await visit("/gone", "Mozilla/5.0 (Macintosh) Safari/605.1.15");
    t.pier.deps.analytics.flush();

    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    try {
      await signIn(page, t, u, `/dashboard/buckets/${s.pub.bucketId}/analytics`);
      const main = () => page.textContent("main");
      expect(await page.locator("nav a[aria-current], a[aria-current=page]").allTextContents()).toContain("Analytics");
      const rowOf = async (label: string) =>
        (await page
          .locator("tr", { has: page.locator(`th:text-is("${label}")`) })
          .first()
          .textContent()) ?? "";
      expect(await rowOf("Views")).toContain("3");
      expect(await rowOf("Hits (with bots)")).toContain("4");
      expect(await rowOf("Visitors")).toContain("2");
      expect(await rowOf("Views")).toContain("n/a"); // no previous period before the site existed
      expect(await main()).toContain("news.example.org");
      expect(await main()).toContain("bingbot");
      expect(await main()).toContain("/gone");
      await page.waitForSelector("#chart .uplot canvas");
      await expectAccessible(page);
      await screenshot(page, "analytics");

      await page.selectOption("#range", "24h");
      await submit(page, "form[aria-label='Time window'] button");
      expect(await main()).toContain("Per hour (UTC)");

      await page.fill("#from", "2026-03-10");
      await page.fill("#to", "2026-01-01");
      await submit(page, "form[aria-label='Custom window'] button");
      expect(await main()).toContain("from must not be after to");
      await expectAccessible(page);

      // The account-wide page (nav: Analytics) draws the same chart over all the account's sites.
      await page.goto(dashboardUrl(t, "/dashboard/analytics"));
      expect(await rowOf("Hits (with bots)")).toContain("4");
      expect(await main()).toContain("/gone");
      await page.waitForSelector("#chart .uplot canvas");
      await expectAccessible(page);
      await screenshot(page, "analytics-account");

      const other = await t.user();
      const stranger = await browser.newContext();
      const p2 = await stranger.newPage();
      await signIn(p2, t, other, `/dashboard/buckets/${s.pub.bucketId}/analytics`);
      expect(await p2.textContent("main")).not.toContain("news.example.org");
      await stranger.close();
    } finally {
      await ctx.close();
    }
  }, 60_000);
});
