// The one write path for bucket contents. Upload finalize, direct-upload attach, rename, move,
// copy, delete, reorganize, append, restore, templates and other features (inbound email,
// publishing) all end here: one transaction, at most one new bucket version, buckets.revision
// bumped, the `files` current state and the `file_changes` log updated together. A crash
// before COMMIT leaves nothing; after it, everything.
import { and, desc, eq, gt, inArray, ne, sql, type Placeholder } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { newId } from "../../core/ids";
import { bucketVersions, fileChanges, fileLocks, files } from "../../db/schema";
import { isConnection, preparedPerDb } from "../../db/prepared";
import { transaction, type DbOrTx, type Tx } from "../../db/tx";
import { commitStatements, folderBounds, type CommitStatements } from "./commit-statements";
import { liveHolders } from "./lock-holders";
import { isMailPath } from "./paths";
import { assertNotDeleting, loadMutableBucket, type BucketRow } from "../buckets";
import { assertNoUploadCommitting } from "../buckets";

export type FileRow = typeof files.$inferSelect;
export type VersionRow = typeof bucketVersions.$inferSelect;

export interface BlobRef {
  sha256: string;
  size: number;
  contentType: string;
  md5: string;
}

/** A path-level change: new content (blob), or deletion (blob null). */
export interface Change {
  path: string;
  blob: BlobRef | null;
  /** Keep this file id (rename/move within a bucket, restore) when the path is new. */
  fileId?: string;
  /**
   * Write only over what the writer last read: null, the path must hold no file (FILE_EXISTS);
   * a SHA-256, the file must still have those bytes (CONFLICT). Checked in the commit's transaction.
   */
  basedOn?: string | null;
}

/** Pier itself writing on a feature's behalf (inbound mail, templates): no credential. */
export interface SystemWriter {
  kind: "system";
  name: string;
}
export type Writer = Actor | SystemWriter;

export type VersionKind = "upload" | "finalize" | "rename" | "move" | "copy" | "delete" | "reorganize" | "append" | "restore" | "template" | "write";

export interface CommitOptions {
  kind: VersionKind;
  comment?: string;
  restoredFrom?: string;
  /** Create a version even when nothing changed (restore always makes a new latest version). */
  alwaysVersion?: boolean;
  /** The upload session doing this commit (it may write while itself finalizing). */
  sessionId?: string;
  /** Reading out of an archived bucket (the source of a move) is not a mutation of it. */
  allowArchived?: boolean;
}

export interface CommitResult {
  bucket: BucketRow;
  version: VersionRow | null;
  /** Current rows of the paths written (not deleted), in change order. */
  written: FileRow[];
  deleted: string[];
}

const writerId = (w: Writer): string => (w.kind === "system" ? `system:${w.name}` : w.credentialId);

/** Bucket for writing: access and lifecycle checked, in the caller's transaction. */
export function bucketForWrite(
  deps: Deps,
  writer: Writer,
  bucketId: string,
  opts: { allowArchived?: boolean; sessionId?: string } = {},
  tx: DbOrTx,
): BucketRow {
  let bucket: BucketRow;
  if (writer.kind === "system") {
    const row = commitStatements(deps.sqlite, deps.db).bucketById.get({ id: bucketId });
    if (!row) throw new ApiError("BUCKET_NOT_FOUND", `Bucket ${bucketId} was not found.`);
    assertNotDeleting(row);
    if (row.archivedAt && !opts.allowArchived) throw new ApiError("BUCKET_ARCHIVED", `Bucket ${bucketId} is archived and read-only.`);
    bucket = row;
  } else {
    bucket = loadMutableBucket(deps, writer, bucketId, { need: "bucket_write", allowArchived: opts.allowArchived }, tx);
  }
  // Cheap common case first: no upload session is finalizing; the full check builds the error.
  const now = deps.clock.now().toISOString();
  if (commitStatements(deps.sqlite, deps.db).uploadCommitting.get(bucketId, now, opts.sessionId ?? null))
    assertNoUploadCommitting(deps, bucketId, opts.sessionId, tx);
  return bucket;
}

/** Refuse when another credential that can still act holds an unexpired lock on any of these paths. */
export function assertPathsUnlocked(deps: Deps, writer: Writer, bucketId: string, paths: string[], tx: DbOrTx): void {
  const now = deps.clock.now().toISOString();
  const me = writerId(writer);
  // Cheap common case: no file lock in the bucket at all.
  if (!commitStatements(deps.sqlite, deps.db).otherLock.get(bucketId, now, me)) return;
  const live = liveHolders(deps);
  for (let i = 0; i < paths.length; i += 500) {
    const hits = tx
      .select()
      .from(fileLocks)
      .where(and(eq(fileLocks.bucketId, bucketId), inArray(fileLocks.path, paths.slice(i, i + 500)), gt(fileLocks.expiresAt, now), ne(fileLocks.holderId, me)))
      .all();
    // A lock whose holder was revoked, signed out or removed blocks nobody (D257).
    const hit = hits.find((l) => live(l.holderId));
    if (hit) {
      throw fileLockedError(deps, hit, `${hit.path} is locked by another credential: ${hit.message}`);
    }
  }
}

/** FILE_LOCKED for another holder's live lock: Retry-After (and details.retry_after) = time until it expires. */
export function fileLockedError(deps: Deps, lock: { path: string; message: string; expiresAt: string }, message: string): ApiError {
  const retryAfter = Math.max(1, Math.ceil((Date.parse(lock.expiresAt) - deps.clock.now().getTime()) / 1000));
  return new ApiError(
    "FILE_LOCKED",
    message,
    { path: lock.path, lock: { message: lock.message, expires_at: lock.expiresAt }, retry_after: retryAfter },
    retryAfter,
  );
}

/**
 * Refuse a commit that leaves a file and a folder with the same path ("docs" beside "docs/a.txt"):
 * no file system or git tree can hold both, so such a bucket could not be synced, exported to
 * git, downloaded or backed up to a folder without losing one of them (D302). Checked on the
 * state after the whole commit, so one commit may replace a file by a folder or the reverse.
 * Only paths this commit created can clash (an existing path was checked when it was made).
 */
export function assertNoFileFolderClash(bucketId: string, created: string[], st: CommitStatements): void {
  const seen = new Set<string>();
  for (const path of created) {
    const under = st.fileUnder.get(bucketId, ...folderBounds(path));
    if (under) throw fileFolderClash(path, under.path, "folder");
    for (let at = path.indexOf("/"); at > 0; at = path.indexOf("/", at + 1)) {
      const folder = path.slice(0, at);
      if (seen.has(folder)) continue;
      seen.add(folder);
      if (st.fileByPath.get(bucketId, folder)) throw fileFolderClash(path, folder, "file");
    }
  }
}

const fileFolderClash = (path: string, other: string, otherIs: "file" | "folder") =>
  new ApiError(
    "PATH_CONFLICT",
    otherIs === "file"
      ? `${path} would put a file inside ${other}, which is a file; rename or delete ${other} first (in the same reorganize or sync to do both at once).`
      : `${path} is a folder (it holds ${other}); a file cannot have the same path as a folder.`,
    { path, conflicting_path: other },
  );

/**
 * A file lock is taken on a file and released by the file's id, so it goes where the file goes:
 * a path this commit renamed (its file id now at another path of the bucket) takes its locks
 * along, and a deleted path's locks end with it. Left on a path without a file, a lock could be
 * released by nobody and kept everyone else from writing that path for up to a week. Locks of
 * other live holders on these paths refused the commit already; any left are the writer's own
 * or dead ones.
 */
function carryLocks(bucketId: string, log: (typeof fileChanges.$inferInsert)[], tx: Tx): void {
  const removed = log.filter((c) => c.sha256 === null);
  const newPathOf = new Map(log.filter((c) => c.sha256 !== null).map((c) => [c.fileId, c.path]));
  for (let i = 0; i < removed.length; i += 500) {
    const paths = removed.slice(i, i + 500).map((c) => c.path);
    const locks = tx
      .select()
      .from(fileLocks)
      .where(and(eq(fileLocks.bucketId, bucketId), inArray(fileLocks.path, paths)))
      .all();
    if (locks.length === 0) continue;
    tx.delete(fileLocks)
      .where(and(eq(fileLocks.bucketId, bucketId), inArray(fileLocks.path, paths)))
      .run();
    for (const lock of locks) {
      const to = newPathOf.get(removed.find((c) => c.path === lock.path)!.fileId);
      // A lock already on the target (the writer's own, since another's refused the commit) stays.
      if (to)
        tx.insert(fileLocks)
          .values({ ...lock, path: to })
          .onConflictDoNothing()
          .run();
    }
  }
}

const latestQuery = (db: DbOrTx, bucketId: string | Placeholder) =>
  db.select().from(bucketVersions).where(eq(bucketVersions.bucketId, bucketId)).orderBy(desc(bucketVersions.number)).limit(1);
const preparedLatest = preparedPerDb((db) => latestQuery(db, sql.placeholder("bucketId")).prepare());

export function latestVersion(bucketId: string, tx: DbOrTx): VersionRow | undefined {
  return isConnection(tx) ? preparedLatest(tx).get({ bucketId }) : latestQuery(tx, bucketId).get();
}

function assertBasedOn(path: string, basedOn: string | null, current: FileRow | null): void {
  if (basedOn === null && current) throw new ApiError("FILE_EXISTS", `A file already exists at ${path}; open it to change it, or pick another name.`, { path });
  if (basedOn !== null && current?.sha256 !== basedOn)
    throw new ApiError(
      "CONFLICT",
      current ? `${path} changed since it was opened, so nothing was saved.` : `${path} was deleted or moved since it was opened, so nothing was saved.`,
      { path, current_sha256: current?.sha256 ?? null },
    );
}

/**
 * Apply path-level changes to one bucket as one version. Synchronous: blobs must already be in
 * the store. Runs in the caller's transaction when there is one (cross-bucket move/copy).
 */
export function commitChanges(deps: Deps, writer: Writer, bucketId: string, changes: Change[], opts: CommitOptions, db: DbOrTx = deps.db): CommitResult {
  try {
    return transaction(db, (tx) => commitInTx(deps, writer, bucketId, changes, opts, tx));
  } catch (e) {
    // Another process (the CLI, a second server by mistake) holds the write lock past the busy timeout.
    const code = (e as { code?: string })?.code ?? (e as { cause?: { code?: string } })?.cause?.code;
    if (code === "SQLITE_BUSY" || code === "SQLITE_BUSY_SNAPSHOT") {
      throw new ApiError("DATABASE_BUSY_RETRY", "The database is busy with another change; retry shortly.", { retry_after: 1 }, 1);
    }
    throw e;
  }
}

function commitInTx(deps: Deps, writer: Writer, bucketId: string, changes: Change[], opts: CommitOptions, tx: Tx): CommitResult {
  const bucket = bucketForWrite(deps, writer, bucketId, opts, tx);
  // Last change per path wins (callers such as reorganize may touch a path twice).
  const byPath = new Map<string, Change>();
  for (const c of changes) {
    byPath.delete(c.path);
    byPath.set(c.path, c);
  }
  assertPathsUnlocked(deps, writer, bucketId, [...byPath.keys()], tx);

  const now = deps.clock.now().toISOString();
  const st = commitStatements(deps.sqlite, deps.db);
  const prev = st.latestVersion.get(bucketId);
  const number = (prev?.number ?? 0) + 1;
  let fileCount = prev?.fileCount ?? 0;
  let totalBytes = prev?.totalBytes ?? 0;
  const written: FileRow[] = [];
  const deleted: string[] = [];
  const log: (typeof fileChanges.$inferInsert)[] = [];
  const created: string[] = [];

  for (const change of byPath.values()) {
    let current = st.fileByPath.get(bucketId, change.path) as FileRow | null;
    if (change.basedOn !== undefined) assertBasedOn(change.path, change.basedOn, current);
    if (change.blob === null) {
      if (!current) continue;
      st.deleteFile.run(current.id);
      fileCount--;
      totalBytes -= current.size;
      deleted.push(change.path);
      log.push({ bucketId, path: change.path, version: number, fileId: current.id, sha256: null, size: null, contentType: null, md5: null });
      continue;
    }
    const b = change.blob;
    if (current && change.fileId && current.id !== change.fileId && !st.fileIdTaken.get(change.fileId)) {
      // A file renamed or moved onto another (overwrite) replaces it: the path now holds the
      // moved file under its own id, and the overwritten file ends as a delete would end it.
      st.deleteFile.run(current.id);
      fileCount--;
      totalBytes -= current.size;
      current = null;
    }
    if (current && current.sha256 === b.sha256 && current.contentType === b.contentType) {
      written.push(current); // same bytes, same type: nothing to record
      continue;
    }
    let row: FileRow;
    if (current) {
      row = {
        ...current,
        sha256: b.sha256,
        size: b.size,
        contentType: b.contentType,
        md5: b.md5,
        versionCount: current.versionCount + 1,
        bucketVersion: number,
        updatedAt: now,
      };
      st.updateFile.run(row.id, row.sha256, row.size, row.contentType, row.md5, row.versionCount, row.bucketVersion, row.updatedAt);
      totalBytes += b.size - current.size;
    } else {
      const wanted = change.fileId;
      const idFree = wanted ? !st.fileIdTaken.get(wanted) : false;
      row = {
        id: wanted && idFree ? wanted : newId("fil"),
        bucketId,
        path: change.path,
        sha256: b.sha256,
        size: b.size,
        contentType: b.contentType,
        md5: b.md5,
        versionCount: 1,
        bucketVersion: number,
        createdAt: now,
        updatedAt: now,
      };
      st.insertFile.run(row.id, bucketId, row.path, row.sha256, row.size, row.contentType, row.md5, 1, number, now, now);
      // Received mail never leaves Pier (no sync, git export or site takes it): a user's file
      // named like one of its folders must not stop a message from being filed.
      if (!isMailPath(row.path)) created.push(row.path);
      fileCount++;
      totalBytes += b.size;
    }
    written.push(row);
    log.push({ bucketId, path: change.path, version: number, fileId: row.id, sha256: b.sha256, size: b.size, contentType: b.contentType, md5: b.md5 });
  }

  if (created.length) assertNoFileFolderClash(bucketId, created, st);
  if (deleted.length) carryLocks(bucketId, log, tx);
  if (log.length === 0 && !opts.alwaysVersion) return { bucket, version: null, written, deleted };
  for (const c of log) st.insertChange.run(bucketId, c.path, c.version, c.fileId, c.sha256 ?? null, c.size ?? null, c.contentType ?? null, c.md5 ?? null);
  const version: VersionRow = {
    id: newId("bktrv"),
    bucketId,
    number,
    kind: opts.kind,
    comment: opts.comment ?? "",
    author: writerId(writer),
    changedCount: log.length,
    fileCount,
    totalBytes,
    restoredFrom: opts.restoredFrom ?? null,
    createdAt: now,
  };
  st.insertVersion.run(
    version.id,
    bucketId,
    number,
    version.kind,
    version.comment,
    version.author,
    version.changedCount,
    fileCount,
    totalBytes,
    version.restoredFrom,
    now,
  );
  st.bumpRevision.run(bucketId, now);
  // The row as the UPDATE left it: read in this transaction, nothing else changed it since.
  const updated: BucketRow = { ...bucket, revision: bucket.revision + 1, updatedAt: now };
  return { bucket: updated, version, written, deleted };
}
