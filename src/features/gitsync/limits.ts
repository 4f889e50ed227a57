// How much of a repository one sync may unpack. `--git-max-repository-mb` bounds the bytes a
// remote sends, but git compresses: a few hundred KB of pack can inflate to gigabytes (one
// large blob of zeros). isomorphic-git inflates every object whole while it indexes a fetched
// pack, so the pack's own object headers (which carry each object's inflated size) are checked
// here, on the received bytes, before isomorphic-git sees them.
// Pack format: https://git-scm.com/docs/pack-format (object headers and delta headers).
import { inflateSync } from "node:zlib";
import type { Deps } from "../../core/context";
import { SyncFailure } from "./failure";

const MiB = 1048576;
/** GitHub refuses files above 100 MiB, so no GitHub repository needs more; a bucket file can be larger (pushes refuse it). */
const FILE_CAP_BYTES = 100 * MiB;

export interface SyncLimits {
  /** Largest single file (inflated object) a sync reads or writes. */
  fileBytes: number;
  /** Inflated bytes a sync may unpack in all, and the bytes it may send in one push. */
  totalBytes: number;
  /** Inflated bytes counted so far in this sync. */
  inflated: number;
  /** Paths (files and folders) one sync's tree walk may visit, and how many it has. */
  maxPaths: number;
  paths: number;
}

export function syncLimits(deps: Deps): SyncLimits {
  const totalBytes = deps.config.gitMaxRepositoryMb * MiB;
  return { fileBytes: Math.min(FILE_CAP_BYTES, totalBytes), totalBytes, inflated: 0, maxPaths: deps.config.gitMaxFiles, paths: 0 };
}

/**
 * Count one path of the tree walk. A tree can name the same subtree many times, so a pack of
 * a few KB can describe millions of paths: the walk stops at the cap, before anything is read
 * or written.
 */
export function visitPath(limits: SyncLimits): void {
  if (++limits.paths <= limits.maxPaths) return;
  throw new SyncFailure("too_many_files", `The repository's changes hold more paths than one sync takes (${limits.maxPaths}).`, {
    max_paths: limits.maxPaths,
  });
}

const mib = (n: number) => `${Math.round((n / MiB) * 10) / 10} MiB`;

export function fileTooLarge(limits: SyncLimits, size: number, path?: string): SyncFailure {
  return new SyncFailure(
    "file_too_large",
    `${path ? `${path} is` : "The repository holds a file of"} ${mib(size)}; git sync on this instance takes files up to ${mib(limits.fileBytes)}.`,
    { max_bytes: limits.fileBytes, ...(path ? { paths: [{ path, size }] } : {}) },
  );
}

export function repositoryTooLarge(limits: SyncLimits): SyncFailure {
  return new SyncFailure("repository_too_large", `The repository unpacks to more than this instance accepts in one sync (${mib(limits.totalBytes)}).`, {
    max_bytes: limits.totalBytes,
  });
}

/** Count `size` inflated bytes against the sync's budget. */
export function charge(limits: SyncLimits, size: number, path?: string): void {
  if (size > limits.fileBytes) throw fileTooLarge(limits, size, path);
  limits.inflated += size;
  if (limits.inflated > limits.totalBytes) throw repositoryTooLarge(limits);
}

/**
 * Check an upload-pack answer (pkt-lines, the pack in side-band channel 1, or a bare pack)
 * against the limits: every object's inflated size, deltas' result sizes, and their sum.
 * Each object is inflated at most to its declared size, one at a time, and dropped.
 */
export function checkPackResponse(body: Uint8Array, limits: SyncLimits): void {
  const pack = packOf(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  if (!pack || pack.length < 12 || pack.toString("latin1", 0, 4) !== "PACK") return;
  const count = pack.readUInt32BE(8);
  let pos = 12;
  for (let i = 0; i < count && pos < pack.length; i++) {
    let b = pack[pos++]!;
    const type = (b >> 4) & 7;
    let size = b & 15;
    let shift = 4;
    while (b & 0x80) {
      b = pack[pos++]!;
      size += (b & 0x7f) * 2 ** shift;
      shift += 7;
    }
    if (type === 6) {
      do b = pack[pos++]!;
      while (b & 0x80);
    } else if (type === 7) pos += 20;
    // Delta instructions are never longer than what they build, so the same cap applies.
    if (size > limits.fileBytes) throw fileTooLarge(limits, size);
    let out: Buffer;
    let consumed: number;
    try {
      const r = inflateSync(pack.subarray(pos), { info: true, maxOutputLength: Math.max(1, size) } as object) as unknown as {
        buffer: Buffer;
        engine: { bytesWritten: number };
      };
      out = r.buffer;
      consumed = r.engine.bytesWritten;
    } catch {
      // Longer than its header says, or not zlib: unpacking it later would not stop at the size checked.
      throw damagedPack();
    }
    if (type !== 6 && type !== 7 && out.length !== size) throw damagedPack();
    charge(limits, type === 6 || type === 7 ? deltaResultSize(out) : size);
    pos += consumed;
  }
}

const damagedPack = () => new SyncFailure("git_error", "The git server sent a damaged pack (an object does not match its header).");

/** The pack bytes of an upload-pack answer, or null when there is none. */
function packOf(buf: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let pos = 0;
  while (pos + 4 <= buf.length) {
    if (buf.toString("latin1", pos, pos + 4) === "PACK") {
      parts.push(buf.subarray(pos));
      break;
    }
    const len = Number.parseInt(buf.toString("latin1", pos, pos + 4), 16);
    if (!Number.isFinite(len)) break;
    if (len < 4) {
      pos += 4; // flush, delimiter, response-end
      continue;
    }
    // Side-band: channel 1 carries the pack; 2 progress, 3 errors. ACK/NAK lines start with a letter.
    if (buf[pos + 4] === 1) parts.push(buf.subarray(pos + 5, pos + len));
    pos += len;
  }
  return parts.length ? Buffer.concat(parts) : null;
}

/** A delta starts with two little-endian base-128 numbers: the base's size, then the result's. */
function deltaResultSize(delta: Buffer): number {
  let pos = 0;
  const next = () => {
    let n = 0;
    let shift = 0;
    let b: number;
    do {
      b = delta[pos++] ?? 0;
      n += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80 && pos < delta.length);
    return n;
  };
  next();
  return next();
}

/**
 * Bucket files a sync would push: one over the file cap stops the sync, as a refused file stops an
 * import (D182), and all of them together may not exceed the repository cap (assertPushFits: the
 * pack is built in memory). Checked on the recorded sizes, before a byte is read.
 */
export function assertFilesFit(limits: SyncLimits, files: Iterable<[string, { size: number } | null]>): void {
  const big = [...files]
    .filter((e): e is [string, { size: number }] => e[1] !== null && e[1].size > limits.fileBytes)
    .map(([path, f]) => ({ path, size: f.size }));
  if (!big.length) return;
  throw new SyncFailure(
    "file_too_large",
    `The bucket holds ${big.length} file(s) larger than git sync takes (${mib(limits.fileBytes)}): ${big
      .slice(0, 5)
      .map((b) => b.path)
      .join(", ")}; remove or shrink them and sync again.`,
    { max_bytes: limits.fileBytes, paths: big.slice(0, 100) },
  );
}

/** The bucket's changes to push fit one push. */
export function assertPushFits(limits: SyncLimits, files: Iterable<[string, { size: number } | null]>): void {
  let total = 0;
  for (const [, f] of files) total += f?.size ?? 0;
  if (total > limits.totalBytes) throw pushTooLarge(limits);
}

export function pushTooLarge(limits: SyncLimits): SyncFailure {
  return new SyncFailure(
    "push_too_large",
    `The bucket's changes add up to more than one push takes on this instance (${mib(limits.totalBytes)}); push fewer at a time.`,
    { max_bytes: limits.totalBytes },
  );
}
