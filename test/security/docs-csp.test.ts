// /docs had no Content-Security-Policy. It now has a strict one, and the offline Scalar API
// reference still renders under it in a real browser with no policy violations.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Browser } from "playwright-core";
import { launchChromium } from "../helpers/chromium";
import { startTestPier, type TestPier } from "../helpers/pier";

let t: TestPier;
let browser: Browser;

beforeAll(async () => {
  t = await startTestPier();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t.stop();
});

test("/docs and /docs/errors send a strict CSP: only Pier's own script, no framing, no third parties", async () => {
  for (const path of ["/docs", "/docs/errors"]) {
    const r = await fetch(t.url + path);
    const csp = r.headers.get("content-security-policy") ?? "";
    expect(csp, path).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
  }
});

test("the API reference renders under the policy in Chromium without violations or outside requests", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const violations: string[] = [];
  const outside: string[] = [];
  const refusedOutside: string[] = [];
  page.on("console", (m) => {
    const text = m.text();
    if (!/Content.Security.Policy|Refused to/i.test(text)) return;
    // Scalar asks its cloud registry for search suggestions: refusing that is the policy working.
    if (/connect-src 'self'|Refused to connect/.test(text) && !text.includes(t.url)) refusedOutside.push(text);
    else violations.push(text);
  });
  page.on("request", (req) => {
    if (!req.url().startsWith(t.url) && !req.url().startsWith("data:") && !req.url().startsWith("blob:")) outside.push(req.url());
  });
  await page.goto(`${t.url}/docs`);
  await page.getByText("Publish sessions").first().waitFor({ timeout: 20_000 });
  await page.getByText("Server and client versions", { exact: false }).first().waitFor({ timeout: 5_000 });
  expect(violations).toEqual([]);
  expect(outside).toEqual([]);
  await context.close();
});
