// The bucket's Files tab (/dashboard/buckets/<id>/files?prefix=<folder>/): the folder's
// sub-folders and files, a page at a time (cursor paging through listFolder, which reads about
// one page of rows however large the bucket), with breadcrumbs, and the upload area (script:
// drag and drop of files and folders through the API's signed direct-upload flow).
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { alertBox, html, shortTime } from "../../../http/pages/layout";
import { getBucket, presentBucket } from "../../buckets";
import { listFolder, type FolderEntry } from "../../files";
import type { DashboardPage } from "../page";
import type { Session, Shell } from "../shell";
import { BUCKETS_PATH } from "./buckets-home";
import { crumbStyle, filesUrl, fileUrl, folderTrail, humanSize } from "./files-common";

export const FOLDER_PAGE = 100;

const DONE: Record<string, string> = {
  deleted: "File deleted. It stays in the bucket's history (Versions) and can be restored from there.",
  moved: "File moved to another bucket.",
};

function entryRows(bucketId: string, entries: FolderEntry[]) {
  // Folders first, then files, within the page (a page covers a range of names in path order).
  const folders = entries.filter((e) => e.kind === "folder");
  const fileEntries = entries.filter((e) => e.kind === "file");
  return html`${folders.map(
    (e) => html`<tr><td class="wrap"><a href="${filesUrl(bucketId, e.path)}">${e.name}/</a></td><td class="small muted">folder</td><td></td><td></td></tr>`,
  )}${fileEntries.map((e) => {
    const f = e.file;
    const lock = f.lock ? html` <span class="badge" title="${f.lock.message}">locked</span>` : "";
    return html`<tr><td class="wrap"><a href="${fileUrl(bucketId, f.id)}">${e.name}</a>${lock}</td><td class="small wrap">${f.content_type}</td><td class="small">${humanSize(f.byte_size)}</td><td class="small">${shortTime(f.updated_at)}</td></tr>`;
  })}`;
}

async function filesView(shell: Shell, s: Session, id: string, query: Record<string, string | undefined>) {
  const bucket = getBucket(shell.deps, s.actor, id);
  const p = presentBucket(shell.deps, bucket);
  let folder: ReturnType<typeof listFolder>;
  let notice = alertBox(DONE[query.done ?? ""], "ok");
  try {
    folder = listFolder(shell.deps, s.actor, bucket.id, { prefix: query.prefix, after: query.after, limit: FOLDER_PAGE });
  } catch (e) {
    // A hand-edited or stale folder/cursor in the URL: say so and show the root.
    if (!(e instanceof ApiError) || (e.code !== "INVALID_PATH" && e.code !== "VALIDATION_FAILED")) throw e;
    notice = alertBox(`That folder address is not valid (${e.message}). Showing all files.`);
    folder = listFolder(shell.deps, s.actor, bucket.id, { limit: FOLDER_PAGE });
  }
  const { prefix, entries, pagination } = folder;
  const table = entries.length
    ? html`<table><caption class="skip">Contents of ${prefix || "the bucket"}</caption><thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col">Changed</th></tr></thead><tbody>${entryRows(bucket.id, entries)}</tbody></table>`
    : html`<p class="muted">${prefix ? "No files in this folder (it may have been emptied meanwhile)." : "No files yet."}</p>`;
  const first = query.after ? html`<a href="${filesUrl(bucket.id, prefix)}">← First page</a>` : html`<span></span>`;
  const next = pagination.next_cursor ? html`<a href="${filesUrl(bucket.id, prefix, { after: pagination.next_cursor })}" rel="next">Next page →</a>` : html``;
  return shell.render(s, {
    title: `Files · ${bucket.title}`,
    template: "dashboard/files.html",
    current: BUCKETS_PATH,
    scripts: ["hashes.js", "upload.js"],
    vars: {
      notice,
      tabs: shell.bucketTabs(bucket.id, "files"),
      crumbStyle,
      trail: folderTrail(bucket.id, prefix),
      id: bucket.id,
      title: bucket.title,
      prefix,
      archived: p.archived,
      table,
      pager: entries.length ? html`<div class="pager">${first}${next}</div>` : html``,
      folderUrl: filesUrl(bucket.id, prefix),
    },
  });
}

export const filesPage: DashboardPage = {
  bucketTab: { label: "Files", path: "files" },
  routes: (app, shell) =>
    app.get(
      `${BUCKETS_PATH}/:id/files`,
      shell.view((s, { params, query }) => filesView(shell, s, params.id!, query)),
      { detail: { hide: true } },
    ) as unknown as Elysia,
};
