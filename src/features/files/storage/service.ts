// Pier's own "object storage": PUT streams a body into the blob store while hashing and keeps
// it only when size, MD5 and sha256 match the signed claims; GET/HEAD serve a blob named by a
// signed download token. The token is the whole credential: no bearer, no cookie. The HTTP
// answers (headers, 304) are built by routes.ts from what these functions return.
import { and, eq } from "drizzle-orm";
import type { Deps } from "../../../core/context";
import { ApiError } from "../../../core/errors";
import { BlobMismatchError } from "../../../blobs/store";
import { files, uploadEntries, uploadSessions } from "../../../db/schema";
import { bucketServesLinks } from "../../buckets";
import { assertAllowedFile } from "../forbidden";
import { refuseExecutables } from "../sniff";
import { markReceived } from "../uploads/declare";
import { verifyToken, type GetClaims, type PutClaims } from "./tokens";

const empty = (async function* () {})();

const sameType = (a: string | null, b: string) => (a ?? "").trim().toLowerCase() === b.trim().toLowerCase();

/** Check the descriptor is still usable, before any byte is read. */
function usableEntry(deps: Deps, claims: PutClaims) {
  const entry = deps.db.select().from(uploadEntries).where(eq(uploadEntries.id, claims.u)).get();
  if (!entry || entry.accountId !== claims.a || entry.bucketId !== claims.b || entry.sha256 !== claims.h) {
    throw new ApiError("UPLOAD_NOT_FOUND", "This upload was cancelled or expired; request a new descriptor.");
  }
  if (entry.status === "finalized")
    throw new ApiError("UPLOAD_ALREADY_FINALIZED", "This descriptor was already used and committed; request a new one to upload again.");
  if (entry.sessionId) {
    const s = deps.db
      .select({ status: uploadSessions.status, expiresAt: uploadSessions.expiresAt })
      .from(uploadSessions)
      .where(eq(uploadSessions.id, entry.sessionId))
      .get();
    if (!s || s.status === "expired" || s.expiresAt <= deps.clock.now().toISOString())
      throw new ApiError("UPLOAD_SESSION_EXPIRED", "The upload session of this descriptor expired.");
    if (s.status !== "open" && s.status !== "finalizing") throw new ApiError("UPLOAD_SESSION_CLOSED", `The upload session of this descriptor is ${s.status}.`);
  }
  return entry;
}

/** What the uploader declared alongside the body (its Content-Type, Content-MD5, Content-Length headers). */
export interface DeclaredUpload {
  contentType: string | null;
  contentMd5: string | null;
  contentLength: string | null;
}

export async function receiveUpload(deps: Deps, token: string, declared: DeclaredUpload, body: ReadableStream<Uint8Array> | null) {
  const claims = verifyToken<PutClaims>(deps, "put", token);
  const entry = usableEntry(deps, claims);
  assertAllowedFile(entry.path, claims.t);
  if (!sameType(declared.contentType, claims.t)) {
    throw new ApiError("UPLOAD_HEADER_MISMATCH", `Content-Type must be exactly "${claims.t}" (from upload.headers).`, {
      header: "Content-Type",
      expected: claims.t,
    });
  }
  if (declared.contentMd5 !== claims.m) {
    throw new ApiError("UPLOAD_HEADER_MISMATCH", "Content-MD5 must be the base64 MD5 from upload.headers.", { header: "Content-MD5", expected: claims.m });
  }
  const declaredLength = declared.contentLength;
  if (declaredLength !== null && Number(declaredLength) !== claims.s) {
    throw new ApiError("UPLOAD_SIZE_MISMATCH", `The body is ${declaredLength} bytes; the descriptor is for ${claims.s}. Nothing was stored.`, {
      expected: claims.s,
      actual: Number(declaredLength),
    });
  }
  try {
    const info = await deps.blobs.put(refuseExecutables((body as unknown as AsyncIterable<Uint8Array> | null) ?? empty, entry.path), {
      size: claims.s,
      md5: claims.m,
      sha256: claims.h,
    });
    markReceived(deps, entry.id);
    return { sha256: info.sha256, byte_size: info.size, checksum: info.md5, path: entry.path };
  } catch (e) {
    if (e instanceof BlobMismatchError) {
      if (e.kind === "size" || e.kind === "too_large") {
        throw new ApiError("UPLOAD_SIZE_MISMATCH", `The body size does not match the declared ${claims.s} bytes. Nothing was stored.`, { expected: claims.s });
      }
      throw new ApiError(
        "UPLOAD_CHECKSUM_MISMATCH",
        `The body's ${e.kind === "md5" ? "MD5" : "SHA-256"} does not match the declared one. Nothing was stored.`,
        { checksum: e.kind },
      );
    }
    throw e;
  }
}

/** What a signed download sends; the route turns it into the HTTP answer (ETag, 304, HEAD). */
export interface Download {
  sha256: string;
  contentType: string;
  fileName: string;
  /** Seconds until the link expires: no cache may keep it longer. */
  maxAgeSeconds: number;
  body: ReturnType<Deps["blobs"]["file"]>;
}

/** The blob a signed download token names, checked to still be a file of its bucket. */
export async function resolveDownload(deps: Deps, token: string): Promise<Download> {
  const claims = verifyToken<GetClaims>(deps, "get", token);
  // Checked on every use, not only when signing: a link must die with the file (deleted,
  // replaced, or its bucket deleted or being deleted), not up to GET_URL_TTL_S later.
  const still =
    bucketServesLinks(deps, claims.a, claims.b) &&
    deps.db
      .select({ id: files.id })
      .from(files)
      .where(and(eq(files.id, claims.f), eq(files.bucketId, claims.b), eq(files.sha256, claims.h)))
      .get();
  if (!still) throw new ApiError("FILE_NOT_FOUND", "This file was deleted or replaced since the link was made; request a new download link.");
  const size = await deps.blobs.size(claims.h);
  if (size === null) throw new ApiError("FILE_NOT_FOUND", "The stored content is gone (deleted and collected).");
  const maxAgeSeconds = Math.max(0, claims.e - Math.floor(deps.clock.now().getTime() / 1000));
  return { sha256: claims.h, contentType: claims.t, fileName: claims.n, maxAgeSeconds, body: deps.blobs.file(claims.h) };
}
