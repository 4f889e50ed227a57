// One file of a bucket (/dashboard/buckets/<id>/files/<file id>): facts, a preview (text,
// Markdown, images, audio/video; PDFs open in their own tab), download through the same signed
// URL as the API, rename/move, copy, delete, file locks, editing a text file (never over a change
// the page did not show) and appending to one. Every form calls the files service the REST
// routes or MCP tools call, with the REST schema checking the input first.
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { alertBox, html, SafeHtml, shortTime } from "../../../http/pages/layout";
import { offsetOf, pager } from "./paging";
import { renderReadme } from "../../../sites/markdown";
import { effectiveScope, getBucket } from "../../buckets";
import {
  appendText,
  AppendTextBody,
  copyOrMoveFile,
  CopyMoveBody,
  deleteFile,
  downloadUrl,
  FILE_LOCK_DEFAULT_S,
  fileHistory,
  getFile,
  isTextType,
  lockFiles,
  LockFilesBody,
  readFileBytes,
  renameFile,
  RenameBody,
  TEXT_WRITE_MAX_CHARS,
  unlockFile,
  writeTextFile,
} from "../../files";
import { checkForm, fieldError, invalidAttrs } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { BUCKETS_PATH } from "./buckets-home";
import { crumbStyle, existsRefusal, filesUrl, fileUrl, folderTrail, humanSize, lockDurationOptions } from "./files-common";

/** Text and Markdown previews read at most this much (a bigger file is offered as a download). */
export const PREVIEW_MAX_BYTES = 256 * 1024;

const DONE: Record<string, string> = {
  renamed: "File renamed.",
  copied: "This is the new copy.",
  moved: "File moved here.",
  locked: "File locked.",
  unlocked: "Lock removed.",
  broken: "Lock broken: the file can be changed again.",
  appended: "Text appended: this is the new version.",
  edited: "Saved: this is the new version.",
  unchanged: "Nothing to save: the text is the one stored.",
  created: "File created.",
};

type FormName = "rename" | "copy" | "lock" | "append" | "edit";

interface Refusal {
  error: ApiError;
  form?: FormName;
  values: Record<string, string>;
}

/**
 * A text file's content for the editor: a textual type up to the preview limit, valid UTF-8
 * (anything else would not survive a round trip through the form); null otherwise.
 */
async function editableText(shell: Shell, s: Session, bucketId: string, f: ReturnType<typeof getFile>): Promise<string | null> {
  if (!isTextType(f.content_type) || f.byte_size > PREVIEW_MAX_BYTES) return null;
  const { bytes } = await readFileBytes(shell.deps, s.actor, bucketId, f.path, PREVIEW_MAX_BYTES);
  try {
    // ignoreBOM: a byte-order mark stays in the text, so saving it back keeps it.
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    return text.includes("\u0000") ? null : text;
  } catch {
    return null;
  }
}

/** Every line break is CRLF (at least one): such a file keeps CRLF when edited. */
const allCrlf = (text: string) => text.includes("\r\n") && !/(^|[^\r])\n/.test(text);

async function preview(shell: Shell, s: Session, bucketId: string, f: ReturnType<typeof getFile>, url: string, read: string | null): Promise<SafeHtml> {
  const type = f.content_type.split(";")[0]!.trim().toLowerCase();
  if (type.startsWith("image/")) return html`<img src="${url}" alt="Preview of ${f.name}" class="preview-media">`;
  if (type.startsWith("audio/"))
    return html`<audio controls preload="metadata" src="${url}" class="preview-media">Your browser cannot play this file; download it.</audio>`;
  if (type.startsWith("video/"))
    return html`<video controls preload="metadata" src="${url}" class="preview-media">Your browser cannot play this file; download it.</video>`;
  // Downloads are served with `Content-Security-Policy: sandbox` (uploaded content never runs as
  // a page of the API origin), and browsers do not show PDFs in a sandboxed frame: a new tab does.
  if (type === "application/pdf") return html`<p><a href="${url}" target="_blank" rel="noopener">Open the PDF in a new tab</a></p>`;
  const markdown = type === "text/markdown" || /\.(md|markdown)$/i.test(f.path);
  if (!isTextType(f.content_type) && !markdown) return html`<p class="muted">No preview for ${f.content_type}; download the file to open it.</p>`;
  if (f.byte_size > PREVIEW_MAX_BYTES)
    return html`<p class="muted">This file is ${humanSize(f.byte_size)}; previews show files up to ${humanSize(PREVIEW_MAX_BYTES)}. Download it to read it.</p>`;
  const text = read ?? new TextDecoder("utf-8").decode((await readFileBytes(shell.deps, s.actor, bucketId, f.path, PREVIEW_MAX_BYTES)).bytes);
  // Rendered like Auto-Index READMEs: raw HTML shown as text, safe link targets, off the event loop.
  if (markdown) return html`<div class="markdown">${new SafeHtml(focusableCodeBlocks(nestHeadings(await renderReadme(text)), f.name))}</div>`;
  // The preview scrolls (max-height) and holds nothing focusable: tabindex lets a keyboard
  // scroll it, and the region's name says what it is (axe scrollable-region-focusable,
  // https://dequeuniversity.com/rules/axe/4.10/scrollable-region-focusable).
  return html`<pre class="preview-text" tabindex="0" role="region" aria-label="Contents of ${f.name}">${text}</pre>`;
}

/**
 * Code blocks scroll sideways when a line is long: each gets the text preview's treatment, with
 * a name of its own (regions with equal names are ambiguous landmarks). Safe on the renderer's
 * output for the reason nestHeadings is: every `<pre>` in it is the renderer's own.
 */
function focusableCodeBlocks(markup: string, fileName: string): string {
  let n = 0;
  return markup.replace(/<pre>/g, () => html`<pre tabindex="0" role="region" aria-label="Code block ${++n} of ${fileName}">`.value);
}

/**
 * The document's headings start below the page's "Preview" (h2), so headings stay in order.
 * Safe on the renderer's output: raw HTML in the Markdown is escaped, so every `<h` is its own.
 */
const nestHeadings = (markup: string) =>
  markup.replace(/<(\/?)h([1-6])\b/g, (_, close: string, level: string) => `<${close}h${Math.min(6, Number(level) + 2)}`);

const folderOf = (path: string) => path.slice(0, path.lastIndexOf("/") + 1);

const HISTORY_PAGE = 20;

/**
 * The file's own versions, newest first (the REST GET .../files/:file_id/versions): each links
 * to the bucket version it belongs to, where it can be restored. One more row than shown is read
 * to know whether an older page exists (the service gives no count).
 */
function historySection(shell: Shell, s: Session, bucketId: string, fileId: string, offset: number): SafeHtml {
  const { versions } = fileHistory(shell.deps, s.actor, bucketId, fileId, { limit: HISTORY_PAGE + 1, offset });
  const shown = versions.slice(0, HISTORY_PAGE);
  if (!shown.length) return html`<p class="small muted">No versions on this page. <a href="${fileUrl(bucketId, fileId)}#history">The newest</a></p>`;
  const link = (o: number) => `${fileUrl(bucketId, fileId)}${o ? `?history_offset=${o}` : ""}#history`;
  const rows = shown.map(
    (
      v,
    ) => html`<tr><td><a href="${BUCKETS_PATH}/${encodeURIComponent(bucketId)}/versions/${encodeURIComponent(v.version_id)}">Version ${v.version_number}</a></td>
<td class="small">${shortTime(v.created_at)}</td><td>${v.deleted ? html`<span class="badge">deleted</span>` : html`<span class="small">${v.kind}</span>`}</td>
<td class="small">${v.deleted || v.byte_size === null ? "" : humanSize(v.byte_size)}</td></tr>`,
  );
  return html`<table><caption class="skip">Versions of this file, newest first</caption><thead><tr><th scope="col">Version</th><th scope="col">When</th><th scope="col">Change</th><th scope="col">Size</th></tr></thead><tbody>${rows}</tbody></table>${pager(offset, HISTORY_PAGE, offset + versions.length, link, "newest")}`;
}

async function fileView(shell: Shell, s: Session, bucketId: string, fileId: string, query: Record<string, string | undefined>, refused?: Refusal) {
  const bucket = getBucket(shell.deps, s.actor, bucketId);
  const f = getFile(shell.deps, s.actor, bucket.id, fileId);
  const url = downloadUrl(shell.deps, s.actor, bucket.id, f.path);
  const err = refused?.error;
  const fieldRefusal = (err?.details as { field?: string } | undefined)?.field;
  const notice = err && !fieldRefusal ? alertBox(err.message) : alertBox(DONE[query.done ?? ""], "ok");
  const typed = (form: FormName, name: string, fallback: string) => (refused?.form === form ? (refused.values[name] ?? fallback) : fallback);
  const errOf = (form: FormName, field: string) => (refused?.form === form ? fieldError(err, field, `${form}-${field}-error`) : html``);
  const invalidOf = (form: FormName, field: string) => (refused?.form === form ? invalidAttrs(err, field, `${form}-${field}-error`) : html``);
  const lockDuration = Number(typed("lock", "duration_seconds", String(FILE_LOCK_DEFAULT_S)));
  const lock = f.lock;
  const text = bucket.archivedAt ? null : await editableText(shell, s, bucket.id, f);
  return shell.render(s, {
    title: `${f.name} · ${bucket.title}`,
    template: "dashboard/file.html",
    current: BUCKETS_PATH,
    error: err,
    vars: {
      notice,
      tabs: shell.bucketTabs(bucket.id, "files"),
      crumbStyle,
      trail: folderTrail(bucket.id, folderOf(f.path), true),
      id: bucket.id,
      title: bucket.title,
      fileId: f.id,
      name: f.name,
      path: f.path,
      contentType: f.content_type,
      size: humanSize(f.byte_size),
      bytes: f.byte_size.toLocaleString("en"),
      sha256: f.sha256,
      md5: f.checksum,
      versionCount: f.version_count,
      updated: shortTime(f.updated_at),
      created: shortTime(f.created_at),
      downloadUrl: url,
      preview: await preview(shell, s, bucket.id, f, url, text),
      history: historySection(shell, s, bucket.id, f.id, offsetOf(query, "history_offset")),
      archived: !!bucket.archivedAt,
      renamePath: typed("rename", "path", f.path),
      renameBucket: typed("rename", "bucket_id", bucket.id),
      renameOverwrite: typed("rename", "overwrite", "") === "on",
      renamePathError: errOf("rename", "path"),
      renamePathInvalid: invalidOf("rename", "path"),
      renameBucketError: errOf("rename", "bucket_id"),
      renameBucketInvalid: invalidOf("rename", "bucket_id"),
      copyPath: typed("copy", "path", f.path),
      copyBucket: typed("copy", "bucket_id", bucket.id),
      copyOverwrite: typed("copy", "overwrite", "") === "on",
      copyPathError: errOf("copy", "path"),
      copyPathInvalid: invalidOf("copy", "path"),
      copyBucketError: errOf("copy", "bucket_id"),
      copyBucketInvalid: invalidOf("copy", "bucket_id"),
      locked: !!lock,
      lockMessage: lock?.message ?? "",
      lockExpires: shortTime(lock?.expires_at ?? null),
      lockYours: !!lock?.held_by_you,
      // bucket_admin may break another credential's lock (D258).
      lockBreakable: !!lock && !lock.held_by_you && effectiveScope(s.actor, bucket.id) === "bucket_admin",
      // The editor saves over the content it shows (based_on): a change made meanwhile is refused.
      editable: text !== null,
      editContent: typed("edit", "content", text ?? ""),
      // After CONFLICT the form stands on the content now stored (a second Save is a choice made
      // knowing it); after any other refusal it stays on the content it was opened on.
      editBasedOn: refused?.form === "edit" && err?.code !== "CONFLICT" && refused.values.based_on ? refused.values.based_on : f.sha256,
      editCrlf: text !== null && allCrlf(text) ? "1" : "",
      editMaxChars: TEXT_WRITE_MAX_CHARS,
      editContentError: errOf("edit", "content"),
      editContentInvalid: invalidOf("edit", "content"),
      // Offered where the API's append_text would accept the file (a text type).
      appendable: isTextType(f.content_type),
      appendTextValue: typed("append", "text", ""),
      appendTextError: errOf("append", "text"),
      appendTextInvalid: invalidOf("append", "text"),
      typedLockMessage: typed("lock", "message", ""),
      lockMessageError: errOf("lock", "message"),
      lockMessageInvalid: invalidOf("lock", "message"),
      durations: lockDurationOptions(lockDuration),
    },
  });
}

/** Which field of the form a service refusal is about, so it is shown next to that field. */
function placeRefusal(e: ApiError, pathField: string): ApiError {
  if ((e.details as { field?: string } | undefined)?.field) return e;
  if (["INVALID_PATH", "FILE_EXISTS", "FORBIDDEN_FILE_TYPE"].includes(e.code)) {
    const worded = existsRefusal(e, "Replace a file already at that path");
    return new ApiError(worded.code, worded.message, { ...e.details, field: pathField }, e.retryAfter);
  }
  return e;
}

const checked = (body: unknown, name: string) => formField(body, name) === "on";

/** A size or text-type refusal is about what was typed: shown next to that box (Append's or Edit's). */
function typedTextRefusal(e: unknown, field: string): unknown {
  if (e instanceof ApiError && ["FILE_TOO_LARGE", "NOT_TEXT_FILE"].includes(e.code))
    return new ApiError(e.code, e.message, { ...e.details, field }, e.retryAfter);
  return e;
}

export const filePage: DashboardPage = {
  routes: (app, shell) => {
    const base = `${BUCKETS_PATH}/:id/files/:fileId`;
    const post = (suffix: string, form: FormName | undefined, run: (s: Session, id: string, fileId: string, body: unknown) => string | Promise<string>) =>
      app.post(
        `${base}/${suffix}`,
        shell.action(
          (s, { params, body }) => run(s, params.id!, params.fileId!, body),
          async (s, error, { params, body }) => {
            const values = Object.fromEntries(
              ["path", "bucket_id", "overwrite", "message", "duration_seconds", "text", "content", "based_on"].map((n) => [n, formField(body, n)]),
            );
            try {
              return await fileView(shell, s, params.id!, params.fileId!, {}, { error, form, values });
            } catch (e) {
              // The file or bucket went away meanwhile: say so on the not-found page.
              if (e instanceof ApiError && (e.code === "FILE_NOT_FOUND" || e.code === "BUCKET_NOT_FOUND")) return shell.notFound(s, e);
              throw e;
            }
          },
        ),
        { detail: { hide: true } },
      );

    // Rename within the bucket, or move to another bucket when one is named.
    post("rename", "rename", (s, id, fileId, body) => {
      const target = formField(body, "bucket_id").trim() || id;
      const input = { path: formField(body, "path").trim(), overwrite: checked(body, "overwrite") };
      checkForm(RenameBody, input, { path: "Give the new path, e.g. docs/guide.md." });
      try {
        if (target === id) {
          const f = renameFile(shell.deps, s.actor, id, fileId, input);
          return fileUrl(id, f.id, "?done=renamed");
        }
        const f = copyOrMoveFile(shell.deps, s.actor, id, fileId, { ...input, bucket_id: target }, "move");
        return fileUrl(target, f.id, "?done=moved");
      } catch (e) {
        throw e instanceof ApiError ? targetRefusal(shell, s, e, id, target, "path") : e;
      }
    });
    post("copy", "copy", (s, id, fileId, body) => {
      const target = formField(body, "bucket_id").trim() || id;
      const input = { path: formField(body, "path").trim(), bucket_id: target, overwrite: checked(body, "overwrite") };
      checkForm(CopyMoveBody, input, { path: "Give the path of the copy, e.g. docs/guide-copy.md." });
      try {
        const f = copyOrMoveFile(shell.deps, s.actor, id, fileId, input, "copy");
        return fileUrl(target, f.id, "?done=copied");
      } catch (e) {
        throw e instanceof ApiError ? targetRefusal(shell, s, e, id, target, "path") : e;
      }
    });
    post("delete", undefined, (s, id, fileId) => {
      const r = deleteFile(shell.deps, s.actor, id, fileId);
      return filesUrl(id, folderOf(r.path), { done: "deleted" });
    });
    post("lock", "lock", (s, id, fileId, body) => {
      const f = getFile(shell.deps, s.actor, id, fileId);
      const input = { paths: [f.path], message: formField(body, "message").trim(), duration_seconds: Number(formField(body, "duration_seconds")) };
      checkForm(LockFilesBody, input, { message: "Say why the file is locked (1 to 500 characters).", duration_seconds: "Choose how long the lock lasts." });
      lockFiles(shell.deps, s.actor, id, input);
      return fileUrl(id, fileId, "?done=locked#lock");
    });
    // The REST POST .../files/append_text on this file's path (never creating: the file exists).
    post("append", "append", async (s, id, fileId, body) => {
      const f = getFile(shell.deps, s.actor, id, fileId);
      // Browsers send a textarea's line breaks as CRLF; the file gets the \n a person typed.
      const input = { path: f.path, text: formField(body, "text").replace(/\r\n/g, "\n") };
      checkForm(AppendTextBody, input, { text: "Type at most 65,536 characters to append." });
      try {
        await appendText(shell.deps, s.actor, id, input);
      } catch (e) {
        throw typedTextRefusal(e, "text");
      }
      return fileUrl(id, fileId, "?done=appended#preview");
    });
    // MCP's bucket_file_write on this file's path, only over the content the page showed.
    post("edit", "edit", async (s, id, fileId, body) => {
      const f = getFile(shell.deps, s.actor, id, fileId);
      const basedOn = formField(body, "based_on");
      if (!/^[0-9a-f]{64}$/.test(basedOn)) throw new ApiError("VALIDATION_FAILED", "Open the file again to edit it.", { field: "content" });
      const typed = formField(body, "content");
      let changed: boolean;
      try {
        const r = await writeTextFile(shell.deps, s.actor, id, {
          path: f.path,
          // A file whose line breaks were all CRLF keeps them; otherwise the browser's CRLF become the \n typed.
          content: formField(body, "crlf") === "1" ? typed : typed.replace(/\r\n/g, "\n"),
          // The stored type stays (a site serves the file as before), whatever its name suggests.
          contentType: f.content_type,
          comment: `edit ${f.path} (dashboard)`,
          basedOn,
        });
        changed = r.version !== null;
      } catch (e) {
        if (e instanceof ApiError && e.code === "CONFLICT")
          throw new ApiError(e.code, `${e.message} The preview shows its content now; Save again to replace it with your text.`, {
            ...e.details,
            field: "content",
          });
        throw typedTextRefusal(e, "content");
      }
      return fileUrl(id, fileId, changed ? "?done=edited#preview" : "?done=unchanged#preview");
    });
    post("unlock", undefined, (s, id, fileId, body) => {
      const r = unlockFile(shell.deps, s.actor, id, fileId, { force: formField(body, "force") === "true" });
      return fileUrl(id, fileId, r.broken ? "?done=broken#lock" : "?done=unlocked#lock");
    });

    return app.get(
      base,
      shell.view(async (s, { params, query }) => {
        try {
          return await fileView(shell, s, params.id!, params.fileId!, query);
        } catch (e) {
          if (e instanceof ApiError && e.code === "FILE_NOT_FOUND")
            return shell.notFound(s, new ApiError("FILE_NOT_FOUND", "This file is not in the bucket (it may have been deleted or moved)."));
          throw e;
        }
      }),
      { detail: { hide: true } },
    ) as unknown as Elysia;
  },
};

/**
 * A refusal naming a bucket: the target bucket (another account's, or gone) belongs next to the
 * bucket field; the file's own bucket going away is the page's problem, not the field's.
 */
function targetRefusal(shell: Shell, s: Session, e: ApiError, id: string, target: string, pathField: string): ApiError {
  if (target !== id && (e.code === "BUCKET_NOT_FOUND" || e.code === "FORBIDDEN")) {
    try {
      getBucket(shell.deps, s.actor, id);
      return new ApiError(e.code, "No bucket of yours has that id.", { field: "bucket_id" });
    } catch {
      return e;
    }
  }
  return placeRefusal(e, pathField);
}
