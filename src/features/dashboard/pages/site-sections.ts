// The pieces of a bucket's Site tab: the live build state, the plan's upgrade choices, the
// access settings (password, share text, recipient links, leads) and the paged manifest.
import type { ApiError } from "../../../core/errors";
import { html, shortTime, type SafeHtml } from "../../../http/pages/layout";
import { pager, rangeNote } from "./paging";
import type { presentPublication } from "../../publish";
import { fieldError, invalidAttrs } from "../forms";

export type Presented = ReturnType<typeof presentPublication>;
export const MANIFEST_PAGE = 50;

/** Which form a refusal came from, so its message is shown next to that form's field only. */
export interface SiteRefusal {
  error: ApiError;
  form: string;
  typed: Record<string, string>;
}

export const siteUrl = (id: string, rest = "") => `/dashboard/buckets/${encodeURIComponent(id)}/site${rest}`;

const fieldId = (form: string, field: string) => `${form}-${field}`;
/** The error span and aria attributes for `field` of `form` when the refusal is about it. */
export function fieldState(r: SiteRefusal | undefined, form: string, field: string): { error: SafeHtml; attrs: SafeHtml } {
  const mine = r?.form === form ? r.error : undefined;
  const id = `${fieldId(form, field)}-error`;
  return { error: fieldError(mine, field, id), attrs: invalidAttrs(mine, field, id) };
}

export function stateText(p: Presented): string {
  if (p.status === "unpublishing") return "Unpublishing…";
  if (p.publish_pending) return `Building (${p.publish_state})…`;
  if (p.publish_state === "failed")
    return `The last build failed: ${p.publish_error ?? "unknown error"}${p.status === "published" ? " The site still serves the build before it." : ""}`;
  if (p.status === "unpublished") return "Not published.";
  if (p.expired) return "Expired: the site no longer answers.";
  return "Published.";
}

/**
 * The build state as a live region: site.js polls the REST publication read while a build
 * runs and reloads the page once it settles; without script a Reload link does the same.
 */
export function statusRegion(p: Presented, apiCsrf: string, label: string): SafeHtml {
  const pending = p.publish_pending || p.status === "unpublishing";
  return html`<div class="alert ${p.publish_state === "failed" ? "error" : "ok"}" id="${label}-status" role="status" aria-live="polite" data-build-status data-publication="${p.id}" data-csrf="${apiCsrf}" data-pending="${pending ? "true" : "false"}">${stateText(p)}</div>${
    pending ? html`<noscript><p class="small">The state does not update by itself without script: <a href="">Reload</a> to see it.</p></noscript>` : ""
  }`;
}

interface Choice {
  action: string;
  description?: string;
  operator_hint?: string;
  body?: { access_mode?: string };
}

/**
 * The choices of a plan's refusal (PUBLICATION_UPGRADE_REQUIRED, live-site limits), as forms
 * that carry on with what the Publish form was given: the folder to serve, the address
 * (publishing), and the typed password (the preview; `typed.password_ref` names where the
 * server keeps it).
 */
export function upgradeChoices(error: ApiError, bucketId: string, csrf: string, siteMode: string, typed: Record<string, string> = {}): SafeHtml {
  const choices = ((error.details as { choices?: Choice[] } | undefined)?.choices ?? []).filter((c) => c && typeof c.action === "string");
  if (!choices.length) return html``;
  const carried = (names: string[]) => html`${names.filter((n) => typed[n]).map((n) => html`<input type="hidden" name="${n}" value="${typed[n]!}">`)}`;
  const items = choices.map((c) => {
    const mode = c.body?.access_mode ?? "public";
    const hidden = html`<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="access_mode" value="${mode}"><input type="hidden" name="site_mode" value="${siteMode}">`;
    if (c.action === "preview")
      return html`<li><p>${c.description ?? "Publish a temporary preview instead."}</p><form method="post" action="${siteUrl(bucketId, "/preview")}">${hidden}${carried(["publication_root_directory", "password_ref"])}<button type="submit" class="secondary">Publish a preview instead</button></form></li>`;
    if (c.action === "public")
      return html`<li><p>${c.description ?? "Publish publicly instead."}</p><form method="post" action="${siteUrl(bucketId, "/publish")}">${hidden}${carried(["publication_root_directory", "slug_suggestions"])}<button type="submit" class="secondary">Publish publicly instead</button></form></li>`;
    return html`<li><p>${c.description ?? "Ask the operator for a plan that allows it."}</p>${c.operator_hint ? html`<p class="small">The operator runs: <code class="wrap">${c.operator_hint}</code></p>` : ""}</li>`;
  });
  return html`<div class="card-inset" id="choices"><h3>What you can do instead</h3><ul class="choices">${items}</ul></div>`;
}

const accessLabel: Record<string, string> = {
  public: "Public: anyone with the link",
  password: "Password",
  require_email: "Visitors confirm their email address",
};

/** Who may open a live site or preview, and what its owner should know about that (its warnings). */
export function accessSummary(p: { access_mode: string; warnings: { message: string }[] }, id: string): SafeHtml {
  return html`<p class="small" id="${id}">Who may open it: ${accessLabel[p.access_mode] ?? p.access_mode}</p>${warningLines(p)}`;
}

/** A publication's warnings (such as codes waiting in the outbox), one line each. */
const warningLines = (p: { warnings: { message: string }[] }): SafeHtml => html`${p.warnings.map((w) => html`<p class="small muted">${w.message}</p>`)}`;

export function accessModeOptions(selected: string): SafeHtml {
  return html`${Object.entries(accessLabel).map(([v, l]) => (v === selected ? html`<option value="${v}" selected>${l}</option>` : html`<option value="${v}">${l}</option>`))}`;
}

export function siteModeOptions(selected: string): SafeHtml {
  const modes: [string, string][] = [
    ["static", "Static: each path is its own page"],
    ["spa", "Single-page app: unknown paths answer with index.html"],
  ];
  return html`${modes.map(([v, l]) => (v === selected ? html`<option value="${v}" selected>${l}</option>` : html`<option value="${v}">${l}</option>`))}`;
}

interface Lead {
  email: string;
  first_access_at: string;
  last_access_at: string;
  access_count: number;
}

/** The password (owner only, once ready), share text and require_email recipients of the main site. */
export function accessExtras(
  p: Presented,
  bucketId: string,
  csrf: string,
  leads: LeadsPageView,
  links: { email: string; url: string }[] | null,
  refused: SiteRefusal | undefined,
): SafeHtml {
  const password =
    p.access_mode === "password"
      ? p.access_password
        ? html`<h3>Password</h3><p><code class="secret" id="site-password">${p.access_password}</code></p>
<div class="actions"><button type="button" class="secondary" data-copy="site-password" hidden>Copy the password</button>
<form method="post" action="${siteUrl(bucketId, "/password")}"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" class="secondary">Generate a new password</button></form></div>
<p class="small muted">A new password signs current visitors out.</p>`
        : html`<h3>Password</h3><p class="small muted">The password is shown to the account owner once the site is published.</p>`
      : html``;
  const share = p.share_text
    ? html`<h3>Share</h3><pre class="wrap" id="share-text">${p.share_text}</pre><p><button type="button" class="secondary" data-copy="share-text" hidden>Copy the share text</button></p>`
    : html``;
  const warnings = warningLines(p);
  if (p.access_mode !== "require_email") return html`${password}${share}${warnings}`;
  const emails = fieldState(refused, "recipient-links", "emails");
  const days = fieldState(refused, "recipient-links", "expires_in_days");
  const typed = refused?.form === "recipient-links" ? refused.typed : {};
  const made = links?.length
    ? html`<div class="alert ok" role="status"><p>Send each person their own link (it lets only them in, without a code):</p><ul class="links">${links.map(
        (l, i) =>
          html`<li><strong class="wrap">${l.email}</strong><br><code class="wrap small" id="link-${i}">${l.url}</code> <button type="button" class="secondary" data-copy="link-${i}" hidden>Copy</button></li>`,
      )}</ul></div>`
    : html``;
  const { rows, total, offset } = leads;
  const leadsLink = (o: number) => siteUrl(bucketId, `?leads_offset=${o}#leads`);
  const leadRows = rows.length
    ? html`<table id="leads"><caption>Visitors who confirmed their address</caption><thead><tr><th scope="col">Email</th><th scope="col">First visit</th><th scope="col">Last visit</th><th scope="col">Visits</th></tr></thead><tbody>${rows.map(
        (l) =>
          html`<tr><td class="wrap">${l.email}</td><td class="small">${shortTime(l.first_access_at)}</td><td class="small">${shortTime(l.last_access_at)}</td><td>${l.access_count}</td></tr>`,
      )}</tbody></table>${rangeNote(offset, rows.length, total, "most recent first")}${pager(offset, LEADS_PAGE, total, leadsLink, "newest")}
<p class="small"><a id="leads-csv" href="${siteUrl(bucketId, "/leads.csv")}" download>Download all as CSV</a></p>`
    : total > 0
      ? html`<p class="small muted" id="leads">No visitors on this page. <a href="${leadsLink(0)}">The most recent</a></p>`
      : html`<p class="small muted">No visitor has confirmed an address yet.</p>`;
  return html`${password}${share}${warnings}<h3 id="recipients-h">Recipients</h3>${made}
<form method="post" action="${siteUrl(bucketId, "/recipient-links")}" id="recipient-links"><input type="hidden" name="csrf" value="${csrf}">
<label for="recipient-links-emails">Email addresses <span class="hint">One a line (up to 100): each gets a signed link that lets them in without a code.</span></label>
<textarea id="recipient-links-emails" name="emails" rows="3" required${emails.attrs}>${typed.emails ?? ""}</textarea>${emails.error}
<label for="recipient-links-expires_in_days">Links work for (days)</label>
<input id="recipient-links-expires_in_days" name="expires_in_days" type="text" inputmode="numeric" value="${typed.expires_in_days ?? "30"}"${days.attrs}>${days.error}
<p><button type="submit" class="secondary">Make recipient links</button></p></form>${leadRows}`;
}

/** Confirmed visitors shown per page of the Site tab (the API's default page). */
export const LEADS_PAGE = 100;
export interface LeadsPageView {
  rows: Lead[];
  total: number;
  offset: number;
}
export const leadsPageOf = (access: { leads: Lead[]; leads_pagination: { total_count: number; offset: number } }): LeadsPageView => ({
  rows: access.leads,
  total: access.leads_pagination.total_count,
  offset: access.leads_pagination.offset,
});

/** One page of the published files, sorted by path. */
export function manifestSection(bucketId: string, page: { path: string; size: number; content_type: string }[], total: number, offset: number): SafeHtml {
  if (!total) return html`<p class="muted">No published files.</p>`;
  const link = (o: number) => siteUrl(bucketId, `?offset=${o}#manifest`);
  return html`<table><caption class="skip">Published files</caption><thead><tr><th scope="col">Path</th><th scope="col">Type</th><th scope="col">Size</th></tr></thead><tbody>${page.map(
    (f) => html`<tr><td class="wrap">${f.path}</td><td class="small">${f.content_type}</td><td class="small">${f.size.toLocaleString("en")} B</td></tr>`,
  )}</tbody></table><div class="pager small"><span class="muted">${total.toLocaleString("en")} file(s)</span></div>${pager(offset, MANIFEST_PAGE, total, link)}`;
}

interface SiteRulesSummary {
  redirects: number;
  headers: number;
  warnings: { file: string; line: number; message: string }[];
  warnings_not_listed?: number;
}

/**
 * The live deploy's `_redirects`/`_headers` as the publication's `site_rules` gives them: the
 * counts, then each skipped line with its file and line number (docs/site-rules.md). Read-only:
 * the rules change by publishing the files again.
 */
export function siteRulesSection(rules: SiteRulesSummary | null): SafeHtml {
  if (!rules)
    return html`<p class="muted">The live deploy has no <code>_redirects</code> or <code>_headers</code> file. Put them at the published root and publish to add redirects, rewrites or response headers (see the <a href="/docs/guides/site-rules">site rules guide</a>).</p>`;
  const plural = (n: number, one: string) => `${n.toLocaleString("en")} ${one}${n === 1 ? "" : "s"}`;
  const counts = html`<dl class="facts" id="site-rules-counts"><dt>Redirect rules</dt><dd>${plural(rules.redirects, "rule")} from <code>_redirects</code></dd><dt>Header blocks</dt><dd>${plural(rules.headers, "block")} from <code>_headers</code></dd></dl>`;
  if (!rules.warnings.length) return html`${counts}<p class="small muted">No warnings: every line was used.</p>`;
  const rows = rules.warnings.map((w) => html`<tr><td><code>${w.file}</code></td><td>${w.line}</td><td class="wrap">${w.message}</td></tr>`);
  const more = rules.warnings_not_listed ? html`<p class="small muted">…and ${plural(rules.warnings_not_listed, "more warning")} not listed.</p>` : html``;
  return html`${counts}<p class="small">Lines skipped when the deploy was built (the site is served without them):</p><table id="site-rules-warnings"><caption class="skip">Site rule warnings</caption><thead><tr><th scope="col">File</th><th scope="col">Line</th><th scope="col">Warning</th></tr></thead><tbody>${rows}</tbody></table>${more}`;
}
