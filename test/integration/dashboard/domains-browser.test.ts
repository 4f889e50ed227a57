// The custom-domains page in real Chromium with real DNS (challtestsrv): reached from the
// bucket page, a bad hostname refused next to the field with the input kept, a domain added
// with its records shown missing, the records created, "Check now" makes it active, then removed.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Browser, type Page } from "playwright-core";
import { startChallTestSrv, type ChallTestSrv } from "../../helpers/challtestsrv";
import { withDashboard } from "../../helpers/dashboard";
import type { TestPier } from "../../helpers/pier";
import { signedIn } from "../../helpers/browser";
import { publishSite } from "../../helpers/sites";

let t: TestPier;
let cts: ChallTestSrv;
let browser: Browser;
// challtestsrv first: Pier resolves names through it.
beforeAll(async () => {
  cts = await startChallTestSrv({ defaultIPv4: "" });
});
withDashboard(
  () => ({ dnsResolver: cts.dns }),
  (d) => ({ t, browser } = d),
);
afterAll(async () => {
  await cts?.stop();
});

const url = (path: string) => `http://localhost:${t.pier.httpPort}${path}`;
async function submit(page: Page, selector: string) {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
}

test("add, see the records missing, create them, check now, active, remove", async () => {
  const u = await t.user({ plan: "pro" });
  const s = await publishSite(t, { user: u, files: [{ path: "index.html", bytes: new TextEncoder().encode("hi"), contentType: "text/html" }] });
  const page = await (await browser.newContext()).newPage();
  await page.goto(url(`/dashboard/buckets/${s.pub.bucketId}`));
  await page.fill("#email", u.email);
  await page.fill("#password", u.password);
  await submit(page, "button[type=submit]");
  await submit(page, 'nav.tabs a:text("Domains")');
  expect(new URL(page.url()).pathname).toBe(`/dashboard/buckets/${s.pub.bucketId}/domains`);

  await page.fill("#hostname", "my_site.example.com");
  await submit(page, "form[action$='/domains'] button[type=submit]");
  expect(await page.textContent("#hostname-error")).toContain("underscore");
  expect(await page.inputValue("#hostname")).toBe("my_site.example.com");

  await page.fill("#hostname", "www.dashboard-test.com");
  await submit(page, "form[action$='/domains'] button[type=submit]");
  const body = (await page.textContent("body"))!;
  expect(body).toContain("Domain added");
  expect(body).toContain("_pier-challenge.www.dashboard-test.com");
  expect(await page.locator("strong", { hasText: "missing" }).count()).toBe(2);
  // Long record names and tokens wrap: no sideways scrolling on a phone.
  await page.setViewportSize({ width: 375, height: 740 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
  await page.setViewportSize({ width: 1280, height: 900 });

  const token = (await page.locator("code", { hasText: "pier-domain-verification=" }).textContent())!;
  await cts.setTxt("_pier-challenge.www.dashboard-test.com", token);
  await cts.setCname("www.dashboard-test.com", "localhost");
  await submit(page, "text=Check now");
  expect(await page.textContent("body")).toContain("The domain is active");
  expect(await page.locator("strong", { hasText: "missing" }).count()).toBe(0);
  // A reload shows the page again; it repeats nothing.
  await page.reload();
  expect(await page.textContent("body")).toContain("Replace the domain with");

  // Removing needs the domain's box ticked (D297): the browser refuses the form before.
  await page.check("input[name=confirm]");
  await submit(page, "button.danger");
  expect(await page.textContent("body")).toContain("Domain removed");
  const list = await t.api("GET", `/api/v1/buckets/${s.pub.bucketId}/custom_domains`, { key: u.key });
  expect(list.body.data.custom_domains).toEqual([]);
});

test("another account's bucket gives the not-found page", async () => {
  const owner = await t.user({ plan: "pro" });
  const other = await t.user({ plan: "pro" });
  const s = await publishSite(t, { user: owner, files: [{ path: "index.html", bytes: new TextEncoder().encode("x"), contentType: "text/html" }] });
  const page = await (await browser.newContext()).newPage();
  await page.goto(url(`/dashboard/buckets/${s.pub.bucketId}/domains`));
  await page.fill("#email", other.email);
  await page.fill("#password", other.password);
  const [res] = await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
  expect(res?.status()).toBe(404);
});

test("the plan's domain limit: a number when there is one, in words on a plan without one (not 1000000000)", async () => {
  const usageOf = async (plan: string) => {
    const u = await t.user({ plan });
    const s = await publishSite(t, { user: u, files: [{ path: "index.html", bytes: new TextEncoder().encode("x"), contentType: "text/html" }] });
    const text = (await (await signedIn(url(""), u)).get(`/dashboard/buckets/${s.pub.bucketId}/domains`)).text;
    return /<p class="small muted">([^<]*) Records, apex names/.exec(text)?.[1];
  };
  expect(await usageOf("owner")).toBe("0 custom domain(s) in use (no limit on this account&#39;s plan).");
  expect(await usageOf("pro")).toBe("0 of 20 custom domain(s) on this account&#39;s plan in use.");
});
