// A backup as one file: `pier backup --to FILE.tar` (or .tar.gz / .tgz, gzip). The archive holds
// the backup folder's layout, with manifest.json as its LAST entry: an archive cut short has no
// manifest and is refused like an unfinished folder. It is written under a temp name and renamed
// only once complete and fsynced, so a failed backup never leaves a file that looks finished.
// An archive is always a full backup (a folder is the incremental form). Reading (verify,
// restore) streams through node-tar; writing uses its synchronous writer (a CLI command), one
// entry at a time: memory stays flat whatever the archive's size.
import { createReadStream, existsSync, statSync } from "node:fs";
import { mkdir, open, rename, rm, symlink, unlink } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { create as createTar, Parser, type ReadEntry } from "tar";
import { holdCollection } from "../../blobs/backup-hold";
import { isSha256 } from "../../blobs/store";
import { ApiError } from "../../core/errors";
import { serverVersion } from "../../core/version";
import { readSnapshot, targetError, writeSecretKey, type BackupOptions, type BackupResult } from "./backup";
import {
  BACKUP_FORMAT,
  blobPathIn,
  checkFormat,
  DATABASE_FILE,
  databaseChecks,
  hashFile,
  MANIFEST_FILE,
  missingBlobProblem,
  SECRET_KEY_FILE,
  tooNewMessage,
  type BackupManifest,
} from "./layout";
import { fsyncDir } from "../../core/atomic-file";
import type { VerifyResult } from "./restore";
import { snapshotDatabase } from "./snapshot";

/**
 * The entries read into memory are capped far above what Pier writes (a manifest is about 1 KiB,
 * a key 64 bytes): a crafted archive with a 2 GB manifest.json must fail at its header, not
 * after filling memory.
 */
export const MANIFEST_MAX_BYTES = 4 * 1024 * 1024;
export const SECRET_KEY_MAX_BYTES = 4 * 1024;

const ARCHIVE = /\.(tar|tar\.gz|tgz)$/i;
const GZIP = /\.(tar\.gz|tgz)$/i;

/** A backup target or source that names an archive file rather than a folder. */
export const isArchivePath = (path: string): boolean => ARCHIVE.test(path);

export async function createArchiveBackup(opts: BackupOptions): Promise<BackupResult> {
  const now = opts.now ?? (() => new Date());
  const started = now();
  const dataDir = resolve(opts.dataDir);
  const file = resolve(opts.to);
  const source = join(dataDir, DATABASE_FILE);
  if (!existsSync(source)) throw new ApiError("BACKUP_FAILED", `${dataDir} has no ${DATABASE_FILE}: give the data dir of a Pier (--data-dir).`);
  if (file.startsWith(`${dataDir}/`)) throw new ApiError("BACKUP_FAILED", "The backup file must not be inside the data dir.");
  if (existsSync(file) && statSync(file).isDirectory())
    throw new ApiError("BACKUP_FAILED", `${file} is a folder; an archive target is a file name ending in .tar, .tar.gz or .tgz.`);
  const partial = join(dirname(file), `.${basename(file)}.partial-${process.pid}-${Date.now()}`);
  const staging = `${partial}.d`;
  // From before the snapshot until tar has read its blobs, no collection deletes one of them.
  const release = holdCollection(dataDir);
  try {
    await mkdir(staging, { recursive: true, mode: 0o700 });
    await snapshotDatabase(source, join(staging, DATABASE_FILE));
    const snap = readSnapshot(join(staging, DATABASE_FILE));
    const db = await hashFile(join(staging, DATABASE_FILE));
    const problems: string[] = [];
    const missing: string[] = [];
    const blobs: string[] = [];
    let bytes = 0;
    for (const sha256 of snap.blobs) {
      const size = sizeOf(blobPathIn(dataDir, sha256));
      if (size === null) {
        problems.push(`blob ${sha256} is missing from the data dir`);
        missing.push(sha256);
        continue;
      }
      blobs.push(sha256);
      bytes += size;
    }
    const secretIncluded = await writeSecretKey(staging, dataDir, opts);
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      pier_version: serverVersion,
      created_at: started.toISOString(),
      duration_seconds: 0,
      database: { file: DATABASE_FILE, sha256: db.sha256, size: db.size, migrations: snap.migrations },
      blobs: { count: snap.blobs.size, bytes, copied: blobs.length, copied_bytes: bytes, missing: missing.sort() },
      counts: snap.counts,
      secret_key_included: secretIncluded,
    };
    // The staging folder looks like a backup folder whose blobs are the data dir's own (a
    // symlink): node-tar reads every file itself, streaming, in the order listed.
    await symlink(join(dataDir, "blobs"), join(staging, "blobs"), "dir");
    const entries = [DATABASE_FILE, ...blobs.map((s) => blobPathIn("", s)), ...(secretIncluded ? [SECRET_KEY_FILE] : [])];
    // Every blob is hashed before it goes in (a damaged blob must not end up in a backup that
    // looks good), a few at a time: hashing as tar read each entry started one hash per entry at
    // once, and memory grew with the archive.
    const damaged = await damagedBlobs(dataDir, blobs);
    if (damaged.length)
      throw new ApiError(
        "BACKUP_FAILED",
        `${damaged.length} blob(s) are damaged in the data dir (first: ${damaged[0]}); no archive was written. Run pier admin check --data-dir ${dataDir} (--repair marks the files they belong to), then back up again.`,
      );
    await writeManifestLast(staging, manifest, started, now);
    createTar({ cwd: staging, file: partial, gzip: GZIP.test(file), portable: true, mode: 0o600, sync: true }, [...entries, MANIFEST_FILE]);
    await fsyncFile(partial);
    await rename(partial, file);
    await fsyncDir(dirname(file));
    return { folder: file, manifest, problems };
  } catch (e) {
    await rm(partial, { force: true }).catch(() => {});
    throw targetError(e, file);
  } finally {
    release();
    await unlink(join(staging, "blobs")).catch(() => {});
    await rm(staging, { recursive: true, force: true }).catch(() => {});
  }
}

/** The blobs whose content no longer matches their name, hashed HASH_CONCURRENCY at a time. */
async function damagedBlobs(dataDir: string, blobs: string[]): Promise<string[]> {
  const damaged: string[] = [];
  let next = 0;
  const lane = async () => {
    while (next < blobs.length) {
      const sha256 = blobs[next++]!;
      if ((await hashFile(blobPathIn(dataDir, sha256))).sha256 !== sha256) damaged.push(sha256);
    }
  };
  await Promise.all(Array.from({ length: HASH_CONCURRENCY }, lane));
  return damaged;
}

const HASH_CONCURRENCY = 4;

/** The manifest goes in last; its duration covers the snapshot and the listing, not the archive's own write. */
async function writeManifestLast(staging: string, manifest: BackupManifest, started: Date, now: () => Date): Promise<void> {
  manifest.duration_seconds = Math.round((now().getTime() - started.getTime()) / 10) / 100;
  const fh = await open(join(staging, MANIFEST_FILE), "w", 0o600);
  try {
    await fh.writeFile(`${JSON.stringify(manifest, null, 2)}\n`);
  } finally {
    await fh.close();
  }
}

async function fsyncFile(path: string): Promise<void> {
  const fh = await open(path, "r");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function sizeOf(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

interface ArchiveContents {
  manifest: BackupManifest | null;
  /** sha256 and size of the database entry. */
  database: { sha256: string; size: number } | null;
  /** Every blob entry: name -> the hash of its content and its size. */
  blobs: Map<string, { sha256: string; size: number }>;
  secretKey: string | null;
  unexpected: string[];
}

/**
 * Stream an archive through node-tar: every blob entry is hashed as it passes (nothing kept),
 * the database is written to `dbOut` (and hashed), the manifest and secret key are kept (small).
 * With `blobsInto`, each blob is also written there (a backup folder's layout).
 */
async function readArchive(file: string, dbOut: string, blobsInto?: string): Promise<ArchiveContents> {
  if (!existsSync(file)) throw new ApiError("BACKUP_INVALID", `${file} does not exist.`);
  const out: ArchiveContents = { manifest: null, database: null, blobs: new Map(), secretKey: null, unexpected: [] };
  const writes: Promise<void>[] = [];
  const reading = { closed: false };
  let stop: (e: unknown) => void = () => {};
  const unfinished = new Set<ReadEntry>();
  // A write that fails (a full disk) stops the whole read at once: the parser would otherwise
  // wait for that entry to be consumed.
  const write = (entry: ReadEntry, dest: string, done: (h: { sha256: string; size: number }) => void) => {
    // After a failure the parser may still hand over entries it had buffered: they are skipped,
    // so no write starts once the caller may be removing what was written.
    if (reading.closed) {
      entry.resume();
      return;
    }
    unfinished.add(entry);
    entry.once("end", () => unfinished.delete(entry));
    writes.push(
      writeEntry(entry, dest).then(
        (h) => {
          done(h);
        },
        (e) => {
          stop(e);
          throw e;
        },
      ),
    );
  };
  let manifestText = "";
  let keyText = "";
  let failure: unknown = null;
  const parser = new Parser({
    strict: true,
    // Every entry is consumed below (written, hashed or skipped) at the reader's pace.
    noResume: true,
    onReadEntry: (entry: ReadEntry) => {
      const path = entry.path.replace(/^\.\//, "");
      const sha256 = basename(path);
      if (entry.type !== "File") {
        entry.resume();
        return;
      }
      if (path === MANIFEST_FILE || path === SECRET_KEY_FILE) {
        const max = path === MANIFEST_FILE ? MANIFEST_MAX_BYTES : SECRET_KEY_MAX_BYTES;
        // The header says the size before any byte is read; an entry can hold no more than that.
        if (entry.size > max) {
          stop(
            new ApiError(
              "BACKUP_ENTRY_TOO_LARGE",
              `${file}: ${path} is ${entry.size} bytes, over the ${max} a Pier backup's can be; it is not a Pier backup archive (nothing was restored).`,
              { entry: path, size: entry.size, max_bytes: max },
            ),
          );
          return;
        }
        if (path === MANIFEST_FILE) entry.on("data", (c: Buffer) => (manifestText += c.toString("utf8")));
        else entry.on("data", (c: Buffer) => (keyText += c.toString("utf8")));
      } else if (path === DATABASE_FILE) write(entry, dbOut, (h) => (out.database = h));
      else if (path.startsWith("blobs/sha256/") && isSha256(sha256) && path === blobPathIn("", sha256)) {
        if (blobsInto) write(entry, blobPathIn(blobsInto, sha256), (h) => out.blobs.set(sha256, h));
        else {
          const hasher = new Bun.CryptoHasher("sha256");
          let size = 0;
          entry.on("data", (c: Buffer) => {
            hasher.update(c);
            size += c.byteLength;
          });
          entry.on("end", () => out.blobs.set(sha256, { sha256: hasher.digest("hex"), size }));
        }
        return;
      } else {
        out.unexpected.push(path);
        entry.resume();
        return;
      }
    },
  });
  const input = createReadStream(file);
  const parsed = new Promise<void>((resolvePromise, reject) => {
    stop = reject;
    input.on("error", reject);
    parser.on("error", (e: Error) => reject(new ApiError("BACKUP_INVALID", `${file} is not a readable tar archive (${e.message}).`)));
    parser.on("warn", (code: string, message: string) => {
      if (code === "TAR_BAD_ARCHIVE" || code === "TAR_ABORT") failure ??= new ApiError("BACKUP_INVALID", `${file} is damaged: ${message}.`);
    });
    parser.on("end", () => resolvePromise());
    input.pipe(parser as unknown as NodeJS.WritableStream);
  });
  try {
    await parsed;
  } catch (e) {
    failure ??= e;
    input.destroy();
  }
  reading.closed = true;
  // An archive that ends inside an entry leaves that entry's write waiting: end it as failed.
  // (Its size check then fails the write.)
  for (const entry of unfinished) entry.end();
  await Promise.allSettled(writes);
  if (failure) throw failure;
  await Promise.all(writes);
  if (manifestText) {
    try {
      out.manifest = JSON.parse(manifestText);
    } catch (e) {
      throw new ApiError("BACKUP_INVALID", `The manifest in ${file} is not valid JSON (${(e as Error).message}).`);
    }
  }
  out.secretKey = keyText || null;
  return out;
}

/** Numbers each entry write's temp file: an archive may hold the same path twice. */
let entryWrites = 0;

/** Write one entry to `dest` (temp name, fsync, rename), hashing it on the way. */
async function writeEntry(entry: ReadEntry, dest: string): Promise<{ sha256: string; size: number }> {
  entry.pause();
  await mkdir(dirname(dest), { recursive: true });
  const tmp = `${dest}.tmp-${process.pid}-${++entryWrites}`;
  const fh = await open(tmp, "w", 0o600);
  const hasher = new Bun.CryptoHasher("sha256");
  let size = 0;
  try {
    for await (const chunk of entry as unknown as AsyncIterable<Buffer>) {
      hasher.update(chunk);
      size += chunk.byteLength;
      let off = 0;
      while (off < chunk.byteLength) off += (await fh.write(chunk, off, chunk.byteLength - off)).bytesWritten;
    }
    if (size !== entry.size) throw new Error(`${entry.path}: ${size} of ${entry.size} bytes (the archive ends inside it)`);
    await fh.sync();
  } catch (e) {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw e;
  }
  await fh.close();
  await rename(tmp, dest);
  return { sha256: hasher.digest("hex"), size };
}

function checkManifest(file: string, c: ArchiveContents): BackupManifest {
  if (!c.manifest)
    throw new ApiError(
      "BACKUP_INVALID",
      `${file} has no ${MANIFEST_FILE}: it is not a Pier backup archive, or it was cut short (the manifest is the archive's last entry).`,
    );
  return checkFormat(file, c.manifest);
}

/** `pier backup verify FILE`: one streaming pass; the database goes to a temp file beside the archive. */
export async function verifyArchive(from: string): Promise<VerifyResult> {
  const file = resolve(from);
  const dbTmp = join(dirname(file), `.${basename(file)}.verify-${process.pid}-${Date.now()}.db`);
  try {
    const c = await readArchive(file, dbTmp);
    const manifest = checkManifest(file, c);
    const problems: string[] = c.unexpected.map((p) => `unexpected entry ${p}`);
    if (!c.database) {
      problems.push(`the database ${DATABASE_FILE} is missing`);
      return { folder: file, manifest, blobs_checked: 0, bytes_checked: 0, problems, too_new: null };
    }
    if (c.database.sha256 !== manifest.database.sha256)
      problems.push(`the database does not match the manifest (sha256 ${c.database.sha256}, manifest ${manifest.database.sha256})`);
    const read = databaseChecks(dbTmp, problems);
    let checked = 0;
    let bytes = 0;
    for (const sha256 of read?.blobs ?? []) {
      const b = c.blobs.get(sha256);
      if (!b) {
        problems.push(missingBlobProblem(manifest, sha256));
        continue;
      }
      checked++;
      bytes += b.size;
      if (b.sha256 !== sha256) problems.push(`blob ${sha256} is damaged (its content hashes to ${b.sha256})`);
    }
    if (manifest.secret_key_included && !c.secretKey) problems.push("the manifest says the secret key is included, but secret.key is missing");
    const tooNew = read ? tooNewMessage(file, manifest, read.migrations) : null;
    return { folder: file, manifest, blobs_checked: checked, bytes_checked: bytes, problems, too_new: tooNew };
  } finally {
    await rm(dbTmp, { force: true }).catch(() => {});
  }
}

/**
 * Unpack an archive into `folder` as a backup folder (blobs written and fsynced one by one as
 * they stream past, hashed; the manifest last), refusing an archive that is cut short or
 * damaged. The restore then proceeds from that folder exactly as from a folder backup.
 */
export async function unpackArchive(from: string, folder: string): Promise<void> {
  const file = resolve(from);
  await mkdir(join(folder, "blobs"), { recursive: true, mode: 0o700 });
  const c = await readArchive(file, join(folder, DATABASE_FILE), folder);
  const manifest = checkManifest(file, c);
  for (const [sha256, b] of c.blobs)
    if (b.sha256 !== sha256)
      throw new ApiError("BACKUP_INVALID", `Blob ${sha256} in ${file} is damaged; the restore stopped (run pier backup verify ${file}).`);
  if (c.secretKey) {
    const fh = await open(join(folder, SECRET_KEY_FILE), "w", 0o600);
    await fh.writeFile(c.secretKey);
    await fh.close();
  }
  const fh = await open(join(folder, MANIFEST_FILE), "w", 0o600);
  await fh.writeFile(JSON.stringify(manifest));
  await fh.close();
}
