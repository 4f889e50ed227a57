// Notifications (/dashboard/account/notifications): what Pier told the account (background
// bucket deletes, failed builds, lapsing sites), newest first, from the same service as
// GET /api/v1/notifications. The API has no read state yet, so neither has this page.
import type { Elysia } from "elysia";
import { html, type SafeHtml, shortTime } from "../../../http/pages/layout";
import { listNotifications, NOTIFICATIONS_PAGE_MAX } from "../../notifications";
import type { DashboardPage } from "../page";
import { ACCOUNT_PATH, accountTabs, offsetOf, pager } from "./account-common";
import { BUCKETS_PATH } from "./buckets-home";

export const NOTIFICATIONS_PATH = `${ACCOUNT_PATH}/notifications`;

// A failed build's stored text ends with the REST call that retries it (markFailed in
// src/features/publish/build.ts), which GET /api/v1/notifications serves as is to scripts.
const RETRY_LINE = /\nFix the files and retry: POST \/api\/v1\/buckets\/[^/\s]+\/publication\/retry(\?kind=preview)?$/;

/** A person gets the bucket's Site tab, whose Retry button makes that call, instead of the call. */
function bodyOf(n: { kind: string; body: string; data: Record<string, unknown> }): SafeHtml {
  const bucketId = n.data.bucket_id;
  const retry = RETRY_LINE.exec(n.body);
  if (n.kind !== "publish_failed" || typeof bucketId !== "string" || !retry) return html`<p class="wrap mono">${n.body}</p>`;
  const site = `${BUCKETS_PATH}/${encodeURIComponent(bucketId)}/site${retry[1] ? "#preview" : ""}`;
  return html`<p class="wrap mono">${n.body.slice(0, retry.index)}</p><p>Fix the files, then retry on <a href="${site}">the bucket's Site tab</a>.</p>`;
}

export const accountNotificationsPage: DashboardPage = {
  routes: (app, shell) =>
    app.get(
      NOTIFICATIONS_PATH,
      shell.view((s, { query }) => {
        const offset = offsetOf(query);
        const { notifications, pagination } = listNotifications(shell.deps, s.actor, { limit: NOTIFICATIONS_PAGE_MAX, offset });
        const items = notifications.map(
          (n) =>
            html`<li class="card-item"><h2 class="h3 wrap">${n.subject}</h2><p class="small muted">${shortTime(n.created_at)} · <code>${n.kind}</code></p>${bodyOf(n)}</li>`,
        );
        return shell.render(s, {
          title: "Notifications",
          template: "dashboard/account-notifications.html",
          current: ACCOUNT_PATH,
          vars: {
            tabs: accountTabs(NOTIFICATIONS_PATH),
            empty: pagination.total_count === 0,
            items: html`${items}`,
            total: pagination.total_count,
            pager: pager(offset, NOTIFICATIONS_PAGE_MAX, pagination.total_count, (o) => `${NOTIFICATIONS_PATH}${o ? `?offset=${o}` : ""}`),
          },
        });
      }),
      { detail: { hide: true } },
    ) as unknown as Elysia,
};
