// The single-file flow: POST /direct_uploads declares one file and returns a signed blob id
// with its PUT descriptor; after the PUT, attaching the signed blob id to the bucket opens and
// finalizes a one-file upload session (one version) in a single transaction.
import { eq } from "drizzle-orm";
import type { Actor, Deps } from "../../../core/context";
import { ApiError } from "../../../core/errors";
import { newId } from "../../../core/ids";
import { uploadEntries, uploadSessions } from "../../../db/schema";
import { transaction } from "../../../db/tx";
import { loadMutableBucket } from "../../buckets";
import { assertAllowedFile } from "../forbidden";
import { commitChanges, type FileRow } from "../commit";
import { normalizePath } from "../paths";
import { alreadyStored, descriptor, entryBytesReady, entryProven, findEntry, insertEntry, validateDeclared, type DeclaredFile } from "./declare";

export const DIRECT_UPLOAD_TTL_MS = 24 * 3600_000;

export interface DirectUploadInput {
  bucket_id: string;
  path: string;
  blob: Omit<DeclaredFile, "path"> & { filename?: string; purpose?: string };
}

const signedBlobId = (deps: Deps, entryId: string) => `${entryId}--${deps.secrets.sign("storage-url", `blob.${entryId}`)}`;

function entryIdOf(deps: Deps, signed: string): string {
  // Entry ids never contain "-"; the base64url signature may.
  const at = signed.indexOf("--");
  const id = at > 0 ? signed.slice(0, at) : "";
  const sig = at > 0 ? signed.slice(at + 2) : "";
  if (!id || !sig || !deps.secrets.verify("storage-url", `blob.${id}`, sig)) {
    throw new ApiError("UPLOAD_NOT_FOUND", "The signed_blob_id is not one Pier issued.");
  }
  return id;
}

export async function createDirectUpload(deps: Deps, actor: Actor, input: DirectUploadInput) {
  if (input.blob.purpose !== undefined && input.blob.purpose !== "bucket_file") {
    throw new ApiError("VALIDATION_FAILED", "blob.purpose must be bucket_file.", { field: "blob.purpose" });
  }
  const f = validateDeclared({ ...input.blob, path: input.path });
  const bucket = loadMutableBucket(deps, actor, input.bucket_id, { need: "bucket_write" });
  const stored = await alreadyStored(deps, actor, f);
  const expiresAt = new Date(deps.clock.now().getTime() + DIRECT_UPLOAD_TTL_MS).toISOString();
  const entry = transaction(deps.db, (tx) => insertEntry(deps, actor, bucket.id, null, f, expiresAt, tx));
  const upload = stored ? null : descriptor(deps, entry);
  return {
    signed_blob_id: signedBlobId(deps, entry.id),
    bucket_id: bucket.id,
    path: entry.path,
    byte_size: entry.size,
    checksum: entry.md5,
    sha256: entry.sha256,
    content_type: entry.contentType,
    upload_required: !stored,
    upload,
    direct_upload: upload,
    attach: { method: "POST", url: `${deps.urls.baseUrl}/api/v1/buckets/${bucket.id}/files`, body: { signed_blob_id: "<signed_blob_id>" } },
    expires_at: expiresAt,
  };
}

const expired = () => new ApiError("UPLOAD_NOT_FOUND", "This direct upload expired; request a new one.");
const notUploaded = () => new ApiError("BLOB_NOT_UPLOADED", "The bytes were not uploaded yet: PUT them to upload.url with upload.headers first.");

/** Attach an uploaded blob at its declared path (or `path`): a one-file session, one version. */
export async function attachBlob(deps: Deps, actor: Actor, bucketId: string, input: { signed_blob_id: string; path?: string }): Promise<FileRow> {
  // The bucket first: a foreign or hidden bucket answers BUCKET_NOT_FOUND like every bucket
  // route, and an archived, deleting or locked one says so before anything about the upload.
  loadMutableBucket(deps, actor, bucketId, { need: "bucket_write" });
  const id = entryIdOf(deps, input.signed_blob_id);
  const entry = findEntry(id, deps.db);
  if (!entry || entry.accountId !== actor.accountId || entry.bucketId !== bucketId) {
    throw new ApiError("UPLOAD_NOT_FOUND", "No pending direct upload with this signed_blob_id for this bucket.");
  }
  if (entry.status === "finalized") throw new ApiError("UPLOAD_ALREADY_FINALIZED", "This signed_blob_id was already attached.");
  if (entry.sessionId !== null) throw new ApiError("UPLOAD_NOT_FOUND", "This id belongs to an upload session; finalize the session instead.");
  if (entry.expiresAt <= deps.clock.now().toISOString()) throw expired();
  const path = input.path === undefined ? entry.path : normalizePath(input.path);
  assertAllowedFile(path, entry.contentType);
  if (!(await entryBytesReady(deps, actor, entry))) throw notUploaded();
  return transaction(deps.db, (tx) => {
    // Re-read while the disk was awaited: the expiry job may have dropped the entry, another
    // attach finalized it, or the content that proved possession left the account.
    const fresh = findEntry(id, tx);
    if (!fresh) throw expired();
    if (fresh.status !== "pending") throw new ApiError("UPLOAD_ALREADY_FINALIZED", "This signed_blob_id was already attached.");
    if (!entryProven(actor, fresh, tx)) throw notUploaded();
    loadMutableBucket(deps, actor, bucketId, { need: "bucket_write" }, tx);
    const now = deps.clock.now().toISOString();
    const sessionId = newId("bus");
    const result = commitChanges(
      deps,
      actor,
      bucketId,
      [{ path, blob: { sha256: entry.sha256, size: entry.size, md5: entry.md5, contentType: entry.contentType } }],
      {
        kind: "upload",
        comment: `direct upload ${path}`,
      },
      tx,
    );
    // The one-file session exists for the record (audit, "which session wrote this version").
    tx.insert(uploadSessions)
      .values({
        id: sessionId,
        bucketId,
        accountId: actor.accountId,
        credentialId: actor.credentialId,
        status: "completed",
        kind: "single",
        deleteMissing: false,
        expectedFileCount: 1,
        committedCount: 1,
        lastVersionId: result.version?.id ?? null,
        createdAt: now,
        updatedAt: now,
        expiresAt: now,
        closedAt: now,
      })
      .run();
    tx.update(uploadEntries).set({ status: "finalized", finalizedAt: now, sessionId }).where(eq(uploadEntries.id, id)).run();
    return result.written[0]!;
  });
}
