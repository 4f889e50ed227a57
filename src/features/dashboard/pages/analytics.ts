// A bucket's site analytics (/dashboard/buckets/<id>/analytics): the same figures as
// GET /api/v1/publications/:id/analytics, a range or a custom window, totals against the
// previous period, a chart (uPlot; the table below it is the fallback without script) and the
// top lists; the site's or, with ?site=preview, its preview's (previews are counted too). Read-only:
// the switches are publication settings (PATCH /api/v1/publications/:id).
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { alertBox, html, type SafeHtml } from "../../../http/pages/layout";
import { publicationAnalytics } from "../../analytics";
import { getAccount } from "../../accounts";
import { getBucket } from "../../buckets";
import { findPublication } from "../../publish";
import type { DashboardPage } from "../page";
import { BUCKETS_PATH } from "./buckets-home";
import { chartStyle, figures, rangeForm, windowQuery } from "./analytics-view";

export const analyticsPage: DashboardPage = {
  bucketTab: { label: "Analytics", path: "analytics" },
  routes: (app, shell) =>
    app.get(
      `${BUCKETS_PATH}/:id/analytics`,
      shell.view(async (s, { params, query }) => {
        const q = query as Record<string, string | undefined>;
        const bucket = getBucket(shell.deps, s.actor, params.id!);
        const kind = q.site === "preview" ? "preview" : "main";
        const pub = findPublication(bucket.id, kind, shell.deps.db);
        const hasPreview = kind === "preview" || !!findPublication(bucket.id, "preview", shell.deps.db);
        const action = `${BUCKETS_PATH}/${bucket.id}/analytics`;
        const keep: Record<string, string> = kind === "preview" ? { site: "preview" } : {};
        // Which publication is shown, when the bucket has a preview to show too.
        const which = hasPreview
          ? html`<p class="small" id="analytics-which">Showing ${kind === "preview" ? html`<a href="${action}">the site</a> · <strong>its preview</strong>` : html`<strong>the site</strong> · <a href="${action}?site=preview">its preview</a>`}</p>`
          : html``;
        let notice: SafeHtml = html``;
        let body: SafeHtml;
        if (!pub)
          body = html`${which}<p>${kind === "preview" ? "This bucket has no preview." : "This bucket has no published site yet, so there is nothing to count."}</p>`;
        else {
          try {
            const a = publicationAnalytics(shell.deps, s.actor, pub.id, windowQuery(q));
            const off = !pub.trackingEnabled || !pub.analyticsEnabled;
            if (off) notice = alertBox("Analytics are turned off for this site: nothing new is counted. Figures recorded before stay.", "ok");
            body = html`${which}${rangeForm(action, q, a.time_zone, keep)}${await chartStyle()}${figures(a)}`;
          } catch (e) {
            if (!(e instanceof ApiError) || e.code !== "VALIDATION_FAILED") throw e;
            notice = alertBox(e.message);
            body = html`${which}${rangeForm(action, q, getAccount(shell.deps, pub.accountId).timeZone, keep)}`;
          }
        }
        return shell.render(s, {
          title: `${bucket.title}: analytics`,
          template: "dashboard/analytics.html",
          current: BUCKETS_PATH,
          scripts: ["uplot.min.js", "analytics.js"],
          vars: {
            back: html`<p class="small"><a href="${BUCKETS_PATH}">← Buckets</a></p>`,
            title: bucket.title,
            tabs: shell.bucketTabs(bucket.id, "analytics"),
            notice,
            body,
          },
        });
      }),
      { detail: { hide: true } },
    ) as unknown as Elysia,
};
