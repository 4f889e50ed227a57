// Dashboard pages in Chromium, used the way a person uses them: sign in through the form,
// submit forms and wait for the page that follows, check each page with axe and at phone width,
// and (PIER_TEST_SCREENSHOTS=1) save a screenshot at desktop and phone width under
// test-results/screenshots/ for review (not compared pixel by pixel).
import { afterAll, beforeAll, expect } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import type { Browser, Page } from "playwright-core";
import type { Config } from "../../src/config";
import { launchChromium } from "./chromium";
import { startTestPier, type TestPier, type TestUser } from "./pier";

export const SCREENSHOTS = join(import.meta.dir, "../../test-results/screenshots");

/** The API origin of a test Pier (localhost, so the browser treats it as a secure context). */
export const dashboardUrl = (t: TestPier, path: string) => `http://localhost:${t.pier.httpPort}${path}`;

/** Open `next` signed out, get sent to the sign-in form, sign in, and land back on `next`. */
export async function signIn(page: Page, t: TestPier, u: TestUser, next: string): Promise<void> {
  await page.goto(dashboardUrl(t, next));
  expect(new URL(page.url()).pathname).toBe("/signin");
  await page.fill("#email", u.email);
  await page.fill("#password", u.password);
  await Promise.all([page.waitForURL(dashboardUrl(t, next)), page.click("button[type=submit]")]);
}

/** Click a submit button and wait for the page the form leads to. */
export async function submit(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForLoadState("load"), page.waitForNavigation(), page.click(selector)]);
}

const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/**
 * Saving full-page PNGs costs Chromium about a second of CPU a page, and nothing compares them:
 * they are saved for a person to look at with PIER_TEST_SCREENSHOTS=1.
 */
const SAVE_SCREENSHOTS = process.env.PIER_TEST_SCREENSHOTS === "1";

/**
 * Lay the page out at 1280 px and at 375 px, asserting nothing scrolls sideways at phone width;
 * with PIER_TEST_SCREENSHOTS=1 also save both as PNGs under test-results/screenshots/.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const size = page.viewportSize() ?? { width: 1280, height: 900 };
  await page.setViewportSize({ width: 1280, height: 900 });
  if (SAVE_SCREENSHOTS) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-desktop.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 375, height: 740 });
  expect(await overflow(page)).toBeLessThanOrEqual(0);
  if (SAVE_SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `${name}-375.png`), fullPage: true });
  await page.setViewportSize(size);
}

/**
 * axe over the page as it is now: no serious or critical violation (each listed when found).
 * `exclude` skips parts axe cannot enter, such as a sandboxed frame where no script may run.
 */
export async function expectAccessible(page: Page, opts: { exclude?: string[] } = {}): Promise<void> {
  // Legacy mode runs the same rules in the page itself: the default opens a second page in the
  // context to merge the frames' results, which took 2-4 s of Chromium a call here against
  // 1-1.5 s, with the same findings (the only frame in Pier's pages, a mail's sandboxed view, is excluded anyway).
  let axe = new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]).setLegacyMode(true);
  for (const selector of opts.exclude ?? []) axe = axe.exclude(selector);
  const result = await axe.analyze();
  const bad = result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(bad).toEqual([]);
}

export interface Dashboard {
  t: TestPier;
  browser: Browser;
}

/**
 * The hooks every Chromium dashboard file needs: before its tests, a test Pier (with `overrides`,
 * or what the function returns when they depend on an earlier hook) and Chromium; after them,
 * both closed, each even when the other failed to start or close. `ready` receives both (assign
 * the file's `t` and `browser` there). Hooks run in the order they were registered, so a
 * beforeAll the file adds after this call sees both started.
 */
export function withDashboard(overrides: Partial<Config> | (() => Partial<Config>), ready: (d: Dashboard) => void): void {
  let t: TestPier | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    t = await startTestPier(typeof overrides === "function" ? overrides() : overrides);
    browser = await launchChromium();
    ready({ t, browser });
  });
  afterAll(async () => {
    const closed = await Promise.allSettled([browser?.close(), t?.stop()]);
    const failed = closed.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
  });
}
