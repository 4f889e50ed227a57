// Upload sessions (bus_): declare files in sub-batches, PUT their bytes to signed URLs, commit
// them with finalize_batch (bounded, never prunes) and close with finalize (complete: true
// commits the rest and applies delete_missing once; complete: false cancels). Large finalizes
// commit in bounded chunks, one version each, and answer "pending" until done: every chunk is
// its own transaction, so a crash mid-finalize loses nothing committed and the client's repeat
// of the same call continues where it stopped.
import { and, count, eq, inArray, notInArray } from "drizzle-orm";
import type { Actor, Deps } from "../../../core/context";
import { ApiError } from "../../../core/errors";
import { newId } from "../../../core/ids";
import { files, uploadEntries, uploadSessions } from "../../../db/schema";
import { transaction, type DbOrTx } from "../../../db/tx";
import { loadBucket, loadMutableBucket } from "../../buckets";
import { commitChanges, type Change } from "../commit";
import { commitStatements } from "../commit-statements";
import { alreadyStored, descriptor, entryProven, insertEntry, validateDeclared, type DeclaredFile, type UploadEntryRow } from "./declare";
import { missingUploads, pendingAmong, pendingCount, pendingPage, pendingPathsExcept, uploadedSplit } from "./pending";
import { holdSessionLock, releaseSessionLock } from "./lock";
import { closeSession, expireSession, isLive, slideSession } from "./expiry";
import { uploadLimits } from "./limits";
import { isMailPath } from "../paths";
import { isoAfter } from "../../../core/clock";
import { omittedInTheWay } from "./in-the-way";

export type UploadSessionRow = typeof uploadSessions.$inferSelect;

export { uploadLimits };

export function presentSession(s: UploadSessionRow, extra: Record<string, unknown> = {}) {
  return {
    id: s.id,
    bucket_id: s.bucketId,
    status: s.status,
    delete_missing: s.deleteMissing,
    expected_file_count: s.expectedFileCount,
    committed_files_count: s.committedCount,
    deleted_files_count: s.deletedCount,
    last_version_id: s.lastVersionId,
    created_at: s.createdAt,
    expires_at: s.expiresAt,
    closed_at: s.closedAt,
    ...extra,
  };
}

/** A session of this bucket opened by this credential; anything else does not exist for it. */
function loadSession(deps: Deps, actor: Actor, bucketId: string, sessionId: string, db: DbOrTx = deps.db): UploadSessionRow {
  const s = db
    .select()
    .from(uploadSessions)
    .where(and(eq(uploadSessions.id, sessionId), eq(uploadSessions.bucketId, bucketId)))
    .get();
  if (!s || s.accountId !== actor.accountId || s.credentialId !== actor.credentialId) {
    throw new ApiError("UPLOAD_SESSION_NOT_FOUND", `Upload session ${sessionId} was not found for this bucket and credential.`);
  }
  return s;
}

/** Live session or the precise reason it is not. Expired sessions are expired on the spot. */
function liveSession(deps: Deps, actor: Actor, bucketId: string, sessionId: string, db: DbOrTx): UploadSessionRow {
  const s = loadSession(deps, actor, bucketId, sessionId, db);
  if (s.status === "expired" || (isLive(s) && s.expiresAt <= deps.clock.now().toISOString())) {
    if (s.status !== "expired") expireSession(deps, s, db);
    throw new ApiError("UPLOAD_SESSION_EXPIRED", `Upload session ${sessionId} expired; its lock was released.`);
  }
  if (!isLive(s)) throw new ApiError("UPLOAD_SESSION_CLOSED", `Upload session ${sessionId} is ${s.status}.`, { status: s.status });
  return s;
}

export function createSession(deps: Deps, actor: Actor, bucketId: string, input: { delete_missing?: boolean; expected_file_count?: number }): UploadSessionRow {
  const expected = input.expected_file_count ?? 0;
  if (!Number.isSafeInteger(expected) || expected < 0 || expected > uploadLimits.maxExpectedFiles) {
    throw new ApiError("VALIDATION_FAILED", `expected_file_count must be an integer from 0 to ${uploadLimits.maxExpectedFiles}.`, {
      field: "expected_file_count",
    });
  }
  return transaction(deps.db, (tx) => {
    const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_write" }, tx);
    const now = deps.clock.now();
    const expiresAt = isoAfter(now, uploadLimits.sessionTtlMs);
    const id = newId("bus");
    holdSessionLock(deps, actor, bucket.id, id, expiresAt, tx);
    return tx
      .insert(uploadSessions)
      .values({
        id,
        bucketId: bucket.id,
        accountId: actor.accountId,
        credentialId: actor.credentialId,
        status: "open",
        deleteMissing: input.delete_missing ?? false,
        expectedFileCount: expected,
        kind: "batch",
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
        expiresAt,
      })
      .returning()
      .get();
  });
}

/** The session's state; asking is a call of its client, so a live session slides forward. */
export function getSession(deps: Deps, actor: Actor, bucketId: string, sessionId: string): UploadSessionRow {
  loadBucket(deps, actor, bucketId, "bucket_write");
  return transaction(deps.db, (tx) => slideSession(deps, loadSession(deps, actor, bucketId, sessionId, tx), tx));
}

/**
 * The live session a finalize or finalize_batch call works on, slid forward (with its lock) like
 * on every call: a client repeating finalize for a large session keeps it alive to the end.
 */
function sessionForCommit(deps: Deps, actor: Actor, bucketId: string, sessionId: string): UploadSessionRow {
  // First outside a transaction: a session found expired is expired on the spot (a throw inside
  // the transaction would roll that back).
  loadMutableBucket(deps, actor, bucketId, { need: "bucket_write" });
  liveSession(deps, actor, bucketId, sessionId, deps.db);
  return transaction(deps.db, (tx) => {
    loadMutableBucket(deps, actor, bucketId, { need: "bucket_write" }, tx);
    const s = slideSession(deps, liveSession(deps, actor, bucketId, sessionId, tx), tx, true);
    holdSessionLock(deps, actor, bucketId, sessionId, s.expiresAt, tx);
    return s;
  });
}

/** Declare a sub-batch; answers descriptors for the files whose bytes Pier does not have. */
export async function declareUploads(deps: Deps, actor: Actor, bucketId: string, sessionId: string, declared: DeclaredFile[]) {
  if (declared.length === 0 || declared.length > uploadLimits.maxFilesPerDescriptorCall) {
    throw new ApiError("VALIDATION_FAILED", `Send 1 to ${uploadLimits.maxFilesPerDescriptorCall} files per call (reference clients send 12).`, {
      field: "files",
    });
  }
  const valid = declared.map(validateDeclared);
  const seen = new Set<string>();
  for (const f of valid) {
    if (seen.has(f.path)) throw new ApiError("VALIDATION_FAILED", `${f.path} is listed twice in this call.`, { field: "files", path: f.path });
    seen.add(f.path);
  }
  loadBucket(deps, actor, bucketId, "bucket_write");
  const stored = await Promise.all(valid.map((f) => alreadyStored(deps, actor, f)));
  const entries = transaction(deps.db, (tx) => {
    loadMutableBucket(deps, actor, bucketId, { need: "bucket_write" }, tx);
    const session = liveSession(deps, actor, bucketId, sessionId, tx);
    if (session.status === "finalizing") {
      throw new ApiError("UPLOAD_SESSION_CLOSED", `Upload session ${sessionId} is finalizing; start a new session for more files.`, { status: session.status });
    }
    // Every call slides the session (and its lock) forward. Its entries live as long as it does:
    // none of them is touched here, so a declare costs the same in a session of any size.
    const { expiresAt } = slideSession(deps, session, tx, true);
    holdSessionLock(deps, actor, bucketId, sessionId, expiresAt, tx);
    // Re-declaring a pending path replaces it (the client changed the file meanwhile).
    tx.delete(uploadEntries)
      .where(and(eq(uploadEntries.sessionId, sessionId), eq(uploadEntries.status, "pending"), inArray(uploadEntries.path, [...seen])))
      .run();
    return valid.map((f) => insertEntry(deps, actor, bucketId, sessionId, f, expiresAt, tx));
  });
  return {
    files: entries.map((e, i) => ({ id: e.id, path: e.path, byte_size: e.size, sha256: e.sha256, upload_required: !stored[i] })),
    uploads: entries.filter((_, i) => !stored[i]).map((e) => ({ id: e.id, path: e.path, byte_size: e.size, upload: descriptor(deps, e) })),
  };
}

const toChange = (e: UploadEntryRow): Change => ({ path: e.path, blob: { sha256: e.sha256, size: e.size, md5: e.md5, contentType: e.contentType } });

const incomplete = (missing: UploadEntryRow[], missingCount = missing.length) =>
  new ApiError("UPLOAD_INCOMPLETE", `${missingCount} declared file(s) have no bytes yet; PUT them, then finalize again.`, {
    missing: missing.slice(0, 50).map((e) => e.path),
    missing_count: missingCount,
  });

/**
 * Commit `entries` (re-checked inside the transaction: still pending, and proven) plus
 * `deletions`, mark them finalized, and update the session counters. One transaction, one version.
 * Entries without proof of possession are skipped, or with `refuseUnproven` refuse the whole
 * commit: this is the one place every commit passes through, so the proof is checked here and
 * not only by callers, whose checks ran before an await and may be stale.
 */
function commitEntries(
  deps: Deps,
  actor: Actor,
  session: UploadSessionRow,
  ids: Set<string>,
  opts: { applyDeleteMissing: boolean; close: boolean; finalizing?: boolean; refuseUnproven?: boolean },
) {
  return transaction(deps.db, (tx) => {
    // Re-checked here: the bucket may have been deleted or archived while the caller awaited I/O.
    loadMutableBucket(deps, actor, session.bucketId, { need: "bucket_write" }, tx);
    const s = liveSession(deps, actor, session.bucketId, session.id, tx);
    const chosen = pendingAmong(s.id, [...ids], tx);
    const unproven = chosen.filter((e) => !entryProven(actor, e, tx));
    if (unproven.length && opts.refuseUnproven) throw incomplete(unproven);
    const entries = unproven.length ? chosen.filter((e) => !unproven.includes(e)) : chosen;
    if (opts.close) {
      // Declared after the caller read the session (while it awaited the disk): closing now would
      // leave it behind uncommitted. The repeat of the call sees and checks it.
      const unseen = pendingCount(s.id, tx, [...ids]);
      if (unseen) {
        throw new ApiError("UPLOAD_INCOMPLETE", `${unseen} file(s) were declared while this finalize ran; finalize again.`, {
          missing: pendingPathsExcept(s.id, [...ids], 50, tx),
          missing_count: unseen,
        });
      }
    }
    const changes = entries.map(toChange);
    if (s.deleteMissing && !opts.applyDeleteMissing) changes.push(...omittedInTheWay(commitStatements(deps.sqlite, deps.db), s, entries, tx));
    if (opts.applyDeleteMissing && s.deleteMissing) {
      // Paths of the sync = every path declared in this session (finalized in earlier batches too).
      const keep = tx.select({ path: uploadEntries.path }).from(uploadEntries).where(eq(uploadEntries.sessionId, s.id));
      const gone = tx
        .select({ path: files.path })
        .from(files)
        .where(and(eq(files.bucketId, s.bucketId), notInArray(files.path, keep)))
        .all();
      // Received mail is not part of any local folder: a sync never deletes it (explicit deletes do).
      for (const g of gone) if (!isMailPath(g.path)) changes.push({ path: g.path, blob: null });
    }
    const result = commitChanges(deps, actor, s.bucketId, changes, { kind: "finalize", sessionId: s.id, comment: `upload session ${s.id}` }, tx);
    const now = deps.clock.now().toISOString();
    if (entries.length) {
      tx.update(uploadEntries)
        .set({ status: "finalized", finalizedAt: now })
        .where(
          inArray(
            uploadEntries.id,
            entries.map((e) => e.id),
          ),
        )
        .run();
    }
    const updated = tx
      .update(uploadSessions)
      .set({
        committedCount: s.committedCount + entries.length,
        deletedCount: s.deletedCount + result.deleted.length,
        lastVersionId: result.version?.id ?? s.lastVersionId,
        updatedAt: now,
        // "finalizing" is set in the same transaction as the first chunk: a failed chunk leaves the session open.
        ...(opts.close ? { status: "completed" as const, closedAt: now } : { status: opts.finalizing ? ("finalizing" as const) : s.status }),
      })
      .where(eq(uploadSessions.id, s.id))
      .returning()
      .get()!;
    if (opts.close) releaseSessionLock(deps, s.bucketId, tx);
    return { session: updated, version: result.version, finalized: entries.length, deleted: result.deleted.length };
  });
}

/**
 * Commit up to `limit` uploaded files; files still waiting for bytes stay pending. Never prunes.
 * Looks at the next finalizeChunk pending files in declare order, not the whole session: a call
 * costs the same however many files the session holds.
 */
/** How many chunks of pending files one finalize_batch looks through for files whose bytes arrived. */
const FINALIZE_BATCH_PAGES = 8;

export async function finalizeBatch(deps: Deps, actor: Actor, bucketId: string, sessionId: string, limit: number) {
  const session = sessionForCommit(deps, actor, bucketId, sessionId);
  const want = Math.max(1, Math.min(limit, uploadLimits.finalizeChunk));
  const chosen: UploadEntryRow[] = [];
  const missing: UploadEntryRow[] = [];
  // Files uploaded out of declare order are found behind files still waiting for their bytes, a
  // bounded number of pages on: a client sending in parallel sees progress, and no call looks at
  // more than FINALIZE_BATCH_PAGES chunks of the session.
  let after: UploadEntryRow | undefined;
  for (let pages = 0; chosen.length < want && pages < FINALIZE_BATCH_PAGES; pages++) {
    const page = pendingPage(session.id, uploadLimits.finalizeChunk, deps.db, after);
    if (page.length === 0) break;
    const split = await uploadedSplit(deps, actor, page);
    chosen.push(...split.ready.slice(0, want - chosen.length));
    missing.push(...split.missing);
    if (page.length < uploadLimits.finalizeChunk) break;
    after = page[page.length - 1];
  }
  const r = commitEntries(deps, actor, session, new Set(chosen.map((e) => e.id)), { applyDeleteMissing: false, close: false });
  const remaining = pendingCount(sessionId, deps.db);
  return {
    upload_session: presentSession(r.session),
    finalized_files_count: r.finalized,
    version_id: r.version?.id ?? null,
    remaining_files_count: remaining,
    waiting_for_upload: missing.slice(0, 50).map((e) => e.path),
  };
}

export type FinalizeResult = { pending: false; data: Record<string, unknown> } | { pending: true; retryAfter: number; data: Record<string, unknown> };

/** finalize { complete }: see the module comment. Repeat the call while it answers pending. */
export async function finalizeSession(deps: Deps, actor: Actor, bucketId: string, sessionId: string, complete: boolean): Promise<FinalizeResult> {
  loadBucket(deps, actor, bucketId, "bucket_write");
  const current = loadSession(deps, actor, bucketId, sessionId);
  // Repeats after success are answered, not refused: clients retry finalize on timeouts.
  if (current.status === "completed" && complete) return completedAnswer(current);
  if (current.status === "cancelled" && !complete) return { pending: false, data: { upload_session: presentSession(current), finalize_pending: false } };
  if (!complete) return { pending: false, data: { upload_session: presentSession(cancelSession(deps, actor, bucketId, sessionId)), finalize_pending: false } };

  const session = sessionForCommit(deps, actor, bucketId, sessionId);
  // This chunk, and whether it is the last, as they are before the checks await the disk: a file
  // declared meanwhile is not in it, and stops the close (see commitEntries).
  const next = pendingPage(session.id, uploadLimits.finalizeChunk + 1, deps.db);
  if (session.status === "open") await startFinalizing(deps, actor, session);
  const chunk = next.slice(0, uploadLimits.finalizeChunk);
  const last = next.length <= uploadLimits.finalizeChunk;
  let r: ReturnType<typeof commitEntries>;
  try {
    r = commitEntries(deps, actor, session, new Set(chunk.map((e) => e.id)), {
      applyDeleteMissing: last,
      close: last,
      finalizing: !last,
      refuseUnproven: true,
    });
  } catch (e) {
    // A concurrent repeat of this call (client retry) finished the session first: same answer.
    // (Only then is the session re-read: after a bucket delete it is gone, and the delete's answer stands.)
    const now = e instanceof ApiError && e.code === "UPLOAD_SESSION_CLOSED" ? loadSession(deps, actor, bucketId, sessionId) : null;
    if (now?.status === "completed") return completedAnswer(now);
    throw e;
  }
  if (!last) {
    return {
      pending: true,
      retryAfter: uploadLimits.finalizeRetryAfterS,
      data: {
        upload_session: presentSession(r.session),
        finalize_pending: true,
        remaining_files_count: pendingCount(session.id, deps.db),
        retry_after: uploadLimits.finalizeRetryAfterS,
      },
    };
  }
  return completedAnswer(r.session);
}

/** The answer of a completed finalize: the same to the call that completed it and to every repeat. */
const completedAnswer = (s: UploadSessionRow): FinalizeResult => ({
  pending: false,
  data: { upload_session: presentSession(s), finalize_pending: false, remaining_files_count: 0, version_id: s.lastVersionId },
});

/**
 * The checks of a first finalize call: everything expected was declared and has its bytes.
 * A file declared while this awaits the disk was not checked here: commitEntries checks every
 * entry's proof again, and refuses to close the session over a file it did not see.
 */
async function startFinalizing(deps: Deps, actor: Actor, session: UploadSessionRow): Promise<void> {
  const declared = deps.db.select({ n: count() }).from(uploadEntries).where(eq(uploadEntries.sessionId, session.id)).get()!.n;
  if (declared < session.expectedFileCount) {
    throw new ApiError(
      "UPLOAD_INCOMPLETE",
      `The session expects ${session.expectedFileCount} files but ${declared} were declared; declare and upload the rest, then finalize.`,
      {
        expected_file_count: session.expectedFileCount,
        declared_files_count: declared,
      },
    );
  }
  if (session.deleteMissing && declared === 0) {
    // A sync that declared nothing would delete the whole bucket: almost surely a client bug.
    throw new ApiError(
      "UPLOAD_INCOMPLETE",
      "A delete_missing session that declared no files would delete every file; declare the folder's files, or delete with reorganize.",
      {
        expected_file_count: session.expectedFileCount,
        declared_files_count: 0,
      },
    );
  }
  const missing = await missingUploads(deps, actor, session.id);
  if (missing.count) throw incomplete(missing.first, missing.count);
}

/** complete: false — drop unfinalized staged uploads, keep finalized batches, release the lock. */
export function cancelSession(deps: Deps, actor: Actor, bucketId: string, sessionId: string): UploadSessionRow {
  return transaction(deps.db, (tx) => {
    const s = liveSession(deps, actor, bucketId, sessionId, tx);
    return closeSession(deps, s, "cancelled", tx);
  });
}
