// Changing files without re-uploading: rename/move/copy by blob reference (also across
// buckets), delete, reorganize (several operations, all or none) and append_text. Each is one
// transaction and one version per bucket touched, through commitChanges.
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { transaction } from "../../db/tx";
import { loadBucket } from "../buckets";
import { bucketForWrite, commitChanges, type BlobRef, type Change, type FileRow } from "./commit";
import { assertAllowedFile, normalizeContentType } from "./forbidden";
import { normalizePath } from "./paths";
import { assertNotExecutable } from "./sniff";
import { fileById, fileByPath } from "./service";
import { guessContentType } from "./write";

export const MAX_REORGANIZE_OPERATIONS = 1000;
export const MAX_APPEND_BYTES = 64 * 1024;
export const MAX_APPEND_FILE_BYTES = 10 * 1024 * 1024;

const blobOf = (f: FileRow): BlobRef => ({ sha256: f.sha256, size: f.size, md5: f.md5, contentType: f.contentType });

export interface PlaceInput {
  path?: string;
  bucket_id?: string;
  overwrite?: boolean;
}

export function renameFile(deps: Deps, actor: Actor, bucketId: string, fileId: string, input: PlaceInput, kind: "rename" | "move" = "rename"): FileRow {
  if (input.path === undefined) throw new ApiError("VALIDATION_FAILED", "path (the new bucket-relative path) is required.", { field: "path" });
  const to = normalizePath(input.path);
  return transaction(deps.db, (tx) => {
    bucketForWrite(deps, actor, bucketId, {}, tx);
    const f = fileById(bucketId, fileId, tx);
    if (to === f.path) return f;
    assertAllowedFile(to, f.contentType);
    if (fileByPath(bucketId, to, tx) && !input.overwrite) throw new ApiError("FILE_EXISTS", `A file already exists at ${to}.`, { path: to });
    const r = commitChanges(
      deps,
      actor,
      bucketId,
      [
        { path: f.path, blob: null },
        { path: to, blob: blobOf(f), fileId: f.id },
      ],
      { kind, comment: `${kind} ${f.path} -> ${to}` },
      tx,
    );
    return r.written[0]!;
  });
}

/** Copy (or move) by blob reference; across buckets needs read (copy) or write (move) on the source. */
export function copyOrMoveFile(deps: Deps, actor: Actor, bucketId: string, fileId: string, input: PlaceInput, kind: "copy" | "move"): FileRow {
  const targetBucket = input.bucket_id ?? bucketId;
  if (kind === "move" && targetBucket === bucketId) return renameFile(deps, actor, bucketId, fileId, input, "move");
  return transaction(deps.db, (tx) => {
    // Copying out of an archived bucket is allowed: reading is not a change.
    loadBucket(deps, actor, bucketId, kind === "copy" ? "bucket_read" : "bucket_write", tx);
    if (kind === "move") bucketForWrite(deps, actor, bucketId, {}, tx);
    const f = fileById(bucketId, fileId, tx);
    const to = input.path === undefined ? f.path : normalizePath(input.path);
    if (targetBucket === bucketId && to === f.path) throw new ApiError("FILE_EXISTS", "A copy needs a different path or bucket.", { path: to });
    assertAllowedFile(to, f.contentType);
    bucketForWrite(deps, actor, targetBucket, {}, tx);
    if (fileByPath(targetBucket, to, tx) && !input.overwrite)
      throw new ApiError("FILE_EXISTS", `A file already exists at ${to} in bucket ${targetBucket}.`, { path: to, bucket_id: targetBucket });
    const r = commitChanges(deps, actor, targetBucket, [{ path: to, blob: blobOf(f) }], { kind: kind, comment: `${kind} from ${bucketId}:${f.path}` }, tx);
    if (kind === "move") commitChanges(deps, actor, bucketId, [{ path: f.path, blob: null }], { kind: "move", comment: `moved to ${targetBucket}:${to}` }, tx);
    return r.written[0]!;
  });
}

export function deleteFile(deps: Deps, actor: Actor, bucketId: string, fileId: string) {
  return transaction(deps.db, (tx) => {
    bucketForWrite(deps, actor, bucketId, {}, tx);
    const f = fileById(bucketId, fileId, tx);
    const r = commitChanges(deps, actor, bucketId, [{ path: f.path, blob: null }], { kind: "delete", comment: `delete ${f.path}` }, tx);
    return { deleted: true, path: f.path, version_id: r.version?.id ?? null };
  });
}

export interface ReorganizeOperation {
  op: "rename" | "move" | "copy" | "delete";
  from: string;
  to?: string;
  overwrite?: boolean;
}

/** Apply the operations in order to a view of the bucket; commit the net result or nothing. */
export function reorganize(deps: Deps, actor: Actor, bucketId: string, ops: ReorganizeOperation[], comment?: string) {
  if (ops.length === 0 || ops.length > MAX_REORGANIZE_OPERATIONS) {
    throw new ApiError("VALIDATION_FAILED", `Send 1 to ${MAX_REORGANIZE_OPERATIONS} operations.`, { field: "operations" });
  }
  return transaction(deps.db, (tx) => {
    bucketForWrite(deps, actor, bucketId, {}, tx);
    type Entry = { blob: BlobRef; fileId?: string } | null;
    const view = new Map<string, Entry>();
    const original = new Map<string, FileRow | undefined>();
    const read = (p: string): Entry => {
      if (!view.has(p)) {
        const row = fileByPath(bucketId, p, tx);
        original.set(p, row);
        view.set(p, row ? { blob: blobOf(row), fileId: row.id } : null);
      }
      return view.get(p)!;
    };
    ops.forEach((o, i) => {
      const fail = (code: "FILE_NOT_FOUND" | "FILE_EXISTS" | "VALIDATION_FAILED", msg: string): never => {
        throw new ApiError(code, `operations[${i}] (${o.op} ${o.from}): ${msg}. Nothing was changed.`, { operation_index: i });
      };
      const from = normalizePath(o.from);
      const src = read(from);
      if (!src) fail("FILE_NOT_FOUND", `no file at ${from}`);
      if (o.op === "delete") {
        view.set(from, null);
        return;
      }
      if (o.to === undefined) fail("VALIDATION_FAILED", "`to` is required");
      const to = normalizePath(o.to);
      if (to === from) fail("VALIDATION_FAILED", "`to` equals `from`");
      assertAllowedFile(to, src!.blob.contentType);
      if (read(to) && !o.overwrite) fail("FILE_EXISTS", `a file exists at ${to}`);
      if (o.op === "copy") view.set(to, { blob: src!.blob });
      else {
        view.set(to, src);
        view.set(from, null);
      }
    });
    const changes: Change[] = [];
    // Deletions first so a renamed file's id is free for its new path.
    for (const [path, entry] of view) if (!entry && original.get(path)) changes.push({ path, blob: null });
    for (const [path, entry] of view) {
      if (!entry) continue;
      const before = original.get(path);
      if (before && before.sha256 === entry.blob.sha256 && before.contentType === entry.blob.contentType && before.id === entry.fileId) continue;
      changes.push({ path, blob: entry.blob, fileId: entry.fileId });
    }
    const r = commitChanges(deps, actor, bucketId, changes, { kind: "reorganize", comment: comment ?? `reorganize (${ops.length} operations)` }, tx);
    return { version_id: r.version?.id ?? null, changed_paths_count: r.version?.changedCount ?? 0 };
  });
}

const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-ndjson|x-yaml|yaml|toml|x-sh|csv|ld\+json)|[^;]*\+(json|xml))/i;
export const isTextType = (contentType: string): boolean => TEXT_TYPES.test(contentType.trim());

/** Append UTF-8 text to a text file as a new version (created when missing and `create`). */
export async function appendText(deps: Deps, actor: Actor, bucketId: string, input: { path: string; text: string; create?: boolean }) {
  const path = normalizePath(input.path);
  const addition = new TextEncoder().encode(input.text);
  if (addition.byteLength === 0) throw new ApiError("VALIDATION_FAILED", "text must not be empty.", { field: "text" });
  if (addition.byteLength > MAX_APPEND_BYTES)
    throw new ApiError("FILE_TOO_LARGE", `Append at most ${MAX_APPEND_BYTES} bytes per call.`, { max_bytes: MAX_APPEND_BYTES });
  const before = transaction(deps.db, (tx) => {
    bucketForWrite(deps, actor, bucketId, {}, tx);
    return fileByPath(bucketId, path, tx);
  });
  let existing = new Uint8Array(0);
  let contentType: string;
  if (before) {
    if (!isTextType(before.contentType))
      throw new ApiError("NOT_TEXT_FILE", `${path} is ${before.contentType}, not a text file.`, { path, content_type: before.contentType });
    if (before.size + addition.byteLength > MAX_APPEND_FILE_BYTES)
      throw new ApiError("FILE_TOO_LARGE", `append_text works on files up to ${MAX_APPEND_FILE_BYTES} bytes.`, { max_bytes: MAX_APPEND_FILE_BYTES });
    existing = await deps.blobs.file(before.sha256).bytes();
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(existing);
    } catch {
      throw new ApiError("NOT_TEXT_FILE", `${path} is not valid UTF-8 text.`, { path });
    }
    contentType = before.contentType;
  } else {
    if (!input.create) throw new ApiError("FILE_NOT_FOUND", `No file at ${path}; pass create: true to start one.`, { path });
    contentType = normalizeContentType(guessContentType(path));
    if (!isTextType(contentType)) contentType = "text/plain; charset=utf-8";
    assertAllowedFile(path, contentType);
  }
  const bytes = new Uint8Array(existing.byteLength + addition.byteLength);
  bytes.set(existing);
  bytes.set(addition, existing.byteLength);
  // The whole result is scanned, not the addition alone: appending can complete a signature.
  assertNotExecutable(bytes, path);
  const info = await deps.blobs.putBytes(bytes);
  return transaction(deps.db, (tx) => {
    const now = fileByPath(bucketId, path, tx);
    // Someone changed the file while we read it: appending to the stale copy would lose their change.
    if ((now?.sha256 ?? null) !== (before?.sha256 ?? null)) {
      throw new ApiError("DATABASE_BUSY_RETRY", `${path} changed while appending; retry.`, { retry_after: 1 }, 1);
    }
    const r = commitChanges(
      deps,
      actor,
      bucketId,
      [{ path, blob: { sha256: info.sha256, size: info.size, md5: info.md5, contentType } }],
      { kind: "append", comment: `append to ${path}` },
      tx,
    );
    return { file: r.written[0]!, version_id: r.version?.id ?? null };
  });
}
