// Server-rendered pages of the OAuth flows: device approval, consent, connections. Plain HTML
// forms (CSRF token in a hidden field), no scripts, so they work in any browser.
import type { Scope } from "../../core/context";
import type { ConnectionView } from "./connections";
import { scopeMeaning } from "./scopes";

export const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const css = `*{box-sizing:border-box}body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1d2433;background:#f5f6f8}
header{display:flex;justify-content:space-between;align-items:center;padding:.8rem 1.2rem;background:#1d2433;color:#fff}
header .brand{font-weight:700;letter-spacing:.02em}.connection-id{font-size:.9rem}.connection-id strong{font:600 1.1rem ui-monospace,monospace;margin-left:.4rem;background:#fff;color:#1d2433;padding:.1rem .5rem;border-radius:4px}
main{max-width:34rem;margin:2.5rem auto;background:#fff;border-radius:10px;padding:1.8rem;box-shadow:0 1px 3px #0002}
h1{font-size:1.35rem;margin-top:0}.muted{color:#5b6475;font-size:.92rem}.error{background:#fdecec;color:#8a1f1f;padding:.7rem .9rem;border-radius:6px}
.actions{display:flex;gap:.8rem;margin-top:1.4rem}button{font:inherit;padding:.6rem 1.1rem;border-radius:6px;border:1px solid #1d2433;background:#fff;cursor:pointer}
button.primary{background:#1f6feb;border-color:#1f6feb;color:#fff;font-weight:600}input[type=text]{font:1.2rem ui-monospace,monospace;padding:.5rem;width:12rem;text-transform:uppercase}
table{width:100%;border-collapse:collapse;font-size:.92rem}td,th{padding:.45rem .4rem;border-bottom:1px solid #e3e6ea;text-align:left}`;

export function layout(title: string, body: string, connectionId?: string, wide = false): string {
  const badge = connectionId ? `<div class="connection-id" id="connection-id">Connection ID<strong>${esc(connectionId)}</strong></div>` : "";
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · Pier</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><style>${css}</style></head>
<body><header><span class="brand">Pier</span>${badge}</header><main${wide ? ' style="max-width:60rem"' : ""}>${body}</main></body></html>`;
}

const hidden = (fields: Record<string, string | undefined>) =>
  Object.entries(fields).filter(([, v]) => v !== undefined).map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v!)}">`).join("");

export function deviceEntryPage(csrf: string, error?: string): string {
  return layout("Connect a device", `<h1>Connect a device</h1>
${error ? `<p class="error">${esc(error)}</p>` : ""}
<p>Open the link your terminal printed, or enter the Connection ID it shows.</p>
<form method="post" action="/oauth/device">${hidden({ csrf, action: "lookup" })}
<p><input type="text" name="user_code" autocomplete="off" spellcheck="false" placeholder="ABCD-EFGH" maxlength="12" required></p>
<div class="actions"><button class="primary" type="submit">Continue</button></div></form>`);
}

export function deviceConfirmPage(opts: { csrf: string; userCode: string; clientName: string; permission: Scope; email: string }): string {
  return layout("Confirm connection", `<h1>Connect ${esc(opts.clientName)} to Pier?</h1>
<p>Check that the <strong>Connection ID</strong> at the top right matches the one in your terminal. If it does not, select Deny.</p>
<p>Signed in as <strong>${esc(opts.email)}</strong>. The connection may ${esc(scopeMeaning[opts.permission])} (<code>${opts.permission}</code>) and receives a durable API key. You can revoke it at any time under <a href="/oauth/connections">Connections</a>.</p>
<form method="post" action="/oauth/device">${hidden({ csrf: opts.csrf, user_code: opts.userCode })}
<div class="actions"><button class="primary" type="submit" name="action" value="approve">Confirm Connection</button>
<button type="submit" name="action" value="deny">Deny</button></div></form>`, opts.userCode);
}

export function messagePage(title: string, message: string, connectionId?: string): string {
  return layout(title, `<h1>${esc(title)}</h1><p>${esc(message)}</p>`, connectionId);
}

export function consentPage(opts: { csrf: string; clientName: string; redirectHost: string; permission: Scope; email: string; params: Record<string, string | undefined> }): string {
  return layout("Authorize application", `<h1>Allow ${esc(opts.clientName)} to use your Pier account?</h1>
<p>Signed in as <strong>${esc(opts.email)}</strong>. ${esc(opts.clientName)} may ${esc(scopeMeaning[opts.permission])} (<code>${opts.permission}</code>) through the hosted MCP server and the API.</p>
<p class="muted">After you decide, you will be sent back to <strong>${esc(opts.redirectHost)}</strong>. You can revoke the connection at any time under <a href="/oauth/connections">Connections</a>.</p>
<form method="post" action="/oauth/authorize">${hidden({ ...opts.params, csrf: opts.csrf })}
<div class="actions"><button class="primary" type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></div></form>`);
}

export function connectionsPage(csrf: string, list: ConnectionView[], notice?: string): string {
  const rows = list.map((c) => `<tr><td>${esc(c.client_name)}<div class="muted">${esc(c.flow === "device_code" ? "device login" : "MCP / app")}</div></td>
<td><code>${esc(c.permission_scope)}</code></td><td>${esc(c.created_at.slice(0, 16).replace("T", " "))}</td><td>${esc(c.last_used_at?.slice(0, 16).replace("T", " ") ?? "never")}</td>
<td><form method="post" action="/oauth/connections/${esc(c.id)}/revoke">${hidden({ csrf })}<button type="submit">Revoke</button></form></td></tr>`).join("\n");
  return layout("Agent connections", `<h1>Agent connections</h1>${notice ? `<p class="muted">${esc(notice)}</p>` : ""}
${list.length ? `<table><thead><tr><th>Client</th><th>Scope</th><th>Created (UTC)</th><th>Last used (UTC)</th><th></th></tr></thead><tbody>${rows}</tbody></table>` : "<p>No agent is connected.</p>"}`, undefined, true);
}
