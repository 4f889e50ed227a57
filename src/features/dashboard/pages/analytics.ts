// A bucket's site analytics (/dashboard/buckets/<id>/analytics): the same figures as
// GET /api/v1/publications/:id/analytics, a range or a custom window, totals against the
// previous period, a chart (uPlot; the table below it is the fallback without script) and the
// top lists. Read-only: the switches are publication settings (PATCH /api/v1/publications/:id).
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
        const pub = findPublication(bucket.id, "main", shell.deps.db);
        let notice: SafeHtml = html``;
        let body: SafeHtml;
        if (!pub) body = html`<p>This bucket has no published site yet, so there is nothing to count.</p>`;
        else {
          try {
            const a = publicationAnalytics(shell.deps, s.actor, pub.id, windowQuery(q));
            const off = !pub.trackingEnabled || !pub.analyticsEnabled;
            if (off) notice = alertBox("Analytics are turned off for this site: nothing new is counted. Figures recorded before stay.", "ok");
            body = html`${rangeForm(`${BUCKETS_PATH}/${bucket.id}/analytics`, q, a.time_zone)}${await chartStyle()}${figures(a)}`;
          } catch (e) {
            if (!(e instanceof ApiError) || e.code !== "VALIDATION_FAILED") throw e;
            notice = alertBox(e.message);
            body = rangeForm(`${BUCKETS_PATH}/${bucket.id}/analytics`, q, getAccount(shell.deps, pub.accountId).timeZone);
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
