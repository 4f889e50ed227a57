// Reading files: list (page + path filter), metadata, download links, per-file history.
import { and, asc, count, desc, eq, gt, sql, type Placeholder } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { bucketVersions, fileChanges, fileLocks, files } from "../../db/schema";
import { isConnection, preparedPerDb } from "../../db/prepared";
import type { DbOrTx } from "../../db/tx";
import { loadBucket } from "../buckets";
import { expiresIn, GET_URL_TTL_S, signToken, storageUrl } from "./storage/tokens";
import { latestVersion, type FileRow } from "./commit";
import { baseName, normalizePath } from "./paths";
import { presentFile } from "./present";
import { liveHolders } from "./lock-holders";

/** Page size for file lists (documented): default 100, at most 1000. */
export const FILE_PAGE_DEFAULT = 100;
export const FILE_PAGE_MAX = 1000;

// The reads below run on nearly every files request: prepared once per connection (building a
// query through drizzle costs more than SQLite takes to run it; src/db/prepared.ts).
type Param = string | Placeholder;
const fileByIdQuery = (db: DbOrTx, bucketId: Param, fileId: Param) =>
  db
    .select()
    .from(files)
    .where(and(eq(files.bucketId, bucketId), eq(files.id, fileId)));
const fileByPathQuery = (db: DbOrTx, bucketId: Param, path: Param) =>
  db
    .select()
    .from(files)
    .where(and(eq(files.bucketId, bucketId), eq(files.path, path)));
const locksQuery = (db: DbOrTx, bucketId: Param, now: Param) =>
  db
    .select()
    .from(fileLocks)
    .where(and(eq(fileLocks.bucketId, bucketId), gt(fileLocks.expiresAt, now)));
const filePageQuery = (db: DbOrTx, bucketId: Param, limit: number | Placeholder, offset: number | Placeholder) =>
  db.select().from(files).where(eq(files.bucketId, bucketId)).orderBy(asc(files.path)).limit(limit).offset(offset);
const historyQuery = (db: DbOrTx, bucketId: Param, path: Param, limit: number | Placeholder, offset: number | Placeholder) =>
  db
    .select({ c: fileChanges, v: bucketVersions })
    .from(fileChanges)
    .innerJoin(bucketVersions, and(eq(bucketVersions.bucketId, fileChanges.bucketId), eq(bucketVersions.number, fileChanges.version)))
    .where(and(eq(fileChanges.bucketId, bucketId), eq(fileChanges.path, path)))
    .orderBy(desc(fileChanges.version))
    .limit(limit)
    .offset(offset);
const p = (name: string) => sql.placeholder(name);
const prepared = preparedPerDb((db) => ({
  fileById: fileByIdQuery(db, p("bucketId"), p("fileId")).prepare(),
  fileByPath: fileByPathQuery(db, p("bucketId"), p("path")).prepare(),
  locks: locksQuery(db, p("bucketId"), p("now")).prepare(),
  filePage: filePageQuery(db, p("bucketId"), p("limit"), p("offset")).prepare(),
  history: historyQuery(db, p("bucketId"), p("path"), p("limit"), p("offset")).prepare(),
}));

export function fileById(bucketId: string, fileId: string, db: DbOrTx): FileRow {
  const f = isConnection(db) ? prepared(db).fileById.get({ bucketId, fileId }) : fileByIdQuery(db, bucketId, fileId).get();
  if (!f) throw new ApiError("FILE_NOT_FOUND", `File ${fileId} is not in bucket ${bucketId}.`);
  return f;
}

export function fileByPath(bucketId: string, path: string, db: DbOrTx): FileRow | undefined {
  return isConnection(db) ? prepared(db).fileByPath.get({ bucketId, path }) : fileByPathQuery(db, bucketId, path).get();
}

/** Path, content hash and type of every current file of a bucket (for manifests, diffs and builds). */
export function currentFiles(
  bucketId: string,
  db: DbOrTx,
  opts: { byPath?: boolean } = {},
): { path: string; sha256: string; size: number; md5: string; contentType: string }[] {
  const q = db
    .select({ path: files.path, sha256: files.sha256, size: files.size, md5: files.md5, contentType: files.contentType })
    .from(files)
    .where(eq(files.bucketId, bucketId));
  return (opts.byPath ? q.orderBy(asc(files.path)) : q).all();
}

export function lockViews(deps: Deps, actor: Actor, bucketId: string) {
  // A lock whose holder can no longer act is shown as none: it blocks nobody (D257).
  const live = liveHolders(deps);
  const rows = prepared(deps.db)
    .locks.all({ bucketId, now: deps.clock.now().toISOString() })
    .filter((l) => l.holderId === actor.credentialId || live(l.holderId));
  return new Map(rows.map((l) => [l.path, { message: l.message, expires_at: l.expiresAt, held_by_you: l.holderId === actor.credentialId }]));
}

export function listFiles(deps: Deps, actor: Actor, bucketId: string, q: { limit?: number; offset?: number; q?: string }) {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_read");
  const limit = Math.min(Math.max(q.limit ?? FILE_PAGE_DEFAULT, 1), FILE_PAGE_MAX);
  const offset = Math.max(q.offset ?? 0, 0);
  const filter = q.q ? q.q.normalize("NFC") : "";
  // Substring match on the path (`_email/` finds every file under any _email folder).
  const where = filter ? and(eq(files.bucketId, bucket.id), sql`instr(${files.path}, ${filter}) > 0`) : eq(files.bucketId, bucket.id);
  const rows = filter
    ? deps.db.select().from(files).where(where).orderBy(asc(files.path)).limit(limit).offset(offset).all()
    : prepared(deps.db).filePage.all({ bucketId: bucket.id, limit, offset });
  // Without a filter the latest version already knows the count: no scan of the bucket per page.
  const total = filter ? deps.db.select({ n: count() }).from(files).where(where).get()!.n : (latestVersion(bucket.id, deps.db)?.fileCount ?? 0);
  const locks = lockViews(deps, actor, bucket.id);
  return {
    files: rows.map((f) => presentFile(deps, f, locks.get(f.path))),
    pagination: {
      limit,
      offset,
      total_count: total,
      has_more: offset + rows.length < total,
      next_offset: offset + rows.length < total ? offset + rows.length : null,
    },
  };
}

export function getFile(deps: Deps, actor: Actor, bucketId: string, fileId: string) {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_read");
  const f = fileById(bucket.id, fileId, deps.db);
  return presentFile(deps, f, lockViews(deps, actor, bucket.id).get(f.path));
}

/** The file at a client-given path in a bucket the actor may read; FILE_NOT_FOUND when there is none. */
function readableFileAt(deps: Deps, actor: Actor, bucketId: string, rawPath: string) {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_read");
  const path = normalizePath(rawPath);
  const file = fileByPath(bucket.id, path, deps.db);
  if (!file) throw new ApiError("FILE_NOT_FOUND", `No file at ${path} in bucket ${bucket.id}.`, { path });
  return { bucket, file };
}

/** A signed, expiring same-origin URL that serves the bytes (the bearer never leaves the API). */
export function downloadUrl(deps: Deps, actor: Actor, bucketId: string, rawPath: string): string {
  const { bucket, file: f } = readableFileAt(deps, actor, bucketId, rawPath);
  for (const hook of deps.onFileRead) hook(deps, actor, bucket.id, f.path);
  return storageUrl(
    deps,
    signToken(deps, "get", {
      a: actor.accountId,
      b: bucket.id,
      f: f.id,
      h: f.sha256,
      s: f.size,
      t: f.contentType,
      n: baseName(f.path),
      e: expiresIn(deps, GET_URL_TTL_S),
    }),
  );
}

/** Every content the file's path has had, newest first, with the bucket version of each. */
export function fileHistory(deps: Deps, actor: Actor, bucketId: string, fileId: string, page: { limit?: number; offset?: number }) {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_read");
  const f = fileById(bucket.id, fileId, deps.db);
  const limit = Math.min(Math.max(page.limit ?? FILE_PAGE_DEFAULT, 1), FILE_PAGE_MAX);
  const rows = prepared(deps.db).history.all({ bucketId: bucket.id, path: f.path, limit, offset: Math.max(page.offset ?? 0, 0) });
  return {
    file: presentFile(deps, f),
    versions: rows.map(({ c, v }) => ({
      version_id: v.id,
      version_number: v.number,
      kind: v.kind,
      created_at: v.createdAt,
      deleted: c.sha256 === null,
      byte_size: c.size,
      content_type: c.contentType,
      checksum: c.md5,
      sha256: c.sha256,
    })),
  };
}

/** The bytes of a file (for MCP `bucket_file_read`, publishing, previews). Bounded by `maxBytes`. */
export async function readFileBytes(deps: Deps, actor: Actor, bucketId: string, rawPath: string, maxBytes = 10 * 1024 * 1024) {
  const { file: f } = readableFileAt(deps, actor, bucketId, rawPath);
  const path = f.path;
  if (f.size > maxBytes)
    throw new ApiError("FILE_TOO_LARGE", `${path} is ${f.size} bytes; read at most ${maxBytes} this way (download it instead).`, { path, max_bytes: maxBytes });
  return { file: f, bytes: await deps.blobs.file(f.sha256).bytes() };
}
