// A bucket as folders: the immediate children (sub-folders and files) of a path prefix, one
// page at a time, for the dashboard's file browser. Paths are flat in the `files` table, so a
// folder is every path that starts with `<prefix><name>/`. The (bucket_id, path) index gives
// them in byte order; each sub-folder costs one index seek (we jump past all its paths), and
// runs of files come in batches, so a page reads about `limit` rows however large the bucket.
import { and, asc, eq, gt, gte, lt } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { files } from "../../db/schema";
import { loadBucket } from "../buckets";
import type { FileRow } from "./commit";
import { normalizePath } from "./paths";
import { presentFile } from "./present";
import { lockViews } from "./service";

export const FOLDER_PAGE_DEFAULT = 100;
export const FOLDER_PAGE_MAX = 1000;

export type FolderEntry = { kind: "folder"; name: string; path: string } | { kind: "file"; name: string; file: ReturnType<typeof presentFile> };

/** "" for the root, else a normalized folder path ending in "/" (INVALID_PATH otherwise). */
export function folderPrefix(raw: string | undefined): string {
  const trimmed = (raw ?? "").replace(/\/+$/, "");
  return trimmed ? `${normalizePath(trimmed)}/` : "";
}

// The first string after every "<folder>/..." path in byte order: "/" is 0x2F and "0" 0x30.
export const pastFolder = (folderPath: string) => `${folderPath.slice(0, -1)}0`;

/**
 * One page of `prefix`'s children in path order (sub-folders and files interleaved as their
 * names sort). `after` is the previous page's `next_cursor`: the last child shown (a folder's
 * path ends in "/", a file's never does).
 */
export function listFolder(deps: Deps, actor: Actor, bucketId: string, q: { prefix?: string; after?: string; limit?: number }) {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_read");
  const prefix = folderPrefix(q.prefix);
  const limit = Math.min(Math.max(q.limit ?? FOLDER_PAGE_DEFAULT, 1), FOLDER_PAGE_MAX);
  const after = q.after ?? "";
  if (after && !after.startsWith(prefix)) throw new ApiError("VALIDATION_FAILED", "The page cursor belongs to another folder.", { field: "after" });
  const end = prefix ? pastFolder(prefix) : null;
  // Where the next read starts: inclusive after skipping a folder, exclusive after a file.
  let start: { path: string; inclusive: boolean } | null = after
    ? after.endsWith("/")
      ? { path: pastFolder(after), inclusive: true }
      : { path: after, inclusive: false }
    : prefix
      ? { path: prefix, inclusive: true }
      : null;
  type Found = { kind: "folder"; name: string; path: string } | { kind: "file"; name: string; row: FileRow };
  const found: Found[] = [];
  // Right after a folder, read one row: in a folder of folders, the next child is usually
  // another folder, and a full batch would read rows only to skip them.
  let afterFolder = false;
  while (found.length <= limit) {
    const need = afterFolder ? 1 : limit + 1 - found.length;
    const conditions = [eq(files.bucketId, bucket.id)];
    if (start) conditions.push(start.inclusive ? gte(files.path, start.path) : gt(files.path, start.path));
    if (end) conditions.push(lt(files.path, end));
    const rows = deps.db
      .select()
      .from(files)
      .where(and(...conditions))
      .orderBy(asc(files.path))
      .limit(need)
      .all();
    let jumped = false;
    for (const row of rows) {
      const rest = row.path.slice(prefix.length);
      const slash = rest.indexOf("/");
      if (slash < 0) {
        found.push({ kind: "file", name: rest, row });
        start = { path: row.path, inclusive: false };
        continue;
      }
      const path = `${prefix}${rest.slice(0, slash)}/`;
      found.push({ kind: "folder", name: rest.slice(0, slash), path });
      start = { path: pastFolder(path), inclusive: true };
      jumped = true;
      break;
    }
    if (!jumped && rows.length < need) break;
    afterFolder = jumped;
  }
  const page = found.slice(0, limit);
  const locks = lockViews(deps, actor, bucket.id);
  const last = page[page.length - 1];
  const hasMore = found.length > limit;
  return {
    prefix,
    entries: page.map((e): FolderEntry => (e.kind === "folder" ? e : { kind: "file", name: e.name, file: presentFile(deps, e.row, locks.get(e.row.path)) })),
    pagination: { limit, has_more: hasMore, next_cursor: hasMore && last ? (last.kind === "folder" ? last.path : last.row.path) : null },
  };
}
