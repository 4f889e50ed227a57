// The analytics renderer shared by a bucket's Analytics tab and the account-wide Analytics page
// (/dashboard/analytics): the range forms, the totals against the previous period, the chart
// with its table, the top lists, and with `sites` the per-site table and the 404 paths naming
// their site. It only lays out an analytics result (publicationAnalytics or accountAnalytics,
// the REST routes' services); it computes no figure of its own.
import { html, SafeHtml } from "../../../http/pages/layout";
import { accountAnalytics, RANGES } from "../../analytics";
import { siteAssets } from "../../../sites-assets.gen";
import { BUCKETS_PATH } from "./buckets-home";

export type Analytics = ReturnType<typeof accountAnalytics>;
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

/** The Range and custom-dates forms, both sending GET to `action`. */
export function rangeForm(action: string, q: Record<string, string | undefined>, zone: string, keep: Record<string, string> = {}): SafeHtml {
  const current = q.from || q.to ? "" : (q.range ?? "7d");
  // What the page shows besides the window (the bucket's preview) stays when the window changes.
  const kept = html`${Object.entries(keep).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}`;
  const options = RANGES.map(
    (r) => html`<option value="${r}"${current === r ? html` selected` : html``}>${r === "24h" ? "Last 24 hours" : `Last ${r.slice(0, -1)} days`}</option>`,
  );
  return html`<form method="get" action="${action}" class="toolbar" aria-label="Time window">
${kept}<div><label for="range">Range</label><select id="range" name="range">${options}</select></div><button type="submit" class="secondary">Show</button></form>
<form method="get" action="${action}" class="toolbar" aria-label="Custom window">${kept}
<div><label for="from">From (${zone})</label><input id="from" name="from" type="date" value="${q.from ?? ""}" required></div>
<div><label for="to">To (${zone})</label><input id="to" name="to" type="date" value="${q.to ?? ""}" required></div><button type="submit" class="secondary">Show dates</button></form>`;
}

/** The query a service takes from the page's: dates win over a range, as on the REST routes. */
export const windowQuery = (q: Record<string, string | undefined>) => ({ range: q.from || q.to ? undefined : q.range, from: q.from, to: q.to });

/**
 * Pier's own embedded uPlot stylesheet, inserted as it is: inside <style> a browser decodes no
 * character references, so escaping it (`>` as `&#62;`) broke its rules.
 */
export async function chartStyle(): Promise<SafeHtml> {
  uplotCss ??= await Bun.file(siteAssets["dashboard/assets/uplot.min.css"]!).text();
  return html`<style>${new SafeHtml(uplotCss)}</style>`;
}

function list(title: string, rows: { label: string; hits: number }[]): SafeHtml {
  return rows.length
    ? html`<div class="scroll"><table><caption>${title}</caption><thead><tr><th scope="col">${title}</th><th scope="col">Hits</th></tr></thead><tbody>${rows.map((r) => html`<tr><td class="wrap">${r.label}</td><td>${num(r.hits)}</td></tr>`)}</tbody></table></div>`
    : html`<p class="muted small">${title}: none in this window.</p>`;
}

/** The same window on a site's Analytics tab, so a row's link keeps the range or dates shown. */
function tabLink(bucketId: string, q: Record<string, string | undefined>, preview = false): string {
  const params = new URLSearchParams(Object.entries(windowQuery(q)).filter((e): e is [string, string] => !!e[1]));
  if (preview) params.set("site", "preview");
  const search = params.toString();
  return `${BUCKETS_PATH}/${bucketId}/analytics${search ? `?${search}` : ""}`;
}

type SiteEntry = Analytics["buckets"][number];
/**
 * A bucket's site and its preview share the bucket's title. The spec's `buckets[]` entry has no
 * kind; a preview is the one served at `preview-<slug>.` (a custom domain is never under it).
 */
const isPreview = (b: SiteEntry) => new URL(b.url).hostname.startsWith(`preview-${b.public_slug}.`);
const siteName = (b: SiteEntry) => (isPreview(b) ? `${b.bucket_title} (preview)` : b.bucket_title);

function sitesTable(a: Analytics, q: Record<string, string | undefined>): SafeHtml {
  if (!a.buckets.length) return html`<p class="muted">No published sites yet, so there is nothing to count.</p>`;
  return html`<div class="scroll"><table><caption>Hits per site</caption><thead><tr><th scope="col">Site</th><th scope="col">Address</th><th scope="col">Hits</th></tr></thead>
<tbody>${a.buckets.map((b) => html`<tr><th scope="row" class="wrap"><a href="${tabLink(b.bucket_id, q, isPreview(b))}">${siteName(b)}</a></th><td class="wrap">${b.url}</td><td>${num(b.hits)}</td></tr>`)}</tbody></table></div>`;
}

function notFoundBySite(a: Analytics): SafeHtml {
  if (!a.paths_not_found.length) return html`<p class="muted small">Not found paths: none in this window.</p>`;
  const titles = new Map(a.buckets.map((b) => [b.publication_id, siteName(b)]));
  return html`<div class="scroll"><table><caption>Not found paths</caption><thead><tr><th scope="col">Site</th><th scope="col">Not found path</th><th scope="col">Hits</th></tr></thead>
<tbody>${a.paths_not_found.map((r) => html`<tr><td class="wrap">${titles.get(r.publication_id) ?? r.public_slug}</td><td class="wrap">${r.path}</td><td>${num(r.hits)}</td></tr>`)}</tbody></table></div>`;
}

/**
 * The figures of one result. `sites` (the account page) adds the per-site table, each row
 * linking to that bucket's tab for the same window, and names the site of each 404 path.
 */
export function figures(a: Analytics, sites?: { q: Record<string, string | undefined> }): SafeHtml {
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
  const perSite = sites ? html`<h2>Sites</h2>${sitesTable(a, sites.q)}` : html``;
  return html`${totals}<h2>Over time</h2>${series}${perSite}<h2>Top lists</h2>
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
${
  sites
    ? notFoundBySite(a)
    : list(
        "Not found paths",
        a.paths_not_found.map((r) => ({ label: r.path, hits: r.hits })),
      )
}`;
}
