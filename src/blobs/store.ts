// The content-addressed blob store, behind a small interface so an S3-compatible backend can
// follow (PocketBase tools/filesystem/blob/driver.go). Blobs are immutable and keyed by sha256.

export interface BlobInfo {
  sha256: string; // hex
  md5: string; // base64, as in Content-MD5
  size: number;
}

export interface BlobExpectation {
  size?: number;
  sha256?: string;
  md5?: string;
  maxBytes?: number;
}

export type BlobMismatchKind = "size" | "sha256" | "md5" | "too_large";

/** The body did not match what the upload promised; nothing was stored. */
export class BlobMismatchError extends Error {
  constructor(
    readonly kind: BlobMismatchKind,
    readonly expected: string | number,
    readonly actual: string | number,
  ) {
    super(`blob ${kind} mismatch: expected ${expected}, got ${actual}`);
  }
}

export interface PutOptions {
  /**
   * Skip this blob's own flushes (the file's fsync and its directory's): it is durable only once
   * a SyncBarrier flush (barrier.ts) taken over the store's file system has passed. Only for a
   * caller that awaits such a barrier before relying on the blob (the mail filer); a store
   * without such a barrier ignores it.
   */
  deferSync?: boolean;
}

export interface BlobStore {
  /** Stream a body in, hashing as it goes; refuses (and stores nothing) when it misses `expect`. */
  put(body: AsyncIterable<Uint8Array>, expect?: BlobExpectation, opts?: PutOptions): Promise<BlobInfo>;
  /** Store bytes already in memory (durable, file and name, when the promise resolves, unless deferSync). */
  putBytes(bytes: Uint8Array | string, opts?: PutOptions): Promise<BlobInfo>;
  has(sha256: string): Promise<boolean>;
  size(sha256: string): Promise<number | null>;
  /** A Bun file for serving (sendfile, Range) or reading. */
  file(sha256: string): Bun.BunFile;
  /**
   * Remove a blob unless it was written or renewed after `idleSinceMs` (the collector's grace
   * cutoff): its size when removed, null when kept or already gone. Safe against a write that
   * deduplicates onto the blob at the same moment: that write either renews it in time to keep
   * it or stores the bytes again.
   */
  removeIfIdle(sha256: string, idleSinceMs: number): Promise<number | null>;
  /**
   * Give a stored blob a fresh mtime, as a write that deduplicates onto it does: false when it is
   * not stored (or the collector has it aside), and the caller must store the bytes again. A
   * caller about to record a new reference to a blob it did not write renews it first, so a
   * collection that marked before the reference existed keeps it (removeIfIdle).
   */
  renew(sha256: string): Promise<boolean>;
  /** Every stored blob with its last-modified time (for garbage collection). */
  list(): AsyncIterable<{ sha256: string; mtimeMs: number }>;
}

/** The collector's name in the store's tmp/ for a blob it moved aside while it decides; init() puts such blobs back. */
export const GC_ASIDE_PREFIX = "gc-aside-";

/** Bytes up to this size are stored by putBytes in one synchronous write; larger ones stream. */
export const SMALL_BLOB_BYTES = 1024 * 1024;

export const isSha256 = (v: string): boolean => /^[0-9a-f]{64}$/.test(v);
