// The account's analytics (/dashboard/analytics, in the navigation): all its sites together, the
// same figures as GET /api/v1/analytics (accountAnalytics, the route's service), laid out by the
// Analytics tab's renderer plus a table of sites (each linking to its bucket's tab for the same
// window) and the 404 paths naming their site. Read-only, like the tab.
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { alertBox, html, type SafeHtml } from "../../../http/pages/layout";
import { accountAnalytics } from "../../analytics";
import { getAccount } from "../../accounts";
import type { DashboardPage } from "../page";
import { chartStyle, figures, rangeForm, windowQuery } from "./analytics-view";

export const ANALYTICS_PATH = "/dashboard/analytics";

export const accountAnalyticsPage: DashboardPage = {
  nav: { label: "Analytics", href: ANALYTICS_PATH },
  routes: (app, shell) =>
    app.get(
      ANALYTICS_PATH,
      shell.view(async (s, { query }) => {
        const q = query as Record<string, string | undefined>;
        let notice: SafeHtml = html``;
        let body: SafeHtml;
        try {
          const a = accountAnalytics(shell.deps, s.actor, windowQuery(q));
          body = html`${rangeForm(ANALYTICS_PATH, q, a.time_zone)}${await chartStyle()}${figures(a, { q })}`;
        } catch (e) {
          if (!(e instanceof ApiError) || e.code !== "VALIDATION_FAILED") throw e;
          notice = alertBox(e.message);
          body = rangeForm(ANALYTICS_PATH, q, getAccount(shell.deps, s.actor.accountId).timeZone);
        }
        return shell.render(s, {
          title: "Analytics",
          template: "dashboard/analytics.html",
          current: ANALYTICS_PATH,
          scripts: ["uplot.min.js", "analytics.js"],
          vars: { back: html``, title: "Analytics: all your sites", tabs: html``, notice, body },
        });
      }),
      { detail: { hide: true } },
    ) as unknown as Elysia,
};
