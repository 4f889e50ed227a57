// A bucket's page (/dashboard/buckets/<id>, the API's dashboard_url): facts, the files list
// (filtered by path, paged), the inbound address (on/off), archive/unarchive, and delete with
// the confirmation phrase. Each form calls the same bucket service the REST routes call.
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { alertBox, html, shortTime, type SafeHtml } from "../../../http/pages/layout";
import { archiveBucket, deleteBucket, getBucket, presentBucket, unarchiveBucket, updateBucket } from "../../buckets";
import { listFiles } from "../../files";
import { fieldError, invalidAttrs } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { BUCKETS_PATH } from "./buckets-home";

const FILES_PAGE = 50;

const DONE: Record<string, string> = {
  created: "Bucket created.",
  archived: "Bucket archived: it is read-only until you unarchive it.",
  "already-archived": "This bucket was already archived.",
  unarchived: "Bucket unarchived.",
  "already-unarchived": "This bucket was not archived.",
  "inbound-on": "The receiving address is on.",
  "inbound-off": "The receiving address is off: mail to it is refused.",
  "delete-started": "Deleting in the background: this page follows it until the bucket is gone.",
};

const bucketUrl = (id: string, query = "") => `${BUCKETS_PATH}/${encodeURIComponent(id)}${query}`;

function filesSection(shell: Shell, s: Session, bucketId: string, query: Record<string, string | undefined>): SafeHtml {
  const path = (query.path ?? "").slice(0, 1000);
  const offset = Math.max(0, Number.parseInt(query.offset ?? "0", 10) || 0);
  const { files, pagination } = listFiles(shell.deps, s.actor, bucketId, { limit: FILES_PAGE, offset, q: path || undefined });
  const link = (o: number) => bucketUrl(bucketId, `?${new URLSearchParams({ ...(path ? { path } : {}), ...(o ? { offset: String(o) } : {}) })}#files`);
  const rows = files.map((f) => {
    const slash = f.path.lastIndexOf("/");
    const folder = slash > 0 ? f.path.slice(0, slash + 1) : "";
    // The folder part filters the list to that folder (a path filter, matched anywhere in the path).
    const folderLink = folder ? html`<a href="${bucketUrl(bucketId, `?${new URLSearchParams({ path: folder })}#files`)}" class="muted">${folder}</a>` : html``;
    return html`<tr><td class="wrap">${folderLink}${f.path.slice(slash + 1)}</td><td class="small">${f.content_type}</td><td class="small">${f.byte_size.toLocaleString("en")} B</td><td class="small">${shortTime(f.updated_at)}</td></tr>`;
  });
  const prev = offset > 0 ? html`<a href="${link(Math.max(0, offset - FILES_PAGE))}">← Previous</a>` : html`<span></span>`;
  const next = pagination.next_offset !== null ? html`<a href="${link(pagination.next_offset)}">Next →</a>` : html``;
  const table = files.length
    ? html`<table><caption class="skip">Files</caption><thead><tr><th scope="col">Path</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col">Changed</th></tr></thead><tbody>${rows}</tbody></table>
<div class="pager small"><span class="muted">${pagination.total_count.toLocaleString("en")} file(s)${path ? html` matching <code>${path}</code>` : ""}</span></div><div class="pager">${prev}${next}</div>`
    : html`<p class="muted">${path ? "No file path contains that text." : "No files yet."}</p>`;
  return html`<form method="get" action="${bucketUrl(bucketId)}" class="toolbar" role="search"><div><label for="path">Filter by path</label><input id="path" name="path" type="text" value="${path}" placeholder="e.g. docs/ or .html"></div><button type="submit" class="secondary">Filter</button></form>${table}`;
}

interface Refusal {
  error: ApiError;
  confirmation?: string;
}

async function bucketView(shell: Shell, s: Session, id: string, query: Record<string, string | undefined>, refused?: Refusal) {
  const bucket = getBucket(shell.deps, s.actor, id);
  const p = presentBucket(shell.deps, bucket);
  const fieldRefusal = (refused?.error.details as { field?: string } | undefined)?.field;
  const notice = refused && !fieldRefusal ? alertBox(refused.error.message) : alertBox(DONE[query.done ?? ""], "ok");
  const deleting = "lock" in p && p.lock?.kind === "bucket_delete" ? p.lock : null;
  return shell.render(s, {
    title: bucket.title,
    template: "dashboard/bucket.html",
    current: BUCKETS_PATH,
    error: refused?.error,
    scripts: deleting ? ["progress.js"] : [],
    vars: {
      notice,
      tabs: shell.bucketTabs(bucket.id, ""),
      id: bucket.id,
      title: bucket.title,
      description: bucket.description,
      archived: p.archived,
      archivedAt: shortTime(bucket.archivedAt),
      created: shortTime(bucket.createdAt),
      updated: shortTime(bucket.updatedAt),
      published: p.published,
      publicUrl: p.public_url ?? "",
      unpublishFirst: p.publication_lifecycle_active,
      deleting: !!deleting,
      deletedItems: deleting?.deleted_items ?? 0,
      totalItems: deleting?.total_items ?? 0,
      inboundOn: p.inbound_email.enabled,
      address: p.inbound_email.address ?? "",
      inboundReady: p.inbound_email.ready,
      blockedReason: p.inbound_email.blocked_reason ?? "",
      received: p.inbound_email.received_count,
      canArchive: p.archive.allowed,
      canUnarchive: p.unarchive.allowed,
      canDelete: p.delete.allowed,
      phrase: p.delete.confirmation,
      typedConfirmation: refused?.confirmation ?? "",
      confirmationError: fieldError(refused?.error, "confirmation", "confirmation-error"),
      confirmationInvalid: invalidAttrs(refused?.error, "confirmation", "confirmation-error"),
      files: filesSection(shell, s, bucket.id, query),
    },
  });
}

/**
 * A refused form on a bucket page: when the bucket is gone (deleted meanwhile, or never
 * visible to this account) the page says so; otherwise the bucket page again with the error.
 */
function refusedOnBucket(shell: Shell, s: Session, id: string, refusal: Refusal) {
  if (refusal.error.code === "BUCKET_NOT_FOUND" || refusal.error.code === "FORBIDDEN")
    return shell.notFound(s, refusal.error.code === "BUCKET_NOT_FOUND" ? refusal.error : undefined);
  try {
    return bucketView(shell, s, id, {}, refusal);
  } catch (e) {
    if (e instanceof ApiError && e.code === "BUCKET_NOT_FOUND") return shell.notFound(s, e);
    throw e;
  }
}

export const bucketPage: DashboardPage = {
  bucketTab: { label: "Overview", path: "" },
  routes: (app, shell) => {
    const post = (suffix: string, run: (s: Session, id: string, body: unknown) => string) =>
      app.post(
        `${BUCKETS_PATH}/:id/${suffix}`,
        shell.action(
          (s, { params, body }) => run(s, params.id!, body),
          (s, error, { params, body }) => refusedOnBucket(shell, s, params.id!, { error, confirmation: formField(body, "confirmation") }),
        ),
        { detail: { hide: true } },
      );
    post("inbound", (s, id, body) => {
      const enabled = formField(body, "enabled") === "on";
      updateBucket(shell.deps, s.actor, id, { inbound_email: { enabled } });
      return bucketUrl(id, `?done=inbound-${enabled ? "on" : "off"}#inbound`);
    });
    post("archive", (s, id) => bucketUrl(id, `?done=${archiveBucket(shell.deps, s.actor, id).changed ? "archived" : "already-archived"}`));
    post("unarchive", (s, id) => bucketUrl(id, `?done=${unarchiveBucket(shell.deps, s.actor, id).changed ? "unarchived" : "already-unarchived"}`));
    post("delete", (s, id, body) => {
      try {
        const outcome = deleteBucket(shell.deps, s.actor, id, { confirmation: formField(body, "confirmation").trim() });
        // A background delete stays on the bucket's page, which shows its progress until it is gone.
        return outcome.kind === "deleted" ? `${BUCKETS_PATH}?done=deleted` : bucketUrl(id, "?done=delete-started");
      } catch (e) {
        // The service's message points API users at GET /buckets/:id; a person needs the field.
        if (e instanceof ApiError && e.code === "CONFIRMATION_MISMATCH")
          throw new ApiError("CONFIRMATION_MISMATCH", "Type the phrase exactly as shown to delete this bucket.", { field: "confirmation" });
        throw e;
      }
    });
    return app.get(
      `${BUCKETS_PATH}/:id`,
      shell.view((s, { params, query }) => bucketView(shell, s, params.id!, query)),
      { detail: { hide: true } },
    ) as unknown as Elysia;
  },
};
