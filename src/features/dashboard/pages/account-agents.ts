// Agents (/dashboard/account/agents): the agent connections (OAuth clients approved on this
// account, with their last activity; revoke) and the agent activity log, paged. The same
// services as GET/DELETE /api/v1/oauth/connections and GET /api/v1/agent_auth/activity; a
// revoke needs sudo mode, as over REST. (/oauth/connections is the older page of the same list.)
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { html, shortTime, type SafeHtml } from "../../../http/pages/layout";
import { requireSudo } from "../../accounts";
import { listActivity } from "../../agent-auth";
import { listConnections, revokeConnection } from "../../oauth";
import type { DashboardPage } from "../page";
import type { Session, Shell } from "../shell";
import { ACCOUNT_PATH, accountTabs, noticeOf, offsetOf, sudoOr } from "./account-common";

export const AGENTS_PATH = `${ACCOUNT_PATH}/agents`;
const ACTIVITY_PAGE = 25;
const DONE: Record<string, string> = { revoked: "The connection was revoked: its tokens and its API key stopped working." };

function connectionsTable(shell: Shell, s: Session): SafeHtml {
  const list = listConnections(shell.deps, s.actor);
  if (!list.length) return html`<p class="muted">No agent connections yet. They appear here when you approve <code>pier login</code> or an MCP client.</p>`;
  const rows = list.map(
    (
      c,
    ) => html`<tr><td><strong class="wrap">${c.client_name}</strong>${c.api_key_prefix ? html`<br><code class="small">${c.api_key_prefix}…</code>` : ""}</td><td>${c.permission_scope}</td>
<td class="small">${shortTime(c.created_at)}</td><td class="small">${shortTime(c.last_used_at)}</td>
<td><form method="post" action="${AGENTS_PATH}/${c.id}/revoke" class="inline"><input type="hidden" name="csrf" value="${shell.formToken(s)}"><button type="submit" class="danger" aria-label="Revoke ${c.client_name}">Revoke</button></form></td></tr>`,
  );
  return html`<table><caption class="skip">Agent connections</caption><thead><tr><th scope="col">Client</th><th scope="col">Permission</th><th scope="col">Approved</th><th scope="col">Last activity</th><th scope="col"><span class="skip">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>`;
}

function activitySection(shell: Shell, s: Session, offset: number): SafeHtml {
  let rows;
  try {
    // One more than a page tells whether there is a next page without counting the whole log.
    rows = listActivity(shell.deps, s.actor, ACTIVITY_PAGE + 1, offset);
  } catch (e) {
    if (e instanceof ApiError && e.code === "FORBIDDEN") return html`<p class="muted">${e.message}</p>`;
    throw e;
  }
  if (!rows.length) return html`<p class="muted">${offset ? "No more activity." : "No agent has used this account yet."}</p>`;
  const shown = rows.slice(0, ACTIVITY_PAGE);
  const who = (r: (typeof rows)[number]) => [r.agent, r.agent_client, r.agent_version].filter(Boolean).join(" ") || r.user_agent || "unnamed client";
  const body = shown.map(
    (
      r,
    ) => html`<tr><td><span class="wrap">${who(r)}</span>${r.project || r.task ? html`<br><span class="small muted wrap">${[r.project, r.task].filter(Boolean).join(" · ")}</span>` : ""}</td>
<td class="small">${r.credential_kind === "oauth" ? "connection" : "API key"}</td><td class="small">${r.request_count.toLocaleString("en")}</td><td class="small wrap"><code>${r.last_request}</code></td><td class="small">${shortTime(r.last_seen_at)}</td></tr>`,
  );
  const link = (o: number) => `${AGENTS_PATH}${o ? `?offset=${o}` : ""}#activity`;
  const prev = offset > 0 ? html`<a href="${link(Math.max(0, offset - ACTIVITY_PAGE))}">← Newer</a>` : html`<span></span>`;
  const next = rows.length > ACTIVITY_PAGE ? html`<a href="${link(offset + ACTIVITY_PAGE)}">Older →</a>` : html``;
  return html`<table><caption class="skip">Agent activity</caption><thead><tr><th scope="col">Agent</th><th scope="col">Credential</th><th scope="col">Requests</th><th scope="col">Last request</th><th scope="col">Last seen</th></tr></thead><tbody>${body}</tbody></table><div class="pager">${prev}${next}</div>`;
}

function agentsView(shell: Shell, s: Session, query: Record<string, string | undefined>, error?: ApiError) {
  return shell.render(s, {
    title: "Agents",
    template: "dashboard/account-agents.html",
    current: ACCOUNT_PATH,
    error,
    vars: {
      tabs: accountTabs(AGENTS_PATH),
      notice: noticeOf(error, DONE, query.done),
      connections: connectionsTable(shell, s),
      activity: activitySection(shell, s, offsetOf(query)),
    },
  });
}

export const accountAgentsPage: DashboardPage = {
  routes: (app, shell) =>
    app
      .get(
        AGENTS_PATH,
        shell.view((s, { query }) => agentsView(shell, s, query)),
        { detail: { hide: true } },
      )
      .post(
        `${AGENTS_PATH}/:id/revoke`,
        shell.action(
          (s, { request, params }) => {
            requireSudo(shell.deps, request, s.actor);
            revokeConnection(shell.deps, s.actor, params.id!);
            return `${AGENTS_PATH}?done=revoked`;
          },
          (s, error) => sudoOr(s, error, AGENTS_PATH, () => agentsView(shell, s, {}, error)),
        ),
        { detail: { hide: true } },
      ) as unknown as Elysia,
};
