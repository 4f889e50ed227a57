// The bucket's Files tab (/dashboard/buckets/<id>/files?prefix=<folder>/): the folder's
// sub-folders and files, a page at a time (cursor paging through listFolder, which reads about
// one page of rows however large the bucket), with breadcrumbs; ticked files and folders moved,
// copied or deleted together (changeEntries: one reorganize, all or nothing) or locked; a new text file
// typed in the folder (writeTextFile, never over an existing file); and the upload area (script:
// drag and drop of files and folders through the API's signed direct-upload flow).
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { alertBox, html, shortTime } from "../../../http/pages/layout";
import { getBucket, presentBucket } from "../../buckets";
import { changeEntries, FILE_LOCK_DEFAULT_S, folderPrefix, listFolder, TEXT_WRITE_MAX_CHARS, writeTextFile, type FolderEntry } from "../../files";
import { fieldError, formList, invalidAttrs } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { BUCKETS_PATH } from "./buckets-home";
import { crumbStyle, existsRefusal, filesUrl, fileUrl, folderTrail, humanSize, lockDurationOptions } from "./files-common";

export const FOLDER_PAGE = 100;

const DONE: Record<string, string> = {
  deleted: "File deleted. It stays in the bucket's history (Versions) and can be restored from there.",
  moved: "File moved to another bucket.",
  "entries-moved": "Moved here, as one change in the bucket's history (Versions).",
  "entries-copied": "Copied here, as one change in the bucket's history (Versions).",
  "entries-deleted": "Deleted, as one change in the bucket's history (Versions), where they can be restored.",
  "entries-locked": "Locked: other writers are refused these files until the lock ends (each file's page removes it).",
};

/** What a refused form had typed and ticked, shown again with the refusal. */
type Refusal =
  | { form: "entries"; error: ApiError; entries: string[]; to: string; overwrite: boolean; message: string; duration: number }
  | { form: "new"; error: ApiError; name: string; content: string };

/** A refused new file's error, placed next to the field it is about: its name, or what was typed. */
function placeNewFileRefusal(e: ApiError): ApiError {
  const given = (e.details as { field?: string } | undefined)?.field;
  if (given && given !== "path") return e;
  const field =
    e.code === "FILE_TOO_LARGE"
      ? "content"
      : ["INVALID_PATH", "FILE_EXISTS", "FORBIDDEN_FILE_TYPE", "NOT_TEXT_FILE", "PATH_CONFLICT"].includes(e.code)
        ? "name"
        : null;
  return field ? new ApiError(e.code, e.message, { ...e.details, field }, e.retryAfter) : e;
}

function entryRows(bucketId: string, entries: FolderEntry[], ticked: Set<string>, selectable: boolean) {
  const box = (path: string, name: string) =>
    selectable
      ? html`<td><input type="checkbox" name="entry" value="${path}" aria-label="Select ${name}"${ticked.has(path) ? html` checked` : ""}></td>`
      : html``;
  // Folders first, then files, within the page (a page covers a range of names in path order).
  const folders = entries.filter((e) => e.kind === "folder");
  const fileEntries = entries.filter((e) => e.kind === "file");
  return html`${folders.map(
    (e) =>
      html`<tr>${box(e.path, `${e.name}/`)}<td class="wrap"><a href="${filesUrl(bucketId, e.path)}">${e.name}/</a></td><td class="small muted">folder</td><td></td><td></td></tr>`,
  )}${fileEntries.map((e) => {
    const f = e.file;
    const lock = f.lock ? html` <span class="badge" title="${f.lock.message}">locked</span>` : "";
    return html`<tr>${box(f.path, e.name)}<td class="wrap"><a href="${fileUrl(bucketId, f.id)}">${e.name}</a>${lock}</td><td class="small wrap">${f.content_type}</td><td class="small">${humanSize(f.byte_size)}</td><td class="small">${shortTime(f.updated_at)}</td></tr>`;
  })}`;
}

async function filesView(shell: Shell, s: Session, id: string, query: Record<string, string | undefined>, refused?: Refusal) {
  const bucket = getBucket(shell.deps, s.actor, id);
  const p = presentBucket(shell.deps, bucket);
  let folder: ReturnType<typeof listFolder>;
  const err = refused?.error;
  const entriesRefused = refused?.form === "entries" ? refused : undefined;
  const newRefused = refused?.form === "new" ? refused : undefined;
  const newField = newRefused ? ((err?.details as { field?: string } | undefined)?.field ?? "") : "";
  const entriesField = entriesRefused ? ((err?.details as { field?: string } | undefined)?.field ?? "") : "";
  const onField = ["to", "message"].includes(entriesField) || newField !== "";
  let notice = err && !onField ? alertBox(err.message) : alertBox(DONE[query.done ?? ""], "ok");
  try {
    folder = listFolder(shell.deps, s.actor, bucket.id, { prefix: query.prefix, after: query.after, limit: FOLDER_PAGE });
  } catch (e) {
    // A hand-edited or stale folder/cursor in the URL: say so and show the root.
    if (!(e instanceof ApiError) || (e.code !== "INVALID_PATH" && e.code !== "VALIDATION_FAILED")) throw e;
    notice = alertBox(`That folder address is not valid (${e.message}). Showing all files.`);
    folder = listFolder(shell.deps, s.actor, bucket.id, { limit: FOLDER_PAGE });
  }
  const { prefix, entries, pagination } = folder;
  const selectable = !p.archived && entries.length > 0;
  const ticked = new Set(entriesRefused?.entries ?? []);
  const table = entries.length
    ? html`<table><caption class="skip">Contents of ${prefix || "the bucket"}</caption><thead><tr>${selectable ? html`<th scope="col"><span class="skip">Select</span></th>` : ""}<th scope="col">Name</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col">Changed</th></tr></thead><tbody>${entryRows(bucket.id, entries, ticked, selectable)}</tbody></table>`
    : html`<p class="muted">${prefix ? "No files in this folder (it may have been emptied meanwhile)." : "No files yet."}</p>`;
  const first = query.after ? html`<a href="${filesUrl(bucket.id, prefix)}">← First page</a>` : html`<span></span>`;
  const next = pagination.next_cursor ? html`<a href="${filesUrl(bucket.id, prefix, { after: pagination.next_cursor })}" rel="next">Next page →</a>` : html``;
  return shell.render(s, {
    title: `Files · ${bucket.title}`,
    template: "dashboard/files.html",
    current: BUCKETS_PATH,
    error: err,
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
      selectable,
      // Where the browser comes back to after a refusal: this folder and page.
      after: query.after ?? "",
      destination: entriesRefused?.to ?? prefix,
      overwrite: entriesRefused?.overwrite ?? false,
      toError: entriesField === "to" ? fieldError(err, "to", "entries-to-error") : html``,
      toInvalid: entriesField === "to" ? invalidAttrs(err, "to", "entries-to-error") : html``,
      lockMessage: entriesRefused?.message ?? "",
      lockMessageError: entriesField === "message" ? fieldError(err, "message", "entries-message-error") : html``,
      lockMessageInvalid: entriesField === "message" ? invalidAttrs(err, "message", "entries-message-error") : html``,
      lockDurations: lockDurationOptions(entriesRefused?.duration ?? FILE_LOCK_DEFAULT_S),
      newName: newRefused?.name ?? "",
      newContent: newRefused?.content ?? "",
      newMaxChars: TEXT_WRITE_MAX_CHARS,
      newNameError: newField === "name" ? fieldError(err, "name", "new-name-error") : html``,
      newNameInvalid: newField === "name" ? invalidAttrs(err, "name", "new-name-error") : html``,
      newContentError: newField === "content" ? fieldError(err, "content", "new-content-error") : html``,
      newContentInvalid: newField === "content" ? invalidAttrs(err, "content", "new-content-error") : html``,
    },
  });
}

const DONE_OF = { move: "entries-moved", copy: "entries-copied", delete: "entries-deleted", lock: "entries-locked" } as const;

export const filesPage: DashboardPage = {
  bucketTab: { label: "Files", path: "files" },
  routes: (app, shell) =>
    app
      .post(
        `${BUCKETS_PATH}/:id/files/entries`,
        shell.action(
          (s, { params, body }) => {
            const op = formField(body, "op");
            if (op !== "move" && op !== "copy" && op !== "delete" && op !== "lock")
              throw new ApiError("VALIDATION_FAILED", "Choose Move, Copy, Delete or Lock.", { field: "op" });
            const folder = formField(body, "prefix");
            const to = formField(body, "to").trim();
            changeEntries(shell.deps, s.actor, params.id!, {
              op,
              folder,
              entries: formList(body, "entry"),
              to,
              overwrite: formField(body, "overwrite") === "on",
              message: formField(body, "message"),
              duration_seconds: Number(formField(body, "duration_seconds")) || undefined,
            });
            // A move or copy shows where the files went; a delete or lock, the folder they are in.
            return filesUrl(params.id!, op === "move" || op === "copy" ? folderPrefix(to) : folder, { done: DONE_OF[op] });
          },
          (s, error, { params, body }) =>
            filesView(
              shell,
              s,
              params.id!,
              { prefix: formField(body, "prefix"), after: formField(body, "after") || undefined },
              {
                form: "entries",
                error: existsRefusal(error, "Replace files already there"),
                entries: formList(body, "entry"),
                to: formField(body, "to"),
                overwrite: formField(body, "overwrite") === "on",
                message: formField(body, "message"),
                duration: Number(formField(body, "duration_seconds")) || FILE_LOCK_DEFAULT_S,
              },
            ),
        ),
        { detail: { hide: true } },
      )
      // A text file typed here, in the folder shown: created, never written over an existing file.
      .post(
        `${BUCKETS_PATH}/:id/files/new`,
        shell.action(
          async (s, { params, body }) => {
            const name = formField(body, "name").trim();
            if (!name) throw new ApiError("VALIDATION_FAILED", "Name the file, e.g. notes.md.", { field: "name" });
            const path = `${formField(body, "prefix")}${name}`;
            const r = await writeTextFile(shell.deps, s.actor, params.id!, {
              path,
              // Browsers send a textarea's line breaks as CRLF; the file gets the \n a person typed.
              content: formField(body, "content").replace(/\r\n/g, "\n"),
              comment: `create ${path} (dashboard)`,
              basedOn: null,
            });
            return fileUrl(params.id!, r.written[0]!.id, "?done=created");
          },
          (s, error, { params, body }) =>
            filesView(
              shell,
              s,
              params.id!,
              { prefix: formField(body, "prefix") },
              { form: "new", error: placeNewFileRefusal(error), name: formField(body, "name"), content: formField(body, "content") },
            ),
        ),
        { detail: { hide: true } },
      )
      .get(
        `${BUCKETS_PATH}/:id/files`,
        shell.view((s, { params, query }) => filesView(shell, s, params.id!, query)),
        { detail: { hide: true } },
      ) as unknown as Elysia,
};
