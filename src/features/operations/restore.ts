// `pier backup verify` and `pier restore`: a backup is checked before anything is written, and
// a restore builds the new data dir from verified copies only (database and blob hashes), staged
// and swapped in whole (restore-swap.ts), so a damaged backup is named and never silently becomes
// the live data, nor costs the data it was meant to replace.
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, statSync } from "node:fs";
import { mkdir, rm, utimes } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { referencedBlobs } from "../../blobs/gc";
import { ApiError } from "../../core/errors";
import {
  blobPathIn,
  COPY_CONCURRENCY,
  copyHashed,
  CorruptBlobError,
  eachLimit,
  DATABASE_FILE,
  hashFile,
  readManifest,
  SECRET_KEY_FILE,
  type BackupManifest,
  databaseChecks,
  missingAtBackup,
  missingBlobProblem,
  appliedMigrations,
  tooNewMessage,
} from "./layout";
import { fsyncDir, writeFileAtomic } from "../../core/atomic-file";
import { readFileSync } from "node:fs";
import { isArchivePath, unpackArchive, verifyArchive } from "./archive";
import { stagingFolder, swapIn } from "./restore-swap";

export interface VerifyResult {
  folder: string;
  manifest: BackupManifest;
  blobs_checked: number;
  bytes_checked: number;
  /** One sentence per problem; empty = the backup restores as it was taken. */
  problems: string[];
  /** Set when the backup was written by a newer Pier: restore refuses it with BACKUP_TOO_NEW and these words. */
  too_new: string | null;
}

/** Check a backup folder: manifest, database hash and integrity, every referenced blob's hash. */
export async function verifyBackup(from: string): Promise<VerifyResult> {
  if (isArchivePath(from) && !isDirectory(from)) return verifyArchive(from);
  const folder = resolve(from);
  const manifest = readManifest(folder);
  const problems: string[] = [];
  const dbPath = join(folder, manifest.database.file);
  if (!existsSync(dbPath)) {
    problems.push(`the database ${manifest.database.file} is missing`);
    return { folder, manifest, blobs_checked: 0, bytes_checked: 0, problems, too_new: null };
  }
  const db = await hashFile(dbPath);
  if (db.sha256 !== manifest.database.sha256)
    problems.push(`the database does not match the manifest (sha256 ${db.sha256}, manifest ${manifest.database.sha256})`);
  const read = databaseChecks(dbPath, problems);
  if (!read) return { folder, manifest, blobs_checked: 0, bytes_checked: 0, problems, too_new: null };
  let checked = 0;
  let bytes = 0;
  for (const sha256 of read.blobs) {
    const path = blobPathIn(folder, sha256);
    if (!existsSync(path)) {
      problems.push(missingBlobProblem(manifest, sha256));
      continue;
    }
    const h = await hashFile(path);
    checked++;
    bytes += h.size;
    if (h.sha256 !== sha256) problems.push(`blob ${sha256} is damaged (its content hashes to ${h.sha256})`);
  }
  if (manifest.secret_key_included && !existsSync(join(folder, SECRET_KEY_FILE)))
    problems.push("the manifest says the secret key is included, but secret.key is missing");
  return { folder, manifest, blobs_checked: checked, bytes_checked: bytes, problems, too_new: tooNewMessage(folder, manifest, read.migrations) };
}

export interface RestoreOptions {
  from: string;
  dataDir: string;
  /** Replace the database, blobs and key of a data dir that is not empty. */
  force: boolean;
  /** A Pier serving that data dir (pid), which a restore must not pull the files from under. */
  runningPid?: number | null;
}

export interface RestoreResult {
  dataDir: string;
  manifest: BackupManifest;
  blobs: number;
  bytes: number;
  secret_key_restored: boolean;
  /** Jobs that were running when the backup was taken, queued again to run on first start. */
  jobs_requeued: number;
  /** Blobs the data dir already lacked when the backup was taken: their files are restored broken. */
  blobs_missing: string[];
}

/** A running Pier's data dir, a file, or (without --force) a data dir that is not empty: refused. */
function checkRestoreTarget(dataDir: string, opts: RestoreOptions): void {
  if (opts.runningPid)
    throw new ApiError("RESTORE_TARGET_NOT_EMPTY", `A Pier (pid ${opts.runningPid}) is serving ${dataDir}: stop it before restoring into it.`);
  if (existsSync(dataDir)) {
    if (!statSync(dataDir).isDirectory()) throw new ApiError("RESTORE_TARGET_NOT_EMPTY", `${dataDir} is a file, not a folder.`);
    const entries = readdirSync(dataDir);
    if (entries.length && !opts.force)
      throw new ApiError(
        "RESTORE_TARGET_NOT_EMPTY",
        `${dataDir} is not empty (${entries.slice(0, 3).join(", ")}${entries.length > 3 ? ", ..." : ""}): restore into a new folder, or pass --force to replace its database, blobs and key.`,
      );
  }
}

/**
 * An archive is unpacked (streaming, hashed) into a folder beside the data dir, then restored
 * from there like a folder backup; the unpacked copy is removed whatever happens.
 */
async function restoreArchive(opts: RestoreOptions): Promise<RestoreResult> {
  const dataDir = resolve(opts.dataDir);
  checkRestoreTarget(dataDir, opts);
  const staging = join(dirname(dataDir), `.${basename(dataDir)}.unpack-${process.pid}-${Date.now()}`);
  try {
    await unpackArchive(opts.from, staging);
    return await restoreBackup({ ...opts, from: staging });
  } finally {
    await rm(staging, { recursive: true, force: true }).catch(() => {});
  }
}

/** How often a running restore touches its staging folder (far under check's hour). */
const STAGING_HEARTBEAT_MS = 60_000;

const isDirectory = (path: string): boolean => existsSync(path) && statSync(path).isDirectory();

export async function restoreBackup(opts: RestoreOptions): Promise<RestoreResult> {
  if (isArchivePath(opts.from) && !isDirectory(opts.from)) return restoreArchive(opts);
  const folder = resolve(opts.from);
  const dataDir = resolve(opts.dataDir);
  const manifest = readManifest(folder);
  checkRestoreTarget(dataDir, opts);
  // Everything is checked before the data dir is touched.
  const dbSource = join(folder, manifest.database.file);
  if (!existsSync(dbSource)) throw new ApiError("BACKUP_INVALID", `${folder} has no ${manifest.database.file}.`);
  const dbHash = await hashFile(dbSource);
  if (dbHash.sha256 !== manifest.database.sha256)
    throw new ApiError("BACKUP_INVALID", `The database in ${folder} does not match its manifest (run pier backup verify ${folder}).`);
  const { blobs, applied } = (() => {
    const db = new Database(dbSource, { readonly: true });
    try {
      return { blobs: referencedBlobs(db), applied: appliedMigrations(db) };
    } finally {
      db.close();
    }
  })();
  // A newer Pier's database would be refused at start (DATA_DIR_TOO_NEW) once restored: refuse it
  // now, before a --force restore swaps a working data dir for one that cannot start.
  const tooNew = tooNewMessage(folder, manifest, applied);
  if (tooNew) throw new ApiError("BACKUP_TOO_NEW", `${tooNew} Nothing was written.`);
  const missing = [...blobs].filter((s) => !existsSync(blobPathIn(folder, s)));
  // A blob the backup recorded as missing from its data dir is restored as it was: missing (D290).
  // Any other missing blob is damage to the backup.
  const recorded = missingAtBackup(manifest);
  const lost = missing.filter((s) => !recorded.has(s));
  if (lost.length)
    throw new ApiError(
      "BACKUP_INVALID",
      `${lost.length} blob(s) the backup's database references are missing from ${folder} (first: ${lost[0]}); run pier backup verify ${folder}.`,
    );
  for (const s of missing) blobs.delete(s);

  // The copies are made and verified in a folder inside the data dir, and take the place of the
  // old files only when all of them are good: a damaged blob, a full disk or any other error
  // leaves the data dir's database and blobs as they were (D242).
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const staging = stagingFolder(dataDir, "restore");
  await mkdir(staging, { mode: 0o700 });
  // `pier admin check --repair` removes a staging folder untouched for an hour: a restore that
  // runs longer keeps touching it, for a check that cannot see this process (another container).
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(staging, now, now).catch(() => {});
  }, STAGING_HEARTBEAT_MS);
  heartbeat.unref();
  try {
    const result = await copyInto(folder, staging, manifest, blobs, dbSource);
    await swapIn(staging, dataDir);
    return { ...result, dataDir, blobs_missing: missing.sort() };
  } finally {
    clearInterval(heartbeat);
    await rm(staging, { recursive: true, force: true }).catch(() => {});
  }
}

async function copyInto(folder: string, staging: string, manifest: BackupManifest, blobs: Set<string>, dbSource: string): Promise<RestoreResult> {
  let bytes = 0;
  const touched = new Set<string>();
  const damaged = (what: string) =>
    new ApiError(
      "BACKUP_INVALID",
      `${what} in the backup is damaged; the restore stopped and the data dir was left as it was (run pier backup verify ${folder}).`,
    );
  await eachLimit(blobs, COPY_CONCURRENCY, async (sha256) => {
    const dest = blobPathIn(staging, sha256);
    try {
      bytes += (await copyHashed(blobPathIn(folder, sha256), dest, sha256)).size;
    } catch (e) {
      throw e instanceof CorruptBlobError ? damaged(`Blob ${sha256}`) : e;
    }
    touched.add(dirname(dest));
  });
  await eachLimit(touched, COPY_CONCURRENCY, fsyncDir);
  const dbFile = join(staging, DATABASE_FILE);
  await copyHashed(dbSource, dbFile, manifest.database.sha256).catch((e) => {
    throw e instanceof CorruptBlobError ? damaged("The database") : e;
  });
  const requeued = requeueRunningJobs(dbFile);
  let keyRestored = false;
  const keySource = join(folder, SECRET_KEY_FILE);
  if (existsSync(keySource)) {
    await writeFileAtomic(join(staging, SECRET_KEY_FILE), readFileSync(keySource, "utf8"), 0o600);
    keyRestored = true;
  }
  await fsyncDir(staging);
  return { dataDir: staging, manifest, blobs: blobs.size, bytes, secret_key_restored: keyRestored, jobs_requeued: requeued, blobs_missing: [] };
}

/**
 * A job that was running when the snapshot was taken has a lease held by a worker that does not
 * exist on the new server: queue it again so it runs at once instead of after its lease.
 */
function requeueRunningJobs(dbFile: string): number {
  const db = new Database(dbFile);
  try {
    return db.query("UPDATE jobs SET status = 'queued', lease_until = NULL, worker_id = NULL WHERE status = 'running'").run().changes;
  } finally {
    db.close();
  }
}
