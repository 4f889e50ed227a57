// Instance admin: the outbox (/dashboard/admin/outbox). Mail Pier could not send because no SMTP
// relay is configured (agent login codes, site email codes, notices), newest first, and one
// message in full: what `pier admin mail outbox` prints. Non-admins get 404.
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { html, shortTime } from "../../../http/pages/layout";
import { getOutboxMessage, listOutbox } from "../../mail";
import type { DashboardPage } from "../page";
import { ADMIN_PATH, adminTabs, requireAdminSudo } from "./account-common";

export const OUTBOX_PATH = `${ADMIN_PATH}/outbox`;
const OUTBOX_SHOWN = 200;

export const adminOutboxPage: DashboardPage = {
  routes: (app, shell) =>
    app
      .get(
        OUTBOX_PATH,
        shell.view((s, { request }) => {
          requireAdminSudo(shell, request, s);
          const rows = listOutbox(shell.deps, OUTBOX_SHOWN);
          return shell.render(s, {
            title: "Outbox",
            template: "dashboard/admin-outbox.html",
            current: ADMIN_PATH,
            vars: {
              tabs: adminTabs(OUTBOX_PATH),
              relay: !!shell.deps.config.smtpRelayUrl,
              empty: rows.length === 0,
              max: OUTBOX_SHOWN,
              rows: html`${rows.map(
                (m) =>
                  html`<tr><td class="wrap"><a href="${OUTBOX_PATH}/${m.id}">${m.subject || "(no subject)"}</a></td><td class="wrap small">${m.to_address}</td><td class="small"><code>${m.kind}</code></td><td class="small">${shortTime(m.created_at)}</td></tr>`,
              )}`,
            },
          });
        }),
        { detail: { hide: true } },
      )
      .get(
        `${OUTBOX_PATH}/:id`,
        shell.view((s, { request, params }) => {
          requireAdminSudo(shell, request, s);
          const m = getOutboxMessage(shell.deps, params.id!);
          if (!m) throw new ApiError("NOT_FOUND", "No such message.");
          return shell.render(s, {
            title: m.subject || "Outbox message",
            template: "dashboard/admin-outbox-message.html",
            current: ADMIN_PATH,
            vars: {
              tabs: adminTabs(OUTBOX_PATH),
              subject: m.subject || "(no subject)",
              to: m.to_address,
              kind: m.kind,
              at: shortTime(m.created_at),
              text: m.text_body,
            },
          });
        }),
        { detail: { hide: true } },
      ) as unknown as Elysia,
};
