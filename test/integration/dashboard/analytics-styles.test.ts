// The Analytics tab inlines uPlot's stylesheet (the page CSP allows inline styles, not stylesheet
// links). Inside <style> a browser decodes no character references, so the stylesheet must be
// inserted as it is: escaped, `th > *` became `th &#62; *` and `"Segoe UI"` `&#34;Segoe UI&#34;`,
// and the chart's legend and font rules were dropped as invalid CSS.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Browser } from "../../helpers/browser";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";
import { siteAssets } from "../../../src/sites-assets.gen";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t?.stop());

test("the Analytics tab carries uPlot's stylesheet unescaped", async () => {
  const site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>hi</h1>", contentType: "text/html" }] });
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: site.user.email, password: site.user.password })).status).toBe(303);
  const page = await b.get(`/dashboard/buckets/${site.pub.bucketId}/analytics`);
  expect(page.status).toBe(200);
  const css = await Bun.file(siteAssets["dashboard/assets/uplot.min.css"]!).text();
  expect(css).toContain(" > ");
  expect(page.text.includes(`<style>${css}</style>`)).toBe(true);
});
