// The Analytics tab inlines uPlot's stylesheet (the page CSP allows inline styles, not stylesheet
// links). Inside <style> a browser decodes no character references, so the stylesheet must be
// inserted as it is: escaped, `th > *` became `th &#62; *` and `"Segoe UI"` `&#34;Segoe UI&#34;`,
// and the chart's legend and font rules were dropped as invalid CSS. The account-wide page
// (/dashboard/analytics) shares that renderer: its numbers are checked against the REST answer.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Browser, unescapeHtml } from "../../helpers/browser";
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

// The account-wide page (/dashboard/analytics) lays out accountAnalytics, the service of GET
// /api/v1/analytics: for the same window its numbers are the API's, its sites link to their tabs,
// and each 404 path names its site.
test("the account's Analytics page shows the API's account-wide figures", async () => {
  const first = await publishSite(t, { title: "Blog", files: [{ path: "index.html", bytes: "<h1>blog</h1>", contentType: "text/html" }] });
  const second = await publishSite(t, { user: first.user, title: "Shop", files: [{ path: "index.html", bytes: "<h1>shop</h1>", contentType: "text/html" }] });
  const ua = { "user-agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0" };
  const visit = (host: string, path: string) => t.primaryFetch(host, path, { headers: ua }).then((r) => r.arrayBuffer());
  await visit(first.host, "/");
  await visit(first.host, "/");
  await visit(first.host, "/gone");
  await visit(second.host, "/");
  await visit(second.host, "/missing");
  t.pier.deps.analytics.flush();

  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: first.user.email, password: first.user.password })).status).toBe(303);
  const today = t.pier.deps.clock.now().toISOString().slice(0, 10);
  for (const query of ["?range=30d", `?from=${today}&to=${today}`]) {
    const api = (await t.api("GET", `/api/v1/analytics${query}`, { key: first.user.key })).body.data.analytics;
    expect(api.totals.hits).toBe(5);
    const page = await b.get(`/dashboard/analytics${query}`);
    expect(page.status).toBe(200);
    const text = unescapeHtml(page.text);
    expect(text).toContain(`<a href="/dashboard/analytics" aria-current="page">Analytics</a>`);
    const n = (v: number | null) => (v === null ? "—" : v.toLocaleString("en"));
    const d = (v: number | null) => (v === null ? "n/a" : v > 0 ? `+${v}` : `${v}`);
    for (const [key, label] of [
      ["views", "Views"],
      ["hits", "Hits (with bots)"],
      ["visitors", "Visitors"],
      ["hits_not_found", "Not found"],
    ] as const)
      expect(text).toContain(
        `<tr><th scope="row">${label}</th><td>${n(api.totals[key])}</td><td>${n(api.previous_period_totals[key])}</td><td>${d(api.diff_vs_previous_period[key])}</td></tr>`,
      );
    expect(text).toContain(`Totals ${api.from} – ${api.to}`);
    expect(text).toContain(`data-series="${JSON.stringify(api.daily)}"`);
    expect(api.buckets.map((s: { bucket_title: string; hits: number }) => [s.bucket_title, s.hits])).toEqual([
      ["Blog", 3],
      ["Shop", 2],
    ]);
    for (const s of api.buckets)
      expect(text).toContain(
        `<a href="/dashboard/buckets/${s.bucket_id}/analytics${query}">${s.bucket_title}</a></th><td class="wrap">${s.url}</td><td>${s.hits}</td>`,
      );
    expect(api.paths_not_found).toHaveLength(2);
    for (const p of api.paths_not_found) {
      const title = p.bucket_id === first.pub.bucketId ? "Blog" : "Shop";
      expect(text).toContain(`<tr><td class="wrap">${title}</td><td class="wrap">${p.path}</td><td>${p.hits}</td></tr>`);
    }
  }
});

test("without analytics details the account's page shows what the tab shows: the all-time hits", async () => {
  const plansFile = join(mkdtempSync(join(tmpdir(), "pier-plans-")), "plans.json");
  writeFileSync(plansFile, JSON.stringify([{ id: "lite", extends: "free", entitlements: { analytics_details: false } }]));
  const t2 = await startTestPier({ plansFile });
  try {
    const user = await t2.user({ plan: "lite" });
    const site = await publishSite(t2, { user, files: [{ path: "index.html", bytes: "<h1>hi</h1>", contentType: "text/html" }] });
    for (let i = 0; i < 3; i++) await t2.primaryFetch(site.host, "/", { headers: { "user-agent": "Mozilla/5.0 Firefox/128.0" } }).then((r) => r.arrayBuffer());
    t2.pier.deps.analytics.flush();
    const api = (await t2.api("GET", "/api/v1/analytics?range=30d", { key: user.key })).body.data.analytics;
    expect(api.details_visible).toBe(false);
    expect(api.totals.hits_all_time).toBe(3);
    const b = new Browser(t2.url);
    expect((await b.submit("/signin", "/signin", { email: user.email, password: user.password })).status).toBe(303);
    const shown = `<p>All-time hits: <strong>3</strong>.</p><p class="muted">Your plan shows the all-time count only.</p>`;
    for (const path of ["/dashboard/analytics?range=30d", `/dashboard/buckets/${site.pub.bucketId}/analytics?range=30d`]) {
      const page = await b.get(path);
      expect(page.status).toBe(200);
      expect(page.text).toContain(shown);
      expect(page.text).not.toContain("Hits per site");
      expect(page.text).not.toContain("Totals ");
    }
  } finally {
    await t2.stop();
  }
});
