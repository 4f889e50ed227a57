// A declared upload: the client promises path, size, MD5, sha256 and type; Pier records an
// upload entry and answers with a signed PUT descriptor, or with none when the account
// already stores those bytes (dedupe).
import { and, eq, isNotNull } from "drizzle-orm";
import type { Actor, Deps } from "../../../core/context";
import { ApiError } from "../../../core/errors";
import { newId } from "../../../core/ids";
import { buckets, fileChanges, files, uploadEntries } from "../../../db/schema";
import { transaction, type DbOrTx } from "../../../db/tx";
import { assertAllowedFile, normalizeContentType } from "../forbidden";
import { normalizePath } from "../paths";
import { expiresIn, PUT_URL_TTL_S, signToken, storageUrl } from "../storage/tokens";

/** Largest single file Pier accepts (documented in docs/files.md). */
export const MAX_FILE_BYTES = 10 * 1024 ** 3;

export type UploadEntryRow = typeof uploadEntries.$inferSelect;

export interface DeclaredFile {
  path: string;
  byte_size: number;
  checksum: string;
  content_type?: string;
  sha256: string;
}

export interface ValidFile {
  path: string;
  size: number;
  md5: string;
  sha256: string;
  contentType: string;
}

/** Validate one declared file; throws a field-specific 4xx. */
export function validateDeclared(f: DeclaredFile): ValidFile {
  const path = normalizePath(f.path);
  if (!Number.isSafeInteger(f.byte_size) || f.byte_size < 0) {
    throw new ApiError("VALIDATION_FAILED", `${path}: byte_size must be a non-negative integer.`, { field: "byte_size", path });
  }
  if (f.byte_size > MAX_FILE_BYTES) throw new ApiError("FILE_TOO_LARGE", `${path}: files are at most ${MAX_FILE_BYTES} bytes.`, { path, max_bytes: MAX_FILE_BYTES });
  if (!/^[A-Za-z0-9+/]{22}==$/.test(f.checksum ?? "")) {
    throw new ApiError("VALIDATION_FAILED", `${path}: checksum must be the base64 MD5 of the bytes (24 characters, as in Content-MD5).`, { field: "checksum", path });
  }
  const sha256 = (f.sha256 ?? "").toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new ApiError("VALIDATION_FAILED", `${path}: sha256 must be 64 hex characters.`, { field: "sha256", path });
  const contentType = normalizeContentType(f.content_type);
  assertAllowedFile(path, contentType);
  return { path, size: f.byte_size, md5: f.checksum, sha256, contentType };
}

/**
 * Content this account already holds: a current file, a past version or a received upload in
 * one of its buckets. Only such content proves possession; a blob stored by another account
 * proves nothing about this one (issue: reading another account's file by its hash).
 */
function heldByAccount(db: DbOrTx, accountId: string, sha256: string): { md5: string; size: number } | undefined {
  return db.select({ md5: files.md5, size: files.size }).from(files).innerJoin(buckets, eq(buckets.id, files.bucketId))
    .where(and(eq(files.sha256, sha256), eq(buckets.accountId, accountId))).limit(1).get()
    ?? db.select({ md5: fileChanges.md5, size: fileChanges.size }).from(fileChanges).innerJoin(buckets, eq(buckets.id, fileChanges.bucketId))
      .where(and(eq(fileChanges.sha256, sha256), eq(buckets.accountId, accountId))).limit(1).get() as { md5: string; size: number } | undefined
    ?? db.select({ md5: uploadEntries.md5, size: uploadEntries.size }).from(uploadEntries)
      .where(and(eq(uploadEntries.sha256, sha256), eq(uploadEntries.accountId, accountId), isNotNull(uploadEntries.receivedAt))).limit(1).get();
}

/**
 * Whether the client can skip the PUT: this account already holds those bytes AND the store
 * still has them. Dedupe across accounts would let anyone confirm (and then attach) someone
 * else's file by its hash, so it stays within the account; for everyone else the answer is
 * "upload", whether or not the bytes exist elsewhere, and the store dedupes on disk afterwards.
 */
export async function alreadyStored(deps: Deps, accountId: string, f: ValidFile): Promise<boolean> {
  const known = heldByAccount(deps.db, accountId, f.sha256);
  if (!known) return false;
  if (known.size !== f.size || known.md5 !== f.md5) {
    throw new ApiError("UPLOAD_CHECKSUM_MISMATCH", `${f.path}: byte_size or checksum does not match the declared sha256.`, { path: f.path });
  }
  return (await deps.blobs.size(f.sha256)) === f.size;
}

/**
 * Whether a declared entry may be committed: its own bytes were PUT and verified, or its
 * account already held the same content; and the store has them. An entry without proof is
 * answered "not uploaded" without looking at the store, so the answer (and its timing) is the
 * same whether or not another account stored those bytes.
 */
export async function entryBytesReady(deps: Deps, e: UploadEntryRow): Promise<boolean> {
  if (!entryProven(e, deps.db)) return false;
  return (await deps.blobs.size(e.sha256)) === e.size;
}

/**
 * The possession half of entryBytesReady, synchronous so that a commit can re-check it inside
 * its own transaction: whatever was checked before an await may have changed since.
 */
export function entryProven(e: UploadEntryRow, db: DbOrTx): boolean {
  if (e.receivedAt !== null) return true;
  const known = heldByAccount(db, e.accountId, e.sha256);
  return known !== undefined && known.size === e.size && known.md5 === e.md5;
}

/** Record that the bytes of an entry arrived through its own signed PUT (proof of possession). */
export function markReceived(deps: Deps, entryId: string): void {
  transaction(deps.db, (tx) => tx.update(uploadEntries).set({ receivedAt: deps.clock.now().toISOString() }).where(eq(uploadEntries.id, entryId)).run());
}

export function insertEntry(deps: Deps, actor: Actor, bucketId: string, sessionId: string | null, f: ValidFile, expiresAt: string, db: DbOrTx): UploadEntryRow {
  return db.insert(uploadEntries).values({
    id: newId("upl"), sessionId, bucketId, accountId: actor.accountId, credentialId: actor.credentialId, path: f.path,
    sha256: f.sha256, size: f.size, md5: f.md5, contentType: f.contentType, status: "pending",
    createdAt: deps.clock.now().toISOString(), expiresAt,
  }).returning().get();
}

/** The PUT descriptor for an entry: signed URL and the headers to send verbatim. */
export function descriptor(deps: Deps, e: UploadEntryRow) {
  const exp = Math.min(expiresIn(deps, PUT_URL_TTL_S), Math.floor(Date.parse(e.expiresAt) / 1000));
  const token = signToken(deps, "put", { u: e.id, a: e.accountId, b: e.bucketId, s: e.size, m: e.md5, h: e.sha256, t: e.contentType, e: exp });
  return {
    method: "PUT" as const,
    url: storageUrl(deps, token),
    headers: { "Content-Type": e.contentType, "Content-MD5": e.md5 },
    expires_at: new Date(exp * 1000).toISOString(),
  };
}
