// A declared upload: the client promises path, size, MD5, sha256 and type; Pier records an
// upload entry and answers with a signed PUT descriptor, or with none when the account
// already stores those bytes (dedupe).
import { and, eq, inArray, isNotNull, type SQL } from "drizzle-orm";
import type { Actor, Deps } from "../../../core/context";
import { ApiError } from "../../../core/errors";
import { newId } from "../../../core/ids";
import { buckets, fileChanges, files, uploadEntries } from "../../../db/schema";
import { transaction, type DbOrTx } from "../../../db/tx";
import { assertAllowedFile, normalizeContentType } from "../forbidden";
import { normalizePath } from "../paths";
import { expiresIn, PUT_URL_TTL_S, signToken, storageUrl } from "../storage/tokens";
import { slideSessionOf } from "./expiry";

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
  // Any whole number over the limit (1e30 as well) is a file too large, not a malformed size.
  const tooLarge = Number.isInteger(f.byte_size) && f.byte_size > MAX_FILE_BYTES;
  if (!tooLarge && (!Number.isSafeInteger(f.byte_size) || f.byte_size < 0)) {
    throw new ApiError("VALIDATION_FAILED", `${path}: byte_size must be a non-negative integer.`, { field: "byte_size", path });
  }
  if (tooLarge) throw new ApiError("FILE_TOO_LARGE", `${path}: files are at most ${MAX_FILE_BYTES} bytes.`, { path, max_bytes: MAX_FILE_BYTES });
  if (!/^[A-Za-z0-9+/]{22}==$/.test(f.checksum ?? "")) {
    throw new ApiError("VALIDATION_FAILED", `${path}: checksum must be the base64 MD5 of the bytes (24 characters, as in Content-MD5).`, {
      field: "checksum",
      path,
    });
  }
  const sha256 = (f.sha256 ?? "").toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new ApiError("VALIDATION_FAILED", `${path}: sha256 must be 64 hex characters.`, { field: "sha256", path });
  const contentType = normalizeContentType(f.content_type);
  assertAllowedFile(path, contentType);
  return { path, size: f.byte_size, md5: f.checksum, sha256, contentType };
}

/** Whose holdings can prove possession: the caller's account, within the buckets it can read. */
export type Holder = Pick<Actor, "accountId" | "bucketAccess" | "bucketPermissions">;

/**
 * Content the caller already holds: a current file, a past version or a received upload in one
 * of the account's buckets that the credential can read. Only such content proves possession;
 * a blob stored by another account proves nothing about this one (issue: reading another
 * account's file by its hash), and neither does one in a bucket the key is not allowed to read.
 */
function heldBy(db: DbOrTx, holder: Holder, sha256: string): { md5: string; size: number } | undefined {
  const readable = holder.bucketAccess === "all" ? null : Object.keys(holder.bucketPermissions);
  if (readable?.length === 0) return undefined;
  const within = (bucketId: Parameters<typeof eq>[0]): SQL | undefined => (readable ? inArray(bucketId, readable) : undefined);
  return (
    db
      .select({ md5: files.md5, size: files.size })
      .from(files)
      .innerJoin(buckets, eq(buckets.id, files.bucketId))
      .where(and(eq(files.sha256, sha256), eq(buckets.accountId, holder.accountId), within(files.bucketId)))
      .limit(1)
      .get() ??
    (db
      .select({ md5: fileChanges.md5, size: fileChanges.size })
      .from(fileChanges)
      .innerJoin(buckets, eq(buckets.id, fileChanges.bucketId))
      .where(and(eq(fileChanges.sha256, sha256), eq(buckets.accountId, holder.accountId), within(fileChanges.bucketId)))
      .limit(1)
      .get() as { md5: string; size: number } | undefined) ??
    db
      .select({ md5: uploadEntries.md5, size: uploadEntries.size })
      .from(uploadEntries)
      .where(
        and(
          eq(uploadEntries.sha256, sha256),
          eq(uploadEntries.accountId, holder.accountId),
          isNotNull(uploadEntries.receivedAt),
          within(uploadEntries.bucketId),
        ),
      )
      .limit(1)
      .get()
  );
}

/**
 * Whether the client can skip the PUT: the caller already holds those bytes (see heldBy) AND
 * the store still has them. Dedupe across accounts would let anyone confirm (and then attach)
 * someone else's file by its hash, so it stays within what the caller can read; for everyone
 * else the answer is "upload", whether or not the bytes exist elsewhere, and the store dedupes
 * on disk afterwards. A size or MD5 that differs from the held content is answered the same
 * way, not with an error: an error would confirm that the content exists.
 */
export async function alreadyStored(deps: Deps, holder: Holder, f: ValidFile): Promise<boolean> {
  const known = heldBy(deps.db, holder, f.sha256);
  if (!known || known.size !== f.size || known.md5 !== f.md5) return false;
  if ((await deps.blobs.size(f.sha256)) !== f.size) return false;
  // The reference that makes it held (a file of another bucket) may go before this session
  // commits, and an old blob would then be the collector's at once; with no upload slot to send
  // it again, the session could never finish. A fresh mtime keeps it for the collector's grace
  // (a day), far longer than a session lives.
  return deps.blobs.renew(f.sha256);
}

/**
 * Whether a declared entry may be committed: its own bytes were PUT and verified, or the caller
 * already held the same content; and the store has them. An entry without proof is answered
 * "not uploaded" without looking at the store, so the answer (and its timing) is the same
 * whether or not another account stored those bytes.
 */
export async function entryBytesReady(deps: Deps, holder: Holder, e: UploadEntryRow): Promise<boolean> {
  if (!entryProven(holder, e, deps.db)) return false;
  return (await deps.blobs.size(e.sha256)) === e.size;
}

/**
 * The possession half of entryBytesReady, synchronous so that a commit can re-check it inside
 * its own transaction: whatever was checked before an await may have changed since.
 */
export function entryProven(holder: Holder, e: UploadEntryRow, db: DbOrTx): boolean {
  if (e.receivedAt !== null) return true;
  if (e.accountId !== holder.accountId) return false;
  const known = heldBy(db, holder, e.sha256);
  return known !== undefined && known.size === e.size && known.md5 === e.md5;
}

/**
 * Record that the bytes of an entry arrived through its own signed PUT (proof of possession); the
 * PUT counts as a call of the entry's upload session, which it keeps alive.
 */
export function markReceived(deps: Deps, entryId: string): void {
  transaction(deps.db, (tx) => {
    const entry = tx.update(uploadEntries).set({ receivedAt: deps.clock.now().toISOString() }).where(eq(uploadEntries.id, entryId)).returning().get();
    slideSessionOf(deps, entry?.sessionId ?? null, tx);
  });
}

export function findEntry(entryId: string, db: DbOrTx): UploadEntryRow | undefined {
  return db.select().from(uploadEntries).where(eq(uploadEntries.id, entryId)).get();
}

/** The entries' files were committed (by a publish session's finalize): they cannot be used again. */
export function markEntriesFinalized(entryIds: string[], at: string, db: DbOrTx): void {
  // Chunked: SQLite caps the number of bound parameters per statement.
  for (let i = 0; i < entryIds.length; i += 500) {
    db.update(uploadEntries)
      .set({ status: "finalized", finalizedAt: at })
      .where(inArray(uploadEntries.id, entryIds.slice(i, i + 500)))
      .run();
  }
}

export function insertEntry(deps: Deps, actor: Actor, bucketId: string, sessionId: string | null, f: ValidFile, expiresAt: string, db: DbOrTx): UploadEntryRow {
  return db
    .insert(uploadEntries)
    .values({
      id: newId("upl"),
      sessionId,
      bucketId,
      accountId: actor.accountId,
      credentialId: actor.credentialId,
      path: f.path,
      sha256: f.sha256,
      size: f.size,
      md5: f.md5,
      contentType: f.contentType,
      status: "pending",
      createdAt: deps.clock.now().toISOString(),
      expiresAt,
    })
    .returning()
    .get();
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
