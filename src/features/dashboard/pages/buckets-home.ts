// The buckets home (/dashboard/buckets): the account's buckets, newest first, searchable by
// title, live or archived, paged; and "create a blank bucket".
import type { Elysia } from "elysia";
import type { ApiError } from "../../../core/errors";
import { alertBox, html, shortTime, type SafeHtml } from "../../../http/pages/layout";
import { BucketInput, createBucket, listBucketPage, presentBucket, type BucketRow } from "../../buckets";
import { checkForm, fieldError, invalidAttrs } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";

export const BUCKETS_PATH = "/dashboard/buckets";
const PAGE_SIZE = 25;

/** Outcome notices after a redirect: fixed texts chosen by a code, never text from the URL. */
const DONE: Record<string, string> = {
  deleted: "The bucket was deleted.",
  "delete-started": "The bucket is being deleted in the background; it disappears from this list when it is done.",
};

function bucketRows(shell: Shell, rows: BucketRow[]): SafeHtml {
  return html`${rows.map((b) => {
    const p = presentBucket(shell.deps, b);
    const state = p.published
      ? html`<span class="badge">published</span>${p.public_url ? html`<br><a href="${p.public_url}" class="small wrap">${p.public_url}</a>` : ""}`
      : html`<span class="small muted">not published</span>`;
    return html`<tr><td><a href="${BUCKETS_PATH}/${b.id}"><strong class="wrap">${b.title}</strong></a><br><code class="small">${b.id}</code>${b.archivedAt ? html` <span class="badge">archived</span>` : ""}</td>
<td>${state}</td><td class="small">${shortTime(b.updatedAt)}</td></tr>`;
  })}`;
}

function pageLink(q: string, archived: boolean, offset: number): string {
  const u = new URLSearchParams();
  if (q) u.set("q", q);
  if (archived) u.set("archived", "1");
  if (offset) u.set("offset", String(offset));
  const s = u.toString();
  return s ? `${BUCKETS_PATH}?${s}` : BUCKETS_PATH;
}

async function home(shell: Shell, s: Session, query: Record<string, string | undefined>, refused?: { error: ApiError; title: string }) {
  const q = (query.q ?? "").trim().slice(0, 200);
  const archived = query.archived === "1";
  const offset = Math.max(0, Number.parseInt(query.offset ?? "0", 10) || 0);
  const { buckets, pagination } = listBucketPage(shell.deps, s.actor, { archived, limit: PAGE_SIZE, offset, titleContains: q || undefined });
  const prev = offset > 0 ? html`<a href="${pageLink(q, archived, Math.max(0, offset - PAGE_SIZE))}">← Newer</a>` : html`<span></span>`;
  const next = pagination.next_offset !== null ? html`<a href="${pageLink(q, archived, pagination.next_offset)}">Older →</a>` : html``;
  const notice =
    refused && !(refused.error.details as { field?: string } | undefined)?.field ? alertBox(refused.error.message) : alertBox(DONE[query.done ?? ""], "ok");
  return shell.render(s, {
    title: "Buckets",
    template: "dashboard/buckets.html",
    current: BUCKETS_PATH,
    error: refused?.error,
    vars: {
      notice,
      q,
      archived,
      live: !archived,
      total: pagination.total_count,
      rows: bucketRows(shell, buckets),
      empty: buckets.length === 0,
      pager: html`${prev}${next}`,
      newTitle: refused?.title ?? "",
      titleError: fieldError(refused?.error, "title", "title-error"),
      titleInvalid: invalidAttrs(refused?.error, "title", "title-error"),
    },
  });
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
          (s, { body }) => {
            const input = checkForm<{ title: string }>(
              BucketInput,
              { title: formField(body, "title").trim() },
              { title: "Give the bucket a title (1 to 200 characters)." },
            );
            const bucket = createBucket(shell.deps, s.actor, input);
            return `${BUCKETS_PATH}/${bucket.id}?done=created`;
          },
          (s, error, { body }) => home(shell, s, {}, { error, title: formField(body, "title") }),
        ),
        { detail: { hide: true } },
      ) as unknown as Elysia,
};
