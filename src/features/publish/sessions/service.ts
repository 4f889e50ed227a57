// Publish sessions (pus_): publish a local folder in three steps. Create compares the manifest
// with the bucket's current files and hands out upload descriptors only for changed content;
// the client PUTs those bytes to Pier's storage endpoint; finalize writes the files (and, with
// delete_missing, deletes omitted ones) and queues the publication in ONE transaction.
import { and, eq, lte, sql } from "drizzle-orm";
import type { Actor, Deps } from "../../../core/context";
import { ApiError } from "../../../core/errors";
import { newId } from "../../../core/ids";
import { publishSessions, type DeployTrigger, type PublishSessionFile } from "../../../db/schema";
import { transaction } from "../../../db/tx";
import { assertVisibilityUnlocked, effectiveScope, hasAccountWideAdmin, loadBucket, loadMutableBucket, type BucketRow } from "../../buckets";
import { bucketRevision, createBucket, findActiveBucketByTitle } from "../../buckets";
import { commitChanges, currentFiles, type Change } from "../../files";
import { alreadyStored, descriptor, entryBytesReady, findEntry, insertEntry, markEntriesFinalized, validateDeclared, type UploadEntryRow } from "../../files";
import { isMailPath } from "../../mail";
import { takePublishToken, takeUploadToken } from "../limits";
import { assertPublishAllowed } from "../policy";
import { presentPublication } from "../present";
import { commitPublish, findPublication, preparePublish } from "../accept-publish";
import type { PublishInput } from "../model";
import type { CreatePublishSessionInput } from "./model";

export const PUBLISH_SESSION_TTL_MS = 3600_000;
type SessionRow = typeof publishSessions.$inferSelect;

// The site password is not among them: it is kept sealed under its own key (D261).
const PUBLISH_KEYS = [
  "site_mode",
  "site_type",
  "access_mode",
  "regenerate_password",
  "expires_at",
  "publication_root_directory",
  "slug_suggestions",
  "title",
  "tracking_enabled",
  "publication_analytics_enabled",
  "publication_client_events_enabled",
  "analytics_enabled",
  "client_events_enabled",
  "expires_in_minutes",
  "clean_urls",
] as const;

/**
 * A site password given to a session waits for finalize sealed (AES-256-GCM under the instance
 * secret, bound to the session's id), never in clear: publish_request outlives the session by a
 * week, and the publication itself keeps only an argon2id hash and a sealed copy.
 */
const SEALED_PASSWORD = "password_sealed";
const passwordAad = (sessionId: string) => `publish-session-password:${sessionId}`;
const sealPassword = (deps: Deps, sessionId: string, password: string) => deps.secrets.seal("site-cookie", password, passwordAad(sessionId));

/** The publish request finalize hands to preparePublish: the saved fields, the password opened. */
function savedRequest(deps: Deps, s: SessionRow): PublishInput {
  const { [SEALED_PASSWORD]: sealed, ...rest } = s.publishRequest;
  const input = rest as PublishInput;
  if (typeof sealed === "string") input.password = deps.secrets.open("site-cookie", sealed, passwordAad(s.id));
  return input;
}

/** publish_request without the sealed password: what a finalized or expired session keeps. */
function withoutPassword(request: Record<string, unknown>): Record<string, unknown> {
  const { [SEALED_PASSWORD]: _sealed, ...rest } = request;
  return rest;
}

/** bucket_id, else the account's active bucket titled bucket_title, else a new one; mutable by the actor. */
function resolveBucket(deps: Deps, actor: Actor, input: CreatePublishSessionInput): BucketRow {
  if (input.bucket_id) return loadMutableBucket(deps, actor, input.bucket_id, { need: "bucket_admin" });
  if (!input.bucket_title) throw new ApiError("VALIDATION_FAILED", "Give bucket_id, or bucket_title to pick or create the bucket.", { field: "bucket_title" });
  const title = input.bucket_title.trim();
  const found = findActiveBucketByTitle(actor.accountId, title, deps.db);
  if (found) return loadMutableBucket(deps, actor, found.id, { need: "bucket_admin" });
  if (!hasAccountWideAdmin(actor))
    throw new ApiError("FORBIDDEN", "Creating a bucket needs account-wide bucket_admin access; pass bucket_id instead.", {
      required_scope: "bucket_admin",
      bucket_access: "all",
    });
  return createBucket(deps, actor, { title, description: input.bucket_description, tag_paths: input.bucket_tag_paths });
}

function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

export async function createPublishSession(deps: Deps, actor: Actor, input: CreatePublishSessionInput) {
  takeUploadToken(deps, actor);
  const kind = input.preview ? "preview" : "main";
  if (!input.preview && input.expires_in_minutes !== undefined)
    throw new ApiError("VALIDATION_FAILED", "expires_in_minutes is for previews (preview: true).", { field: "expires_in_minutes" });
  // Validate the whole manifest before anything is created.
  const declared = input.files.map((f) => validateDeclared(f));
  const seen = new Set<string>();
  for (const f of declared) {
    if (seen.has(f.path)) throw new ApiError("VALIDATION_FAILED", `Duplicate path "${f.path}" in the manifest.`, { field: "files", path: f.path });
    seen.add(f.path);
  }
  const bucket = resolveBucket(deps, actor, input);
  assertVisibilityUnlocked(bucket);
  // Learn about the plan before uploading anything (finalize checks again).
  const existing = findPublication(bucket.id, kind, deps.db);
  assertPublishAllowed(
    deps,
    { accountId: bucket.accountId, bucketId: bucket.id, kind, accessMode: input.access_mode ?? existing?.accessMode ?? "public" },
    deps.db,
  );

  const current = new Map(currentFiles(bucket.id, deps.db).map((f) => [f.path, f]));
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + PUBLISH_SESSION_TTL_MS).toISOString();
  const toUpload: typeof declared = [];
  let added = 0,
    modified = 0,
    unchanged = 0,
    uploadBytes = 0;
  for (const f of declared) {
    const cur = current.get(f.path);
    if (cur && cur.sha256 === f.sha256) {
      unchanged++;
      continue;
    }
    if (cur) modified++;
    else added++;
    if (!(await alreadyStored(deps, actor, f))) {
      toUpload.push(f);
      uploadBytes += f.size;
    }
  }
  const deleteMissing = input.delete_missing ?? true;
  const removed = deleteMissing ? [...current.keys()].filter((p) => !seen.has(p) && !isMailPath(p)).length : 0;
  const request: Record<string, unknown> = {};
  for (const k of PUBLISH_KEYS) if (input[k] !== undefined) request[k] = input[k];

  const id = newId("pus");
  if (input.password !== undefined) request[SEALED_PASSWORD] = sealPassword(deps, id, input.password);
  const { session, entries } = transaction(deps.db, (tx) => {
    const entries = new Map<string, UploadEntryRow>();
    for (const f of toUpload) entries.set(f.path, insertEntry(deps, actor, bucket.id, null, f, expiresAt, tx));
    const sessionFiles: PublishSessionFile[] = declared.map((f) => {
      // Content the bucket already holds keeps its own size and MD5: nothing ever checks the
      // manifest's against the bytes for a file that is not uploaded.
      const cur = current.get(f.path);
      const known = cur?.sha256 === f.sha256 ? cur : f;
      return { path: f.path, size: known.size, md5: known.md5, sha256: f.sha256, contentType: f.contentType, entryId: entries.get(f.path)?.id ?? null };
    });
    const session = tx
      .insert(publishSessions)
      .values({
        id,
        accountId: bucket.accountId,
        bucketId: bucket.id,
        credentialId: actor.credentialId,
        kind,
        status: "pending",
        bucketRevision: bucket.revision,
        deleteMissing,
        files: sessionFiles,
        publishRequest: request,
        createdAt: now.toISOString(),
        expiresAt,
      })
      .returning()
      .get();
    return { session, entries };
  });
  const uploads = [...entries.values()].map((e) => ({ path: e.path, byte_size: e.size, sha256: e.sha256, upload: descriptor(deps, e) }));
  const summary =
    `${kind === "preview" ? "Preview of" : "Publish of"} "${bucket.title}": ${declared.length} files — ${added} new, ${modified} changed, ${unchanged} unchanged` +
    `${deleteMissing ? `, ${removed} to delete` : ""}; ${uploads.length} to upload (${humanBytes(uploadBytes)}).`;
  return {
    publish_session: presentSession(deps, session, uploads),
    bucket: { id: bucket.id, title: bucket.title },
    finalize: { method: "POST", url: `${deps.urls.baseUrl}/api/v1/publish_sessions/${id}/finalize` },
    deploy_summary: summary,
    changes: { added, modified, unchanged, deleted: removed, upload_count: uploads.length, upload_bytes: uploadBytes },
  };
}

/**
 * A manifest file is ready when its upload entry's bytes are proven and stored; a file with no
 * entry was unchanged or already held by the account at create time and needs only the store.
 */
async function sessionFileReady(deps: Deps, actor: Actor, f: PublishSessionFile): Promise<boolean> {
  if (f.entryId === null) return (await deps.blobs.size(f.sha256)) === f.size;
  const e = findEntry(f.entryId, deps.db);
  return e !== undefined && (await entryBytesReady(deps, actor, e));
}

function presentSession(deps: Deps, s: SessionRow, uploads: unknown[] | undefined) {
  return {
    id: s.id,
    status: s.status,
    kind: s.kind,
    bucket_id: s.bucketId,
    delete_missing: s.deleteMissing,
    files: s.files.length,
    ...(uploads ? { uploads } : {}),
    publication_id: s.publicationId,
    created_at: s.createdAt,
    expires_at: s.expiresAt,
    finalized_at: s.finalizedAt,
  };
}

function loadSession(deps: Deps, actor: Actor, id: string): SessionRow {
  const s = deps.db
    .select()
    .from(publishSessions)
    .where(and(eq(publishSessions.id, id), eq(publishSessions.accountId, actor.accountId)))
    .get();
  // Another account's session, or one whose bucket the key cannot see: not found, no leak.
  if (!s || effectiveScope(actor, s.bucketId) === null) throw new ApiError("PUBLISH_SESSION_NOT_FOUND", `Publish session ${id} was not found.`);
  loadBucket(deps, actor, s.bucketId, "bucket_admin");
  return s;
}

/** Why a session cannot be finalized (or refreshed) now, checked again inside the transaction. */
function assertPending(deps: Deps, s: SessionRow, revision: number): void {
  if (s.status !== "pending")
    throw new ApiError("PUBLISH_SESSION_NOT_PENDING", `Publish session ${s.id} is ${s.status}.`, { status: s.status, publication_id: s.publicationId });
  if (s.expiresAt <= deps.clock.now().toISOString())
    throw new ApiError("PUBLISH_SESSION_EXPIRED", `Publish session ${s.id} expired at ${s.expiresAt}.`, { expires_at: s.expiresAt });
  if (revision !== s.bucketRevision)
    throw new ApiError("PUBLISH_SESSION_STALE", "The bucket changed since this publish session was created.", {
      bucket_revision: revision,
      session_revision: s.bucketRevision,
    });
}

export async function finalizePublishSession(deps: Deps, actor: Actor, id: string, trigger: DeployTrigger = "api") {
  const s = loadSession(deps, actor, id);
  const bucket = loadBucket(deps, actor, s.bucketId, "bucket_admin");
  assertPending(deps, s, bucket.revision);
  // Every byte must be in storage before anything is written (503: upload, then finalize again),
  // and every uploaded file proven by its own PUT: a blob another account stored does not count.
  const missing: string[] = [];
  for (const f of s.files) if (!(await sessionFileReady(deps, actor, f))) missing.push(f.path);
  if (missing.length)
    throw new ApiError(
      "PUBLISH_FILES_MISSING",
      `${missing.length} file(s) were not uploaded.`,
      { missing: missing.slice(0, 100), missing_count: missing.length, retry_after: 1 },
      1,
    );
  takePublishToken(deps, actor);
  const prepared = await preparePublish(deps, actor, s.bucketId, savedRequest(deps, s), s.kind, { skipRateLimit: true, trigger }, deps.db);

  const result = transaction(deps.db, (tx) => {
    const fresh = tx.select().from(publishSessions).where(eq(publishSessions.id, id)).get()!;
    assertPending(deps, fresh, bucketRevision(s.bucketId, tx) ?? -1);
    const changes: Change[] = s.files.map((f) => ({ path: f.path, blob: { sha256: f.sha256, size: f.size, md5: f.md5, contentType: f.contentType } }));
    if (s.deleteMissing) {
      const keep = new Set(s.files.map((f) => f.path));
      for (const row of currentFiles(s.bucketId, tx)) {
        // Received mail is never part of the local folder: publishing never deletes it.
        if (!keep.has(row.path) && !isMailPath(row.path)) changes.push({ path: row.path, blob: null });
      }
    }
    const commit = commitChanges(deps, actor, s.bucketId, changes, { kind: "finalize", comment: `publish session ${s.id}` }, tx);
    const now = deps.clock.now().toISOString();
    const entryIds = s.files.map((f) => f.entryId).filter((e): e is string => e !== null);
    markEntriesFinalized(entryIds, now, tx);
    const pub = commitPublish(deps, prepared, tx);
    const session = tx
      .update(publishSessions)
      .set({ status: "finalized", finalizedAt: now, publicationId: pub.id, publishRequest: withoutPassword(fresh.publishRequest) })
      .where(eq(publishSessions.id, id))
      .returning()
      .get()!;
    return { pub, session, commit };
  });
  return {
    publish_session: presentSession(deps, result.session, undefined),
    publication: presentPublication(deps, actor, result.pub, { immediate: true }),
    version_id: result.commit.version?.id ?? null,
    files_written: result.commit.written.length,
    files_deleted: result.commit.deleted.length,
  };
}

/** New signed PUT URLs for the session's uploads whose bytes are not stored yet. */
export async function refreshUploads(deps: Deps, actor: Actor, id: string) {
  takeUploadToken(deps, actor);
  const s = loadSession(deps, actor, id);
  assertPending(deps, s, bucketRevision(s.bucketId, deps.db) ?? -1);
  const uploads = [];
  for (const f of s.files) {
    if (!f.entryId) continue;
    const e = findEntry(f.entryId, deps.db);
    if (e && !(await entryBytesReady(deps, actor, e))) uploads.push({ path: e.path, byte_size: e.size, sha256: e.sha256, upload: descriptor(deps, e) });
  }
  return { publish_session: presentSession(deps, s, uploads) };
}

export const PUBLISH_SESSION_KEEP_MS = 7 * 24 * 3600_000;

/**
 * Sessions finalized or expired a week ago are forgotten (their upload entries expire on their
 * own); an expired session's sealed site password goes at once, since nothing can use it again.
 */
export function prunePublishSessions(deps: Deps): { pruned_sessions: number } {
  const now = deps.clock.now();
  const cutoff = new Date(now.getTime() - PUBLISH_SESSION_KEEP_MS).toISOString();
  const n = transaction(deps.db, (tx) => {
    tx.update(publishSessions)
      .set({ publishRequest: sql`json_remove(${publishSessions.publishRequest}, ${`$.${SEALED_PASSWORD}`})` })
      .where(and(lte(publishSessions.expiresAt, now.toISOString()), sql`json_type(${publishSessions.publishRequest}, ${`$.${SEALED_PASSWORD}`}) IS NOT NULL`))
      .run();
    return tx.delete(publishSessions).where(lte(publishSessions.expiresAt, cutoff)).returning({ id: publishSessions.id }).all().length;
  });
  return { pruned_sessions: n };
}
