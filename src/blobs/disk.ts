// Local disk backend: data/blobs/sha256/ab/cd/<hex>. Every write goes to a temp file, is
// fsynced, then renamed into place (and the directory fsynced), so a crash leaves either the
// whole blob or nothing under its name. With `deferSync` (the mail filer, which then awaits a
// syncfs barrier: barrier.ts) the two fsyncs are skipped: until that barrier passes, a crash can
// leave a name holding a short file. Such a blob is referenced by nothing (the commit waits for
// the barrier), and no write trusts it: an existing blob is reused only when its size matches,
// and by a deferred write only when its bytes hash to its name. A deferred write never renames
// its unflushed copy over a blob that is whole: that blob may belong to an acknowledged message,
// and on a file system that does not flush a file renamed over another (XFS) a power cut could
// leave the name empty.
import { closeSync, fsync, mkdirSync, open as openCb, openSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync, writeSync } from "node:fs";
import { promisify } from "node:util";
import { mkdir, open, opendir, readdir, rename, rm, stat, unlink, utimes } from "node:fs/promises";
import { join } from "node:path";
import { randomToken } from "../core/ids";
import { BlobMismatchError, GC_ASIDE_PREFIX, isSha256, SMALL_BLOB_BYTES, type BlobExpectation, type BlobInfo, type BlobStore, type PutOptions } from "./store";

export class DiskBlobStore implements BlobStore {
  private readonly root: string;
  private readonly tmp: string;

  /** `dir`: the store's own folder (a worker thread opens the same store by it). */
  constructor(readonly dir: string) {
    this.root = join(dir, "sha256");
    this.tmp = join(dir, "tmp");
  }

  /**
   * clearTemp: the server, at start, clears leftovers of a crash mid-upload (never referenced).
   * Admin commands pass false: a server may be running on the same data dir, mid-upload.
   */
  async init(clearTemp = true): Promise<void> {
    await mkdir(this.root, { recursive: true });
    if (clearTemp) {
      await this.putBackAside();
      await rm(this.tmp, { recursive: true, force: true });
    }
    await mkdir(this.tmp, { recursive: true });
  }

  /** Blobs the collector had moved aside when the process died go back (a later sweep judges them again). */
  private async putBackAside(): Promise<void> {
    const names = await readdir(this.tmp).catch(() => [] as string[]);
    for (const name of names) {
      const sha256 = name.slice(GC_ASIDE_PREFIX.length);
      if (!name.startsWith(GC_ASIDE_PREFIX) || !isSha256(sha256)) continue;
      const final = this.pathOf(sha256);
      if (sizeOf(final) !== null) continue; // stored again meanwhile
      await mkdir(final.slice(0, final.lastIndexOf("/")), { recursive: true });
      await rename(join(this.tmp, name), final);
    }
  }

  pathOf(sha256: string): string {
    if (!isSha256(sha256)) throw new Error(`not a sha256: ${sha256}`);
    return join(this.root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  async put(body: AsyncIterable<Uint8Array>, expect: BlobExpectation = {}, opts: PutOptions = {}): Promise<BlobInfo> {
    const defer = opts.deferSync === true;
    const tmpPath = join(this.tmp, `${Date.now()}-${randomToken(12)}`);
    const fh = await open(tmpPath, "wx", 0o600);
    const sha = new Bun.CryptoHasher("sha256");
    const md5 = new Bun.CryptoHasher("md5");
    const limit = expect.size ?? expect.maxBytes;
    let size = 0;
    let done = false;
    try {
      for await (const chunk of body) {
        size += chunk.byteLength;
        if (limit !== undefined && size > limit) {
          throw expect.size !== undefined
            ? new BlobMismatchError("size", expect.size, `more than ${expect.size}`)
            : new BlobMismatchError("too_large", limit, size);
        }
        sha.update(chunk);
        md5.update(chunk);
        // A synchronous write of one chunk is a memcpy into the page cache: no promise per chunk,
        // no chunk kept alive waiting for a callback, so memory stays flat however fast the
        // client sends. The fsync at the end stays asynchronous.
        let off = 0;
        while (off < chunk.byteLength) off += writeSync(fh.fd, chunk, off, chunk.byteLength - off);
      }
      const info: BlobInfo = { sha256: sha.digest("hex"), md5: md5.digest("base64"), size };
      if (expect.size !== undefined && size !== expect.size) throw new BlobMismatchError("size", expect.size, size);
      if (expect.md5 !== undefined && info.md5 !== expect.md5) throw new BlobMismatchError("md5", expect.md5, info.md5);
      if (expect.sha256 !== undefined && info.sha256 !== expect.sha256.toLowerCase()) throw new BlobMismatchError("sha256", expect.sha256, info.sha256);
      if (!defer) await fh.sync();
      await fh.close();
      done = true;
      const final = this.pathOf(info.sha256);
      const stored = defer ? holdsBytes(final, info) : (await this.size(info.sha256)) === info.size;
      // Deduplicated (the same bytes are already stored) only once the stored copy has a fresh
      // mtime: a GC sweep that snapshotted references before this upload's entry existed must see
      // the blob as young and keep it. A copy the sweep moved aside meanwhile cannot be touched:
      // then this upload's bytes are stored after all.
      if (stored && (await renew(final))) {
        await unlink(tmpPath);
      } else {
        const dir = final.slice(0, final.lastIndexOf("/"));
        await mkdir(dir, { recursive: true });
        await rename(tmpPath, final);
        if (!defer) await fsyncDir(dir);
      }
      return info;
    } catch (err) {
      if (!done) await fh.close().catch(() => {});
      await unlink(tmpPath).catch(() => {});
      throw err;
    }
  }

  async putBytes(bytes: Uint8Array | string, opts: PutOptions = {}): Promise<BlobInfo> {
    const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
    const defer = opts.deferSync === true;
    if (data.byteLength > SMALL_BLOB_BYTES) {
      return this.put(
        (async function* () {
          yield data;
        })(),
        {},
        opts,
      );
    }
    // Small blobs (message.json, a mail, a page): hashed in one call; the write, close and
    // rename are synchronous page-cache calls (microseconds), the create and the fsyncs go to
    // the thread pool. Bytes already stored (a file of their size under their name; for a
    // deferred write, a file whose bytes hash to it: see the top of this file) are not written
    // again.
    const info: BlobInfo = {
      sha256: new Bun.CryptoHasher("sha256").update(data).digest("hex"),
      md5: new Bun.CryptoHasher("md5").update(data).digest("base64"),
      size: data.byteLength,
    };
    const final = this.pathOf(info.sha256);
    if (defer ? holdsBytes(final, info) : sizeOf(final) === data.byteLength) {
      // Fresh mtime, as in put(): a GC sweep must see the blob as young and keep it.
      const now = new Date();
      try {
        utimesSync(final, now, now);
      } catch {
        // gone meanwhile (GC): write it again below
      }
      if (sizeOf(final) === data.byteLength) return info;
    }
    const tmpPath = join(this.tmp, `${Date.now()}-${randomToken(12)}`);
    // Creating a file is the one call here that can wait on the file system's journal when the
    // disk is busy: it goes to the thread pool rather than stall the event loop.
    const fd = await openFd(tmpPath, "wx", 0o600);
    try {
      let off = 0;
      while (off < data.byteLength) off += writeSync(fd, data, off, data.byteLength - off);
      if (!defer) await fsyncFd(fd);
    } catch (err) {
      closeSync(fd);
      try {
        unlinkSync(tmpPath);
      } catch {
        // already gone
      }
      throw err;
    }
    closeSync(fd);
    const dir = final.slice(0, final.lastIndexOf("/"));
    try {
      renameSync(tmpPath, final);
    } catch (e) {
      if ((e as { code?: string }).code !== "ENOENT") throw e;
      // First blob under this prefix: the rename told us; no mkdir call for the others.
      mkdirSync(dir, { recursive: true });
      renameSync(tmpPath, final);
    }
    if (!defer) await fsyncDir(dir);
    return info;
  }

  async has(sha256: string): Promise<boolean> {
    return (await this.size(sha256)) !== null;
  }

  async size(sha256: string): Promise<number | null> {
    try {
      return (await stat(this.pathOf(sha256))).size;
    } catch {
      return null;
    }
  }

  file(sha256: string): Bun.BunFile {
    return Bun.file(this.pathOf(sha256));
  }

  /**
   * The blob is first moved out of its name and only then is its mtime read. A write that
   * deduplicates onto it renews the mtime before it trusts the file (put, putBytes), so either
   * the renewal shows here and the blob goes back, or the write finds the name empty and stores
   * the bytes again. Reading the mtime under the name and then unlinking left a moment in which an
   * upload was told its bytes were stored while they were being deleted. A crash while the blob
   * is aside is undone by init().
   */
  async removeIfIdle(sha256: string, idleSinceMs: number): Promise<number | null> {
    const final = this.pathOf(sha256);
    const before = await stat(final).catch(() => null);
    if (!before || before.mtimeMs > idleSinceMs) return null; // no move for a blob already renewed (readers would miss it)
    const aside = join(this.tmp, `${GC_ASIDE_PREFIX}${sha256}`);
    try {
      await rename(final, aside);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
    const moved = await stat(aside);
    if (moved.mtimeMs > idleSinceMs) {
      await rename(aside, final);
      return null;
    }
    await unlink(aside);
    return moved.size;
  }

  renew(sha256: string): Promise<boolean> {
    return renew(this.pathOf(sha256));
  }

  async *list(): AsyncIterable<{ sha256: string; mtimeMs: number }> {
    for await (const a of await opendir(this.root)) {
      if (!a.isDirectory()) continue;
      for await (const b of await opendir(join(this.root, a.name))) {
        if (!b.isDirectory()) continue;
        for await (const f of await opendir(join(this.root, a.name, b.name))) {
          if (!f.isFile() || !isSha256(f.name)) continue;
          const s = await stat(join(this.root, a.name, b.name, f.name));
          yield { sha256: f.name, mtimeMs: s.mtimeMs };
        }
      }
    }
  }
}

const fsyncFd = promisify(fsync);
const openFd = promisify(openCb);

/**
 * Does the file hold exactly these bytes? Size first, then the hash of what is there (blobs a
 * deferred write may meet are small: the mail filer defers only messages held in memory).
 */
function holdsBytes(path: string, info: BlobInfo): boolean {
  if (sizeOf(path) !== info.size || info.size > SMALL_BLOB_BYTES) return false;
  try {
    return new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex") === info.sha256;
  } catch {
    return false; // gone meanwhile (GC): write it again
  }
}

/** Give a stored blob a fresh mtime; false when it is not under its name (the collector has it aside, or deleted it). */
async function renew(path: string): Promise<boolean> {
  const now = new Date();
  try {
    await utimes(path, now, now);
    return true;
  } catch {
    return false;
  }
}

/** A file's size, or null when it is not there. */
function sizeOf(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

/** Opening and closing a directory are page-cache calls: only the fsync goes to the thread pool. */
async function fsyncDir(dir: string): Promise<void> {
  const fd = openSync(dir, "r");
  try {
    await fsyncFd(fd);
  } finally {
    closeSync(fd);
  }
}
