// The file browser's "selected entries" actions: files and whole folders of one folder moved or
// copied to another folder, or deleted, as one reorganize (all or nothing, one version), or
// locked together (one lockFiles, all or none). A folder stands for every file under it; the
// paths below the browsed folder are kept at the destination.
import { and, asc, eq, gte, lt } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { files } from "../../db/schema";
import { loadBucket } from "../buckets";
import { folderPrefix, pastFolder } from "./folders";
import { lockFiles } from "./locks";
import { MAX_REORGANIZE_OPERATIONS, reorganize, type ReorganizeOperation } from "./ops";
import { normalizePath } from "./paths";

export interface EntriesChange {
  op: "move" | "copy" | "delete" | "lock";
  /** The folder the entries were picked in ("" for the top). */
  folder: string;
  /** Files' paths, and folders' paths ending in "/", all inside `folder`. */
  entries: string[];
  /** The destination folder of a move or copy ("" for the top). */
  to?: string;
  overwrite?: boolean;
  /** A lock's reason (shown to other writers) and how long it lasts. */
  message?: string;
  duration_seconds?: number;
}

/** The most characters a lock's reason has (the REST lock's `message`). */
const LOCK_MESSAGE_MAX = 500;

const tooMany = () =>
  new ApiError(
    "VALIDATION_FAILED",
    `The selection holds more than ${MAX_REORGANIZE_OPERATIONS.toLocaleString("en")} files; change fewer at a time (each change is one step of the bucket's history).`,
    { field: "entries", max_operations: MAX_REORGANIZE_OPERATIONS },
  );

export function changeEntries(deps: Deps, actor: Actor, bucketId: string, input: EntriesChange) {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_read");
  const base = folderPrefix(input.folder);
  const picked = [...new Set(input.entries)];
  if (picked.length === 0) throw new ApiError("VALIDATION_FAILED", "Tick the files or folders to change first.", { field: "entries" });
  const paths: string[] = [];
  const folders: string[] = [];
  for (const entry of picked) {
    const isFolder = entry.endsWith("/");
    const path = isFolder ? folderPrefix(entry) : normalizePath(entry);
    if (!path.startsWith(base) || path === base)
      throw new ApiError("VALIDATION_FAILED", `${entry} is not in the folder ${base || "at the top"}; reload the page.`, { field: "entries" });
    if (!isFolder) paths.push(path);
    else {
      folders.push(path);
      const under = deps.db
        .select({ path: files.path })
        .from(files)
        .where(and(eq(files.bucketId, bucket.id), gte(files.path, path), lt(files.path, pastFolder(path))))
        .orderBy(asc(files.path))
        .limit(MAX_REORGANIZE_OPERATIONS + 1)
        .all();
      for (const r of under) paths.push(r.path);
    }
    if (paths.length > MAX_REORGANIZE_OPERATIONS) throw tooMany();
  }
  const unique = [...new Set(paths)];
  // A folder picked that emptied meanwhile, or files that went: reorganize names what is missing.
  if (unique.length === 0) throw new ApiError("FILE_NOT_FOUND", "The selected folders hold no files any more; reload the page.", { field: "entries" });
  if (input.op === "lock") {
    const message = (input.message ?? "").trim();
    if (!message || message.length > LOCK_MESSAGE_MAX)
      throw new ApiError("VALIDATION_FAILED", `Say why the files are locked (1 to ${LOCK_MESSAGE_MAX} characters).`, { field: "message" });
    return { ...lockFiles(deps, actor, bucket.id, { paths: unique, message, duration_seconds: input.duration_seconds }), files_count: unique.length };
  }
  let ops: ReorganizeOperation[];
  let comment: string;
  const count = `${unique.length} file${unique.length === 1 ? "" : "s"}`;
  if (input.op === "delete") {
    ops = unique.map((from) => ({ op: "delete", from }));
    comment = `delete ${count} in ${base || "/"}`;
  } else {
    const dest = folderPrefix(input.to);
    if (dest === base) throw new ApiError("VALIDATION_FAILED", "The selection is in that folder already; name another folder.", { field: "to" });
    const into = folders.find((f) => dest.startsWith(f));
    if (into) throw new ApiError("VALIDATION_FAILED", `${into} cannot go into a folder inside itself; name a folder outside it.`, { field: "to" });
    ops = unique.map((from) => ({ op: input.op === "copy" ? "copy" : "move", from, to: dest + from.slice(base.length), overwrite: input.overwrite === true }));
    comment = `${input.op} ${count} from ${base || "/"} to ${dest || "/"}`;
  }
  return { ...reorganize(deps, actor, bucket.id, ops, comment), files_count: unique.length };
}
