// A bucket's custom domains (/dashboard/buckets/<id>/domains): add or replace the hostname,
// the DNS records to create with whether each was found, the certificate state, refresh and
// remove. Each form calls the domains service the REST routes call.
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { alertBox, html, shortTime, type SafeHtml } from "../../../http/pages/layout";
import { UNLIMITED } from "../../accounts";
import { getBucket } from "../../buckets";
import { addDomain, listDomains, presentDomain, presentDomainPublication, refreshDomain, removeDomain } from "../../domains";
import { fieldError, invalidAttrs, requireConfirmed } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { BUCKETS_PATH } from "./buckets-home";

const DONE: Record<string, string> = {
  added: "Domain added: create the DNS records below, then check again.",
  kept: "This bucket already has that domain.",
  checked: "Records checked.",
  active: "The domain is active: the site is served on it.",
  removed: "Domain removed: it no longer serves the site.",
};

const domainsUrl = (id: string, query = "") => `${BUCKETS_PATH}/${encodeURIComponent(id)}/domains${query}`;

type Presented = ReturnType<typeof presentDomain>;

const STATUS_TEXT: Record<string, string> = { pending_validation: "waiting for DNS", active: "active", failed: "stopped checking" };
const SSL_TEXT: Record<string, string> = {
  pending_validation: "not yet (after DNS)",
  not_managed: "not managed by Pier (the operator's certificate or proxy)",
  active: "issued",
  failed: "failed",
};

function domainCard(bucketId: string, d: Presented, csrf: string, error?: ApiError): SafeHtml {
  const rows = d.required_dns_records.map((r) => {
    const extra =
      "supported_types" in r
        ? html`<br><span class="small muted">Apex name: use ${(r.supported_types as string[]).join(", ")}${(r as { address_values?: string[] }).address_values?.length ? html` (A/AAAA: ${(r as { address_values: string[] }).address_values.join(", ")})` : ""}.</span>`
        : html``;
    const seen = r.seen.length ? html`<br><span class="small muted">Seen: ${r.seen.join(", ")}</span>` : html``;
    const lookup = "lookup_error" in r ? html`<br><span class="small muted">${(r as { lookup_error: string }).lookup_error}</span>` : html``;
    return html`<tr><td>${r.type}</td><td class="wrap"><code>${r.name}</code></td><td class="wrap"><code>${r.value}</code>${extra}</td><td>${r.purpose}</td><td>${r.found ? "found" : html`<strong>missing</strong>`}${seen}${lookup}</td></tr>`;
  });
  const url = d.public_url ? html` at <a href="${d.public_url}">${d.public_url}</a>` : html``;
  return html`<section class="card" aria-labelledby="${d.id}-h" id="${d.id}">
<h2 id="${d.id}-h" class="wrap">${d.hostname_unicode}${d.hostname_unicode !== d.hostname ? html` <span class="small muted">(${d.hostname})</span>` : ""}</h2>
<dl class="facts"><dt>Status</dt><dd>${STATUS_TEXT[d.status] ?? d.status}${url}</dd>
<dt>Certificate</dt><dd>${SSL_TEXT[d.ssl_status] ?? d.ssl_status}${d.ssl_error ? html`: ${d.ssl_error}` : ""}</dd>
${d.failure_reason ? html`<dt>Why</dt><dd>${d.failure_reason}</dd>` : ""}
<dt>Last check</dt><dd>${d.last_checked_at ? shortTime(d.last_checked_at) : "not yet"}${d.next_check_at ? html` · next ${shortTime(d.next_check_at)}` : ""}</dd></dl>
<table><caption>DNS records to create</caption><thead><tr><th scope="col">Type</th><th scope="col">Name</th><th scope="col">Value</th><th scope="col">For</th><th scope="col">State</th></tr></thead><tbody>${rows}</tbody></table>
<div class="actions">
<form method="post" action="${domainsUrl(bucketId, `/${d.id}/refresh`)}"><input type="hidden" name="csrf" value="${csrf}"><button type="submit">Check now</button></form>
<form method="post" action="${domainsUrl(bucketId, `/${d.id}/delete`)}"><input type="hidden" name="csrf" value="${csrf}"><label class="check wrap"><input type="checkbox" name="confirm" required${invalidAttrs(error, "confirm", `${d.id}-confirm-error`)}> Remove ${d.hostname_unicode}: the site stops answering there, and adding it again starts over with a new ownership record</label>${fieldError(error, "confirm", `${d.id}-confirm-error`)}<button type="submit" class="danger">Remove</button></form>
</div></section>`;
}

/** The plans' "no limit" is a huge number: said in words, as the Account page does. */
function domainUsage(l: { active_count: number; max_custom_domains: number }): string {
  const used = l.active_count.toLocaleString("en");
  if (l.max_custom_domains >= UNLIMITED) return `${used} custom domain(s) in use (no limit on this account's plan).`;
  return `${used} of ${l.max_custom_domains.toLocaleString("en")} custom domain(s) on this account's plan in use.`;
}

async function domainsView(
  shell: Shell,
  s: Session,
  bucketId: string,
  query: Record<string, string | undefined>,
  refused?: { error: ApiError; hostname: string; domainId?: string },
) {
  const bucket = getBucket(shell.deps, s.actor, bucketId);
  const r = listDomains(shell.deps, s.actor, bucket.id);
  const pub = presentDomainPublication(shell.deps, r.publication);
  const fieldRefusal = (refused?.error.details as { field?: string } | undefined)?.field;
  const hasActive = r.domains.some((d) => d.status === "active");
  // A refusal about a field is shown next to it: the hostname's, or the box of a domain still listed.
  const atField = fieldRefusal === "hostname" || (fieldRefusal === "confirm" && r.domains.some((d) => d.id === refused?.domainId));
  return shell.render(s, {
    title: `Domains · ${bucket.title}`,
    template: "dashboard/domains.html",
    current: BUCKETS_PATH,
    error: refused?.error,
    vars: {
      notice: refused && !atField ? alertBox(refused.error.message) : alertBox(DONE[query.done ?? ""], "ok"),
      id: bucket.id,
      tabs: shell.bucketTabs(bucket.id, "domains"),
      title: bucket.title,
      published: pub !== null && (pub.status === "published" || pub.status === "publishing"),
      publicUrl: pub?.public_url ?? "",
      managedUrl: pub?.managed_url ?? "",
      usage: domainUsage(r.limits),
      replacing: hasActive,
      typedHostname: refused?.hostname ?? "",
      hostnameError: fieldError(refused?.error, "hostname", "hostname-error"),
      hostnameInvalid: invalidAttrs(refused?.error, "hostname", "hostname-error"),
      // A refused Remove shows its message next to that domain's box.
      domains: html`${r.domains.map((d) => domainCard(bucket.id, presentDomain(shell.deps, d), shell.formToken(s), refused?.domainId === d.id ? refused.error : undefined))}`,
    },
  });
}

/** Hostname refusals belong next to the field; the rest (limits, publish first) at the top. */
function asFieldError(e: unknown): never {
  if (e instanceof ApiError && ["CUSTOM_DOMAIN_INVALID", "CUSTOM_DOMAIN_RESERVED"].includes(e.code))
    throw new ApiError(e.code, e.message, { ...e.details, field: "hostname" });
  throw e;
}

export const domainsPage: DashboardPage = {
  bucketTab: { label: "Domains", path: "domains" },
  routes: (app, shell) => {
    const refusedHere = (s: Session, id: string, error: ApiError, hostname = "", domainId?: string) => {
      if (error.code === "BUCKET_NOT_FOUND" || error.code === "FORBIDDEN") return shell.notFound(s, error.code === "BUCKET_NOT_FOUND" ? error : undefined);
      return domainsView(shell, s, id, {}, { error, hostname, domainId });
    };
    const opts = { detail: { hide: true } };
    app.post(
      `${BUCKETS_PATH}/:id/domains`,
      shell.action(
        (s, { params, body }) => {
          try {
            const r = addDomain(shell.deps, s.actor, params.id!, formField(body, "hostname"));
            return domainsUrl(params.id!, `?done=${r.created ? "added" : "kept"}#${r.domain.id}`);
          } catch (e) {
            return asFieldError(e);
          }
        },
        (s, error, { params, body }) => refusedHere(s, params.id!, error, formField(body, "hostname")),
      ),
      opts,
    );
    app.post(
      `${BUCKETS_PATH}/:id/domains/:domain_id/refresh`,
      shell.action(
        async (s, { params }) => {
          const d = await refreshDomain(shell.deps, s.actor, params.id!, params.domain_id!);
          return domainsUrl(params.id!, `?done=${d.status === "active" ? "active" : "checked"}#${d.id}`);
        },
        (s, error, { params }) => refusedHere(s, params.id!, error),
      ),
      opts,
    );
    app.post(
      `${BUCKETS_PATH}/:id/domains/:domain_id/delete`,
      shell.action(
        (s, { params, body }) => {
          // The site leaves that address, and the name's ownership token and certificate go with
          // the row: only with the box ticked (D297).
          requireConfirmed(body, "the site stops answering on the domain, and adding it again starts over with a new ownership record.");
          removeDomain(shell.deps, s.actor, params.id!, params.domain_id!);
          return domainsUrl(params.id!, "?done=removed");
        },
        (s, error, { params }) => refusedHere(s, params.id!, error, "", params.domain_id),
      ),
      opts,
    );
    return app.get(
      `${BUCKETS_PATH}/:id/domains`,
      shell.view((s, { params, query }) => domainsView(shell, s, params.id!, query)),
      opts,
    ) as unknown as Elysia;
  },
};
