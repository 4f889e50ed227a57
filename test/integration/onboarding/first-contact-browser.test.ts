// First contact in real Chromium: the dashboard's pages at phone width (375 px) do not widen
// the page, the offline API reference at /docs makes no request to any other host and shows
// none of the vendor's AI/deploy/share menus, and the Auto-Index icons are drawn (inline SVG),
// not font glyphs that show as empty boxes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Browser, type Page } from "playwright-core";
import { launchChromium } from "../../helpers/chromium";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";

let t: TestPier;
let browser: Browser;

beforeAll(async () => {
  t = await startTestPier();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

// The API host as the banner prints it (http://localhost:<port>): Scalar shows its developer
// toolbar on localhost by default, so this is where the menus would appear.
const api = (path: string) => `http://localhost:${t.pier.httpPort}${path}`;
const isLocal = (url: string) => {
  const u = new URL(url);
  return ["data:", "blob:", "about:"].includes(u.protocol) || u.hostname === "localhost" || u.hostname.endsWith(".localhost") || u.hostname === "127.0.0.1";
};

/** Horizontal overflow of the document: > 0 means the page scrolls sideways. */
const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe("first contact in Chromium", () => {
  test("sign-up from /, then the dashboard and account pages fit a 375 px phone", async () => {
    const ctx = await browser.newContext({ viewport: { width: 375, height: 740 } });
    const page = await ctx.newPage();
    try {
      await page.goto(api("/"));
      expect(new URL(page.url()).pathname).toBe("/signup");
      await page.fill("#email", "phone-owner-with-a-rather-long-address@example.com");
      await page.fill("#password", "a long enough password");
      await Promise.all([page.waitForURL(api("/dashboard")), page.click("button[type=submit]")]);
      expect(await page.textContent("h1")).toBe("Welcome to Pier");
      expect(await overflow(page)).toBeLessThanOrEqual(0);

      // A few keys with long names fill the access table (the widest table Pier shows).
      for (const label of ["deploy bot for the documentation site", "nightly backup job", "ci"]) {
        await page.goto(api("/dashboard/account/keys"));
        await page.fill("#label", label);
        await Promise.all([page.waitForLoadState("load"), page.waitForNavigation(), page.click("#create-key button[type=submit]")]);
      }
      await page.goto(api("/dashboard/account/keys"));
      expect(await page.locator("table tbody tr").count()).toBeGreaterThanOrEqual(3);
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      // The table itself stays reachable: it scrolls inside its card.
      const table = await page.evaluate(() => {
        const el = document.querySelector("table")!;
        return { scroll: el.scrollWidth, client: el.clientWidth, overflowX: getComputedStyle(el).overflowX };
      });
      expect(table.overflowX).toBe("auto");
      expect(table.client).toBeLessThanOrEqual(375);

      await page.goto(api("/account/security"));
      expect(await overflow(page)).toBeLessThanOrEqual(0);
    } finally {
      await ctx.close();
    }
  }, 60_000);

  test("/docs loads offline: no request leaves for another host, no AI, deploy or share menus", async () => {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const outside: string[] = [];
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (isLocal(url)) return route.continue();
      outside.push(url);
      return route.abort();
    });
    try {
      const res = await page.goto(api("/docs"));
      expect(res!.status()).toBe(200);
      // The reference rendered from the embedded spec (an operation of ours is listed).
      await page.waitForFunction(() => document.body.innerText.includes("/api/v1/buckets"), undefined, { timeout: 20_000 });
      await page.waitForTimeout(1500); // let lazy panels and late fetches start
      expect(outside).toEqual([]);
      const text = await page.evaluate(() => document.body.innerText);
      expect(text).not.toContain("Ask AI");
      expect(text).not.toContain("Deploy");
      expect(text).not.toMatch(/\bShare\b/);
      expect(text).not.toContain("Developer Tools");
    } finally {
      await ctx.close();
    }
  }, 60_000);

  test("Auto-Index icons are inline SVG drawings, not glyphs", async () => {
    const s = await publishSite(t, {
      files: [
        { path: "docs/guide.html", bytes: "<p>guide</p>" },
        { path: "docs/notes.txt", bytes: "notes" },
        { path: "docs/archive.zip", bytes: "PK" },
        { path: "docs/sub/more.md", bytes: "# more" },
      ],
    });
    const ctx = await browser.newContext({ viewport: { width: 375, height: 740 } });
    const page = await ctx.newPage();
    try {
      const res = await page.goto(`http://${s.host}:${t.pier.httpPort}/docs/`);
      expect(res!.status()).toBe(200);
      const icons = await page.evaluate(() =>
        Array.from(document.querySelectorAll(".pier-files td.icon")).map((td) => ({
          text: (td.textContent ?? "").trim(),
          svg: !!td.querySelector("svg"),
          width: td.querySelector("svg")?.getBoundingClientRect().width ?? 0,
        })),
      );
      expect(icons.length).toBe(5); // parent, folder, three files
      for (const icon of icons) expect(icon).toEqual({ text: "", svg: true, width: 22 });
      // The theme switch is a drawing too.
      expect(await page.locator("#pier-theme svg").count()).toBe(1);
      expect(await overflow(page)).toBeLessThanOrEqual(0);
    } finally {
      await ctx.close();
    }
  }, 60_000);
});
