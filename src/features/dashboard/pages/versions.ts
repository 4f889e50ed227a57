// The bucket's Versions tab (/dashboard/buckets/<id>/versions): the history as a timeline,
// newest first, 20 a page, each version with the paths it added, changed and removed (a few,
// then "and N more"); one version's page lists its changes and its files (paged) and restores
// it after a confirmation, through the same versions service as the REST API.
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { alertBox, html, shortTime } from "../../../http/pages/layout";
import { getBucket } from "../../buckets";
import { changesOfVersions, getVersion, listVersions, restoreVersion, versionFiles, type PathChange } from "../../files";
import { fieldError, invalidAttrs } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { BUCKETS_PATH } from "./buckets-home";
import { humanSize } from "./files-common";

const TIMELINE_PAGE = 20;
const CHANGES_SHOWN = 8;
const VERSION_FILES_PAGE = 100;
const VERSION_CHANGES_SHOWN = 200;

const versionsUrl = (id: string, query = "") => `${BUCKETS_PATH}/${encodeURIComponent(id)}/versions${query}`;
const versionUrl = (id: string, versionId: string, query = "") => `${versionsUrl(id)}/${encodeURIComponent(versionId)}${query}`;
const offsetOf = (raw: string | undefined) => Math.max(0, Number.parseInt(raw ?? "0", 10) || 0);

const CHANGE_LABEL: Record<PathChange["change"], string> = { added: "added", changed: "changed", removed: "removed" };

function changeList(changes: PathChange[], total: number) {
  const more = total - changes.length;
  return html`<ul class="changes">${changes.map((c) => html`<li><span class="badge change-${c.change}">${CHANGE_LABEL[c.change]}</span> <code class="wrap">${c.path}</code></li>`)}${
    more > 0 ? html`<li class="muted small">and ${more.toLocaleString("en")} more</li>` : ""
  }</ul>`;
}

const versionStyle = html`<style>
.timeline{list-style:none;padding:0;margin:0}.timeline>li{border-left:3px solid var(--line);padding:.25rem 0 1rem 1rem;margin-left:.25rem}
.timeline h3{margin:0 0 .25rem;font-size:1rem}.changes{list-style:none;padding:0;margin:.4rem 0 0}.changes li{margin:.15rem 0;overflow-wrap:anywhere}
.change-added{color:var(--ok)}.change-removed{color:var(--err)}
.check{display:flex;gap:.5rem;align-items:center;font-weight:400}.check input{width:auto;margin:0}
</style>`;

async function timelineView(shell: Shell, s: Session, id: string, query: Record<string, string | undefined>) {
  const bucket = getBucket(shell.deps, s.actor, id);
  const offset = offsetOf(query.offset);
  const { versions, pagination } = listVersions(shell.deps, s.actor, bucket.id, { limit: TIMELINE_PAGE, offset });
  const changes = changesOfVersions(
    shell.deps,
    s.actor,
    bucket.id,
    versions.map((v) => v.number),
    CHANGES_SHOWN,
  );
  const items = versions.map(
    (v) => html`<li><h3><a href="${versionUrl(bucket.id, v.id)}">Version ${v.number}</a> <span class="badge">${v.kind}</span></h3>
<p class="small muted">${shortTime(v.created_at)}${v.author ? html` · ${v.author}` : ""} · ${v.file_count.toLocaleString("en")} file(s), ${humanSize(v.total_bytes)}</p>
${v.comment ? html`<p class="small wrap">${v.comment}</p>` : ""}${changeList(changes.get(v.number) ?? [], v.changed_paths_count)}</li>`,
  );
  const prev = offset > 0 ? html`<a href="${versionsUrl(bucket.id, `?offset=${Math.max(0, offset - TIMELINE_PAGE)}`)}">← Newer</a>` : html`<span></span>`;
  const next = pagination.next_offset !== null ? html`<a href="${versionsUrl(bucket.id, `?offset=${pagination.next_offset}`)}">Older →</a>` : html``;
  return shell.render(s, {
    title: `Versions · ${bucket.title}`,
    template: "dashboard/versions.html",
    current: BUCKETS_PATH,
    vars: {
      style: versionStyle,
      notice: alertBox(query.done === "restored" ? "Restored: the newest version now has that version's files." : undefined, "ok"),
      tabs: shell.bucketTabs(bucket.id, "versions"),
      title: bucket.title,
      timeline: versions.length
        ? html`<ol class="timeline">${items}</ol><div class="pager">${prev}${next}</div>`
        : html`<p class="muted">No versions yet: upload files to make the first.</p>`,
    },
  });
}

async function versionView(
  shell: Shell,
  s: Session,
  id: string,
  versionId: string,
  query: Record<string, string | undefined>,
  refused?: { error: ApiError; comment: string },
) {
  const bucket = getBucket(shell.deps, s.actor, id);
  const { version } = getVersion(shell.deps, s.actor, bucket.id, versionId);
  const offset = offsetOf(query.offset);
  const { files, pagination } = versionFiles(shell.deps, s.actor, bucket.id, versionId, { limit: VERSION_FILES_PAGE, offset });
  const marked = changesOfVersions(shell.deps, s.actor, bucket.id, [version.number], VERSION_CHANGES_SHOWN).get(version.number) ?? [];
  const err = refused?.error;
  const fieldRefusal = (err?.details as { field?: string } | undefined)?.field;
  const rows = files.map(
    (f) => html`<tr><td class="wrap">${f.path}</td><td class="small wrap">${f.content_type}</td><td class="small">${humanSize(f.byte_size)}</td></tr>`,
  );
  const prev =
    offset > 0
      ? html`<a href="${versionUrl(bucket.id, version.id, `?offset=${Math.max(0, offset - VERSION_FILES_PAGE)}#files`)}">← Previous</a>`
      : html`<span></span>`;
  const next =
    pagination.next_offset !== null ? html`<a href="${versionUrl(bucket.id, version.id, `?offset=${pagination.next_offset}#files`)}">Next →</a>` : html``;
  return shell.render(s, {
    title: `Version ${version.number} · ${bucket.title}`,
    template: "dashboard/version.html",
    current: BUCKETS_PATH,
    error: err,
    vars: {
      style: versionStyle,
      notice: err && !fieldRefusal ? alertBox(err.message) : html``,
      tabs: shell.bucketTabs(bucket.id, "versions"),
      id: bucket.id,
      title: bucket.title,
      versionId: version.id,
      number: version.number,
      kind: version.kind,
      created: shortTime(version.created_at),
      author: version.author ?? "",
      comment: version.comment ?? "",
      fileCount: version.file_count.toLocaleString("en"),
      totalSize: humanSize(version.total_bytes),
      backUrl: versionsUrl(bucket.id),
      changes: changeList(marked, version.changed_paths_count),
      files: files.length
        ? html`<table><caption class="skip">Files of version ${version.number}</caption><thead><tr><th scope="col">Path</th><th scope="col">Type</th><th scope="col">Size</th></tr></thead><tbody>${rows}</tbody></table><div class="pager">${prev}${next}</div>`
        : html`<p class="muted">This version has no files.</p>`,
      archived: !!bucket.archivedAt,
      typedComment: refused?.comment ?? "",
      confirmError: fieldError(err, "confirm", "confirm-error"),
      confirmInvalid: invalidAttrs(err, "confirm", "confirm-error"),
    },
  });
}

const notFoundVersion = (shell: Shell, s: Session, e: unknown) => {
  if (e instanceof ApiError && e.code === "VERSION_NOT_FOUND") return shell.notFound(s, e);
  throw e;
};

export const versionsPage: DashboardPage = {
  bucketTab: { label: "Versions", path: "versions" },
  routes: (app, shell) =>
    app
      .get(
        `${BUCKETS_PATH}/:id/versions`,
        shell.view((s, { params, query }) => timelineView(shell, s, params.id!, query)),
        { detail: { hide: true } },
      )
      .get(
        `${BUCKETS_PATH}/:id/versions/:versionId`,
        shell.view((s, { params, query }) => versionView(shell, s, params.id!, params.versionId!, query).catch((e) => notFoundVersion(shell, s, e))),
        { detail: { hide: true } },
      )
      .post(
        `${BUCKETS_PATH}/:id/versions/:versionId/restore`,
        shell.action(
          (s, { params, body }) => {
            if (formField(body, "confirm") !== "on") throw new ApiError("VALIDATION_FAILED", "Tick the box to confirm the restore.", { field: "confirm" });
            const comment = formField(body, "comment").trim();
            if (comment.length > 500) throw new ApiError("VALIDATION_FAILED", "The note is at most 500 characters.");
            restoreVersion(shell.deps, s.actor, params.id!, { version_id: params.versionId!, ...(comment ? { comment } : {}) });
            return versionsUrl(params.id!, "?done=restored");
          },
          (s, error, { params, body }) =>
            versionView(shell, s, params.id!, params.versionId!, {}, { error, comment: formField(body, "comment") }).catch((e) => {
              if (e instanceof ApiError && e.code === "BUCKET_NOT_FOUND") return shell.notFound(s, e);
              return notFoundVersion(shell, s, e);
            }),
        ),
        { detail: { hide: true } },
      ) as unknown as Elysia,
};
