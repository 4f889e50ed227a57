// The OAuth flows' browser pages (device approval, consent, connections), rendered from
// sites/oauth/*.html inside Pier's shared layout (sites/auth/layout.html). The device pages put
// the Connection ID at the top right of the header, where `pier login` tells people to look.
import type { Scope } from "../../core/context";
import { html, loadTemplate, renderTemplate, SafeHtml, shortTime, type TemplateVars } from "../../http/pages/layout";
import { displayClientName } from "./clients";
import type { ConnectionView } from "./connections";
import { scopeMeaning } from "./scopes";

export interface Viewer {
  email: string;
  accountName: string;
  csrf: string;
}

/** The header's right side: the Connection ID badge (device pages) and the account menu. */
function header(viewer: Viewer | null, connectionId?: string): SafeHtml {
  const badge = connectionId ? html`<span id="connection-id" class="connection-id">Connection ID <strong>${connectionId}</strong></span>` : html``;
  const menu = viewer
    ? html`<a href="/dashboard">Dashboard</a><a href="/account/access">Access</a><a href="/oauth/connections">Connections</a>
<form method="post" action="/signout" class="inline"><input type="hidden" name="csrf" value="${viewer.csrf}"><button type="submit" class="link" title="Signed in as ${viewer.email}">Sign out</button></form>`
    : html``;
  return html`<nav aria-label="Account">${menu}${badge}</nav>`;
}

// The badge must be unmistakable: monospace, boxed, last in the header (top right).
const badgeStyle = html`<style>.connection-id{color:var(--muted);font-size:.9rem}.connection-id strong{font:600 1.15rem ui-monospace,SFMono-Regular,Menlo,monospace;color:var(--fg);border:2px solid var(--accent);border-radius:6px;padding:.1rem .5rem;margin-left:.4rem;letter-spacing:.06em}</style>`;

async function page(
  title: string,
  template: string,
  vars: TemplateVars,
  viewer: Viewer | null,
  opts: { connectionId?: string; wide?: boolean } = {},
): Promise<string> {
  const body = new SafeHtml(badgeStyle.value + renderTemplate(await loadTemplate(template), vars));
  return renderTemplate(await loadTemplate("auth/layout.html"), { title, body, nav: header(viewer, opts.connectionId), width: opts.wide ? "wide" : "narrow" });
}

const notice = (message?: string, kind: "error" | "ok" = "error") =>
  !message
    ? html``
    : kind === "error"
      ? html`<div class="alert error" role="alert">${message}</div>`
      : html`<div class="alert ok" role="status">${message}</div>`;

export const deviceEntryPage = (viewer: Viewer, error?: string) =>
  page("Connect a device", "oauth/device-entry.html", { csrf: viewer.csrf, notice: notice(error) }, viewer);

export const deviceConfirmPage = (viewer: Viewer, opts: { userCode: string; clientName: string; permission: Scope }) =>
  page(
    "Confirm connection",
    "oauth/device-confirm.html",
    {
      csrf: viewer.csrf,
      email: viewer.email,
      accountName: viewer.accountName,
      userCode: opts.userCode,
      clientName: displayClientName(opts.clientName),
      permission: opts.permission,
      permissionMeaning: scopeMeaning[opts.permission],
    },
    viewer,
    { connectionId: opts.userCode },
  );

export const messagePage = (viewer: Viewer | null, heading: string, message: string, connectionId?: string) =>
  page(heading, "oauth/message.html", { heading, message }, viewer, { connectionId });

export function consentPage(viewer: Viewer, opts: { clientName: string; redirectHost: string; permission: Scope; params: Record<string, string | undefined> }) {
  const fields = Object.entries({ ...opts.params, csrf: viewer.csrf }).filter(([, v]) => v !== undefined);
  const hidden = html`${fields.map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}`;
  return page(
    "Authorize application",
    "oauth/consent.html",
    {
      clientName: displayClientName(opts.clientName),
      email: viewer.email,
      accountName: viewer.accountName,
      permission: opts.permission,
      permissionMeaning: scopeMeaning[opts.permission],
      redirectHost: opts.redirectHost,
      hidden,
    },
    viewer,
  );
}

/** The connections with their revoke buttons on /oauth/connections (the dashboard's Agents page lists them too). */

export function connectionsTable(list: ConnectionView[], csrf: string): SafeHtml {
  return list.length
    ? html`<table><caption class="skip">Agent connections</caption><thead><tr><th>Client</th><th>Permission</th><th>Created</th><th>Last used</th><th></th></tr></thead><tbody>${list.map(
        (c) => html`<tr>
<td>${displayClientName(c.client_name)}<br><span class="badge">${c.flow === "device_code" ? "device login" : "MCP / app"}</span></td>
<td><code>${c.permission_scope}</code></td><td class="small">${shortTime(c.created_at)}</td><td class="small">${shortTime(c.last_used_at)}</td>
<td><form method="post" action="/oauth/connections/${c.id}/revoke" class="inline"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" class="danger" aria-label="Revoke ${displayClientName(c.client_name)}">Revoke</button></form></td></tr>`,
      )}</tbody></table>`
    : html`<p class="muted">No agent is connected.</p>`;
}

export function connectionsPage(viewer: Viewer, list: ConnectionView[], done?: string) {
  const rows = connectionsTable(list, viewer.csrf);
  return page("Agent connections", "oauth/connections.html", { accountName: viewer.accountName, notice: notice(done, "ok"), rows }, viewer, { wide: true });
}
