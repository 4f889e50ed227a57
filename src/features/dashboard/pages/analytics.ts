// A bucket's site analytics (/dashboard/buckets/<id>/analytics): the same figures as
// GET /api/v1/publications/:id/analytics, a range or a custom window, totals against the
// previous period, a chart (uPlot; the table below it is the fallback without script) and the
// top lists. Read-only: the switches are publication settings (PATCH /api/v1/publications/:id).
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { alertBox, html, SafeHtml } from "../../../http/pages/layout";
import { publicationAnalytics, RANGES } from "../../analytics";
import { getAccount } from "../../accounts";
import { getBucket } from "../../buckets";
import { findPublication } from "../../publish";
import { siteAssets } from "../../../sites-assets.gen";
import type { DashboardPage } from "../page";
import { BUCKETS_PATH } from "./buckets-home";

type Analytics = ReturnType<typeof publicationAnalytics>;
const TOTALS: [string, string][] = [
  ["views", "Views"],
  ["visitors", "Visitors"],
  ["hits", "Hits (with bots)"],
  ["hits_bots", "Bot hits"],
  ["hits_assets", "Asset hits"],
  ["hits_not_found", "Not found"],
  ["downloads", "Downloads"],
  ["clicks", "Outbound clicks"],
];
let uplotCss: string | null = null;

const num = (n: number | null) => (n === null ? "—" : n.toLocaleString("en"));
const signed = (n: number | null) => (n === null ? "n/a" : n > 0 ? `+${n.toLocaleString("en")}` : n.toLocaleString("en"));

function rangeForm(id: string, q: Record<string, string | undefined>, zone: string): SafeHtml {
  const current = q.from || q.to ? "" : (q.range ?? "7d");
  const options = RANGES.map(
    (r) => html`<option value="${r}"${current === r ? html` selected` : html``}>${r === "24h" ? "Last 24 hours" : `Last ${r.slice(0, -1)} days`}</option>`,
  );
  return html`<form method="get" action="${BUCKETS_PATH}/${id}/analytics" class="toolbar" aria-label="Time window">
<div><label for="range">Range</label><select id="range" name="range">${options}</select></div><button type="submit" class="secondary">Show</button></form>
<form method="get" action="${BUCKETS_PATH}/${id}/analytics" class="toolbar" aria-label="Custom window">
<div><label for="from">From (${zone})</label><input id="from" name="from" type="date" value="${q.from ?? ""}" required></div>
<div><label for="to">To (${zone})</label><input id="to" name="to" type="date" value="${q.to ?? ""}" required></div><button type="submit" class="secondary">Show dates</button></form>`;
}

function list(title: string, rows: { label: string; hits: number }[]): SafeHtml {
  const body = rows.length
    ? html`<div class="scroll"><table><caption>${title}</caption><thead><tr><th scope="col">${title}</th><th scope="col">Hits</th></tr></thead><tbody>${rows.map((r) => html`<tr><td class="wrap">${r.label}</td><td>${num(r.hits)}</td></tr>`)}</tbody></table></div>`
    : html`<p class="muted small">${title}: none in this window.</p>`;
  return body;
}

function figures(a: Analytics): SafeHtml {
  if (!a.details_visible)
    return html`<p>All-time hits: <strong>${num(a.totals.hits_all_time)}</strong>.</p><p class="muted">Your plan shows the all-time count only.</p>`;
  const totals = html`<div class="scroll"><table><caption>Totals ${a.from} – ${a.to} (previous: ${a.previous_period.from} – ${a.previous_period.to})</caption>
<thead><tr><th scope="col">Figure</th><th scope="col">This window</th><th scope="col">Previous</th><th scope="col">Change</th></tr></thead><tbody>
${TOTALS.map(([k, label]) => {
  const key = k as keyof typeof a.totals;
  return html`<tr><th scope="row">${label}</th><td>${num(a.totals[key])}</td><td>${num((a.previous_period_totals as Record<string, number | null>)[k] ?? null)}</td><td>${signed((a.diff_vs_previous_period as Record<string, number | null>)[k] ?? null)}</td></tr>`;
})}
<tr><th scope="row">All time</th><td>${num(a.totals.hits_all_time)}</td><td></td><td></td></tr></tbody></table></div>`;
  const series = html`<div id="chart" data-series="${JSON.stringify(a.daily)}" hidden></div>
<div class="scroll"><table><caption>${a.granularity === "hour" ? "Per hour (UTC)" : `Per day (${a.time_zone})`}</caption><thead><tr><th scope="col">${a.granularity === "hour" ? "Hour" : "Day"}</th><th scope="col">Hits</th><th scope="col">Visitors</th><th scope="col">Not found</th><th scope="col">Bots</th></tr></thead>
<tbody>${a.daily.map((d) => html`<tr><td>${a.granularity === "hour" ? d.date.slice(11, 16) : d.date}</td><td>${num(d.hits)}</td><td>${num(d.visitors)}</td><td>${num(d.hits_not_found)}</td><td>${num(d.hits_bots)}</td></tr>`)}</tbody></table></div>`;
  return html`${totals}<h2>Over time</h2>${series}<h2>Top lists</h2>
${list(
  "Pages",
  a.paths.map((r) => ({ label: r.path, hits: r.hits })),
)}
${list(
  "Referrers",
  a.referrers.map((r) => ({ label: r.referrer, hits: r.hits })),
)}
${list(
  "Countries",
  a.countries.map((r) => ({ label: r.country, hits: r.hits })),
)}
${list(
  "Bots",
  a.bots.map((r) => ({ label: r.bot, hits: r.hits })),
)}
${list(
  "Not found paths",
  a.paths_not_found.map((r) => ({ label: r.path, hits: r.hits })),
)}`;
}

export const analyticsPage: DashboardPage = {
  bucketTab: { label: "Analytics", path: "analytics" },
  routes: (app, shell) =>
    app.get(
      `${BUCKETS_PATH}/:id/analytics`,
      shell.view(async (s, { params, query }) => {
        const q = query as Record<string, string | undefined>;
        const bucket = getBucket(shell.deps, s.actor, params.id!);
        const pub = findPublication(bucket.id, "main", shell.deps.db);
        let notice: SafeHtml = html``;
        let body: SafeHtml;
        if (!pub) body = html`<p>This bucket has no published site yet, so there is nothing to count.</p>`;
        else {
          try {
            const a = publicationAnalytics(shell.deps, s.actor, pub.id, { range: q.from || q.to ? undefined : q.range, from: q.from, to: q.to });
            uplotCss ??= await Bun.file(siteAssets["dashboard/assets/uplot.min.css"]!).text();
            const off = !pub.trackingEnabled || !pub.analyticsEnabled;
            if (off) notice = alertBox("Analytics are turned off for this site: nothing new is counted. Figures recorded before stay.", "ok");
            // Pier's own embedded stylesheet, inserted as it is: inside <style> a browser decodes no
            // character references, so escaping it (`>` as `&#62;`) broke its rules.
            body = html`${rangeForm(bucket.id, q, a.time_zone)}<style>${new SafeHtml(uplotCss)}</style>${figures(a)}`;
          } catch (e) {
            if (!(e instanceof ApiError) || e.code !== "VALIDATION_FAILED") throw e;
            notice = alertBox(e.message);
            body = rangeForm(bucket.id, q, getAccount(shell.deps, pub.accountId).timeZone);
          }
        }
        return shell.render(s, {
          title: `${bucket.title}: analytics`,
          template: "dashboard/analytics.html",
          current: BUCKETS_PATH,
          scripts: ["uplot.min.js", "analytics.js"],
          vars: { title: bucket.title, tabs: shell.bucketTabs(bucket.id, "analytics"), notice, body },
        });
      }),
      { detail: { hide: true } },
    ) as unknown as Elysia,
};
