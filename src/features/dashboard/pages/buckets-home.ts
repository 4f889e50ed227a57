// The buckets home (/dashboard/buckets): the account's buckets, newest first, searchable by
// title, filtered by tag, live or archived, paged; bulk archive/unarchive of the checked rows;
// and "create a bucket", blank or from a starter template.
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { alertBox, html, shortTime, type SafeHtml } from "../../../http/pages/layout";
import { BucketInput, bulkBuckets, createBucket, listBucketPage, listTags, publicationSummaries, type BucketRow } from "../../buckets";
import { createFromTemplate, FromTemplateBody, listTemplates } from "../../files";
import { checkForm, fieldError, formList, invalidAttrs } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";

export const BUCKETS_PATH = "/dashboard/buckets";
const PAGE_SIZE = 25;

/** Outcome notices after a redirect: fixed texts chosen by a code, never text from the URL. */
const DONE: Record<string, string> = {
  deleted: "The bucket was deleted.",
};

interface Filters {
  q: string;
  tag: string;
  archived: boolean;
}

function homeLink(f: Filters, offset = 0): string {
  const u = new URLSearchParams();
  if (f.q) u.set("q", f.q);
  if (f.tag) u.set("tag", f.tag);
  if (f.archived) u.set("archived", "1");
  if (offset) u.set("offset", String(offset));
  const s = u.toString();
  return s ? `${BUCKETS_PATH}?${s}` : BUCKETS_PATH;
}

function bucketRows(shell: Shell, rows: BucketRow[], f: Filters): SafeHtml {
  // One query for the whole page's publications (presentBucket per row would query per row).
  const sites = publicationSummaries(
    shell.deps,
    rows.map((b) => b.id),
  );
  return html`${rows.map((b) => {
    const site = sites.get(b.id)!;
    const state = site.published
      ? html`<span class="badge">published</span>${site.publicUrl ? html`<br><a href="${site.publicUrl}" class="small wrap">${site.publicUrl}</a>` : ""}`
      : html`<span class="small muted">not published</span>`;
    const tags = b.tagPaths.map((t) => html` <a href="${homeLink({ ...f, tag: t })}" class="badge tag">${t}</a>`);
    const check = html`<input type="checkbox" name="ids" value="${b.id}" form="bulk" id="pick-${b.id}" aria-label="Select ${b.title}">`;
    return html`<tr><td>${check}</td><td><a href="${BUCKETS_PATH}/${b.id}"><strong class="wrap">${b.title}</strong></a><br><code class="small">${b.id}</code>${b.archivedAt ? html` <span class="badge">archived</span>` : ""}${tags.length ? html`<br><span class="small">${tags}</span>` : ""}</td>
<td>${state}</td><td class="small">${shortTime(b.updatedAt)}</td></tr>`;
  })}`;
}

interface BulkSummary {
  operation: "archive" | "unarchive";
  changed: number;
  unchanged: number;
  refused: { title: string; message: string }[];
}

function bulkNotice(summary: BulkSummary): SafeHtml {
  const verb = summary.operation === "archive" ? "archived" : "unarchived";
  const parts = [`${summary.changed} bucket(s) ${verb}`];
  if (summary.unchanged) parts.push(`${summary.unchanged} already ${summary.operation === "archive" ? "archived" : "live"}`);
  if (summary.refused.length) parts.push(`${summary.refused.length} refused`);
  const refused = summary.refused.map((r) => html`<li><strong>${r.title}</strong>: ${r.message}</li>`);
  return html`<div class="alert ${summary.refused.length ? "error" : "ok"}" role="status" id="bulk-summary"><p>${parts.join(", ")}.</p>${refused.length ? html`<ul>${refused}</ul>` : ""}</div>`;
}

interface Refusal {
  error: ApiError;
  title: string;
  template: string;
}

function templateOptions(chosen: string): SafeHtml {
  const opt = (value: string, label: string) =>
    value === chosen ? html`<option value="${value}" selected>${label}</option>` : html`<option value="${value}">${label}</option>`;
  return html`${opt("", "Blank bucket")}${listTemplates().map((t) => opt(t.name, `${t.title}: ${t.description}`))}`;
}

async function home(shell: Shell, s: Session, query: Record<string, string | undefined>, refused?: Refusal) {
  const f: Filters = {
    q: (query.q ?? "").trim().slice(0, 200),
    tag: (query.tag ?? "").trim().slice(0, 100),
    archived: query.archived === "1",
  };
  const offset = Math.max(0, Number.parseInt(query.offset ?? "0", 10) || 0);
  const { buckets, pagination } = listBucketPage(shell.deps, s.actor, {
    archived: f.archived,
    limit: PAGE_SIZE,
    offset,
    titleContains: f.q || undefined,
    tagPath: f.tag || undefined,
  });
  const prev = offset > 0 ? html`<a href="${homeLink(f, Math.max(0, offset - PAGE_SIZE))}">← Newer</a>` : html`<span></span>`;
  const next = pagination.next_offset !== null ? html`<a href="${homeLink(f, pagination.next_offset)}">Older →</a>` : html``;
  const summary = shell.takeFlash(s, query.flash) as BulkSummary | undefined;
  const bulkField = (refused?.error.details as { field?: string } | undefined)?.field === "ids";
  const notice =
    refused && !(refused.error.details as { field?: string } | undefined)?.field
      ? alertBox(refused.error.message)
      : summary
        ? bulkNotice(summary)
        : alertBox(DONE[query.done ?? ""], "ok");
  const tags = listTags(shell.deps, s.actor);
  const tagOption = (value: string, label: string) =>
    value === f.tag ? html`<option value="${value}" selected>${label}</option>` : html`<option value="${value}">${label}</option>`;
  return shell.render(s, {
    title: "Buckets",
    template: "dashboard/buckets.html",
    current: BUCKETS_PATH,
    error: refused?.error,
    vars: {
      notice,
      q: f.q,
      tag: f.tag,
      tagOptions: html`${tagOption("", "Any tag")}${tags.map((t) => tagOption(t.path, `${t.path} (${f.archived ? t.bucket_count - t.active_bucket_count : t.active_bucket_count})`))}${
        f.tag && !tags.some((t) => t.path === f.tag) ? tagOption(f.tag, f.tag) : ""
      }`,
      archived: f.archived,
      live: !f.archived,
      filtered: !!(f.q || f.tag),
      total: pagination.total_count,
      rows: bucketRows(shell, buckets, f),
      empty: buckets.length === 0,
      pager: html`${prev}${next}`,
      bulkOperation: f.archived ? "unarchive" : "archive",
      bulkLabel: f.archived ? "Unarchive selected" : "Archive selected",
      bulkBack: homeLink(f, offset),
      bulkError: bulkField ? html`<span class="field-error" id="bulk-error">${refused!.error.message}</span>` : html``,
      newTitle: refused?.title ?? "",
      titleError: fieldError(refused?.error, "title", "title-error"),
      titleInvalid: invalidAttrs(refused?.error, "title", "title-error"),
      templateOptions: templateOptions(refused?.template ?? ""),
      templateError: fieldError(refused?.error, "template", "template-error"),
    },
  });
}

/** The list the bulk form came from, rebuilt from its known filters only (never a URL as sent). */
function backFilters(back: string): { query: Record<string, string>; link: string } {
  const sent = new URL(back.startsWith(`${BUCKETS_PATH}?`) ? back : BUCKETS_PATH, "http://pier.invalid").searchParams;
  const f: Filters = { q: (sent.get("q") ?? "").slice(0, 200), tag: (sent.get("tag") ?? "").slice(0, 100), archived: sent.get("archived") === "1" };
  const offset = Math.max(0, Number.parseInt(sent.get("offset") ?? "0", 10) || 0);
  const link = homeLink(f, offset);
  return { query: Object.fromEntries(new URL(link, "http://pier.invalid").searchParams), link };
}

function refusalMessage(code: string, message: string): string {
  // The API's text names an endpoint; a person needs the step.
  if (code === "UNPUBLISH_FIRST") return "it has an active site: unpublish it first.";
  return message;
}

export const bucketsHome: DashboardPage = {
  nav: { label: "Buckets", href: BUCKETS_PATH },
  routes: (app, shell) =>
    app
      .get(
        BUCKETS_PATH,
        shell.view((s, { query }) => home(shell, s, query)),
        { detail: { hide: true } },
      )
      .post(
        BUCKETS_PATH,
        shell.action(
          async (s, { body }) => {
            const template = formField(body, "template");
            const title = formField(body, "title").trim();
            if (template) {
              // From a template the title may stay empty: the template's own title is used.
              const input = checkForm<{ template: string; title?: string }>(
                FromTemplateBody,
                { template, ...(title ? { title } : {}) },
                { title: "A title is at most 200 characters.", template: "Choose one of the templates." },
              );
              const bucket = await createFromTemplate(shell.deps, s.actor, input).catch((e) => {
                if (e instanceof ApiError && e.code === "TEMPLATE_NOT_FOUND") throw new ApiError(e.code, "Choose one of the templates.", { field: "template" });
                throw e;
              });
              return `${BUCKETS_PATH}/${bucket.id}?done=created`;
            }
            const input = checkForm<{ title: string }>(BucketInput, { title }, { title: "Give the bucket a title (1 to 200 characters)." });
            const bucket = createBucket(shell.deps, s.actor, input);
            return `${BUCKETS_PATH}/${bucket.id}?done=created`;
          },
          (s, error, { body }) => home(shell, s, {}, { error, title: formField(body, "title"), template: formField(body, "template") }),
        ),
        { detail: { hide: true } },
      )
      .post(
        `${BUCKETS_PATH}/bulk`,
        shell.action(
          (s, { body }) => {
            const operation = formField(body, "operation") === "unarchive" ? "unarchive" : "archive";
            const ids = formList(body, "ids");
            const back = backFilters(formField(body, "back")).link;
            if (ids.length === 0) throw new ApiError("VALIDATION_FAILED", "Select at least one bucket.", { field: "ids" });
            const result = bulkBuckets(shell.deps, s.actor, { operation, bucket_ids: ids.slice(0, 100) });
            // Titles for the refused rows, read once for the page (ids a person never saw stay ids).
            const titles = result.failed
              ? new Map(listBucketPage(shell.deps, s.actor, { archived: operation === "unarchive", limit: 1000 }).buckets.map((b) => [b.id, b.title]))
              : new Map<string, string>();
            const summary: BulkSummary = { operation, changed: 0, unchanged: 0, refused: [] };
            for (const r of result.results) {
              if (!r.ok) summary.refused.push({ title: titles.get(r.id) ?? r.id, message: refusalMessage(r.error.code, r.error.message) });
              else if (r.changed) summary.changed++;
              else summary.unchanged++;
            }
            const id = shell.flash(s, summary);
            return `${back}${back.includes("?") ? "&" : "?"}flash=${id}`;
          },
          (s, error, { body }) => home(shell, s, backFilters(formField(body, "back")).query, { error, title: "", template: "" }),
        ),
        { detail: { hide: true } },
      ) as unknown as Elysia,
};
