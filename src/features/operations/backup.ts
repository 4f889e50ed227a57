// `pier backup`: a consistent copy of a data dir while the server keeps serving and writing.
// The database is snapshotted first (VACUUM INTO, one read transaction); the blobs copied are
// exactly those that snapshot references, so the backup is the state at one instant. Blobs are
// content-addressed and immutable: into an existing backup folder only missing ones are copied.
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { chmod, mkdir, opendir, rename, rm, unlink } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { holdCollection } from "../../blobs/backup-hold";
import { referencedBlobs } from "../../blobs/gc";
import { isSha256 } from "../../blobs/store";
import { ApiError } from "../../core/errors";
import { serverVersion } from "../../core/version";
import {
  BACKUP_FORMAT,
  blobPathIn,
  copyHashed,
  COPY_CONCURRENCY,
  CorruptBlobError,
  eachLimit,
  DATABASE_FILE,
  hashFile,
  MANIFEST_FILE,
  SECRET_KEY_FILE,
  type BackupManifest,
} from "./layout";
import { fsyncDir, writeFileAtomic } from "../../core/atomic-file";
import { snapshotDatabase } from "./snapshot";
import { createArchiveBackup, isArchivePath } from "./archive";

export interface BackupOptions {
  dataDir: string;
  /**
   * The backup folder (created when missing; an earlier backup there is updated incrementally),
   * or an archive file (.tar, .tar.gz, .tgz: always a full backup).
   */
  to: string;
  includeSecretKey: boolean;
  /** The configured key (PIER_SECRET_KEY) when it is not the data dir's secret.key. */
  secretKey?: string | null;
  now?: () => Date;
}

export interface BackupResult {
  /** The backup folder, or the archive file. */
  folder: string;
  manifest: BackupManifest;
  /** Referenced blobs the data dir lacks or holds damaged: the backup has the rest. */
  problems: string[];
}

const COUNTED_TABLES = ["users", "accounts", "buckets", "files", "bucket_versions", "publications", "deploys", "form_submissions", "mail_messages"];

export async function createBackup(opts: BackupOptions): Promise<BackupResult> {
  if (isArchivePath(opts.to)) return createArchiveBackup(opts);
  const now = opts.now ?? (() => new Date());
  const started = now();
  const dataDir = resolve(opts.dataDir);
  const folder = resolve(opts.to);
  const source = join(dataDir, DATABASE_FILE);
  if (!existsSync(source)) throw new ApiError("BACKUP_FAILED", `${dataDir} has no ${DATABASE_FILE}: give the data dir of a Pier (--data-dir).`);
  if (folder === dataDir || folder.startsWith(`${dataDir}/blobs`))
    throw new ApiError("BACKUP_FAILED", "The backup folder must not be the data dir or its blob store.");
  checkTarget(folder);
  const dbTmp = join(folder, `${DATABASE_FILE}.partial-${process.pid}-${Date.now()}`);
  // From before the snapshot until its blobs are copied, no collection deletes one of them.
  const release = holdCollection(dataDir);
  try {
    await mkdir(folder, { recursive: true, mode: 0o700 });
    // mkdir's mode applies only when it creates the folder: an existing one is made private too.
    await chmod(folder, 0o700);
    // From here until the new manifest is renamed into place the folder is visibly incomplete:
    // restore and verify refuse a folder without a manifest.
    await unlink(join(folder, MANIFEST_FILE)).catch(ignoreMissing);
    await snapshotDatabase(source, dbTmp);
    const snap = readSnapshot(dbTmp);
    const problems: string[] = [];
    const missing: string[] = [];
    let bytes = 0;
    let copied = 0;
    let copiedBytes = 0;
    const touched = new Set<string>();
    await eachLimit(snap.blobs, COPY_CONCURRENCY, async (sha256) => {
      const from = blobPathIn(dataDir, sha256);
      const dest = blobPathIn(folder, sha256);
      const have = sizeOf(dest);
      const size = sizeOf(from);
      if (size === null) {
        if (have !== null)
          bytes += have; // lost from the data dir, kept by an earlier backup
        else {
          problems.push(`blob ${sha256} is missing from the data dir`);
          missing.push(sha256);
        }
        return;
      }
      bytes += size;
      if (have === size) return; // content-addressed: same name and size, same bytes
      try {
        await copyHashed(from, dest, sha256);
      } catch (e) {
        // Gone since it was measured (removed by hand, or a collector the hold could not reach).
        if ((e as NodeJS.ErrnoException).code === "ENOENT" && !existsSync(from)) {
          problems.push(`blob ${sha256} is missing from the data dir`);
          missing.push(sha256);
          return;
        }
        if (!(e instanceof CorruptBlobError)) throw e;
        problems.push(`blob ${sha256} is damaged in the data dir (it hashes to ${e.actual}); not copied`);
        // An older good copy the folder kept stays in the backup; without one the blob is missing.
        if (have === null) missing.push(sha256);
        return;
      }
      touched.add(dirname(dest));
      copied++;
      copiedBytes += size;
    });
    await eachLimit(touched, COPY_CONCURRENCY, fsyncDir);
    await dropUnreferenced(folder, snap.blobs);
    const dbPath = join(folder, DATABASE_FILE);
    await rename(dbTmp, dbPath);
    const db = await hashFile(dbPath);
    const secretIncluded = await writeSecretKey(folder, dataDir, opts);
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      pier_version: serverVersion,
      created_at: started.toISOString(),
      duration_seconds: Math.round((now().getTime() - started.getTime()) / 10) / 100,
      database: { file: DATABASE_FILE, sha256: db.sha256, size: db.size, migrations: snap.migrations },
      blobs: { count: snap.blobs.size, bytes, copied, copied_bytes: copiedBytes, missing: missing.sort() },
      counts: snap.counts,
      secret_key_included: secretIncluded,
    };
    await writeFileAtomic(join(folder, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, 0o600);
    return { folder, manifest, problems };
  } catch (e) {
    await rm(dbTmp, { force: true }).catch(() => {});
    throw targetError(e, folder);
  } finally {
    release();
  }
}

/** Refuse a target that is a file, or a folder holding something other than a Pier backup. */
function checkTarget(folder: string): void {
  if (!existsSync(folder)) return;
  if (!statSync(folder).isDirectory()) throw new ApiError("BACKUP_FAILED", `${folder} is a file; give a folder (new, empty, or an earlier backup).`);
  const entries = readdirSync(folder);
  const ours = new Set([MANIFEST_FILE, DATABASE_FILE, SECRET_KEY_FILE, "blobs"]);
  const foreign = entries.filter((n) => !ours.has(n) && !n.startsWith(`${DATABASE_FILE}.partial-`) && !n.startsWith(`${MANIFEST_FILE}.tmp-`));
  if (foreign.length)
    throw new ApiError(
      "BACKUP_FAILED",
      `${folder} holds files that are not a Pier backup (${foreign.slice(0, 3).join(", ")}${foreign.length > 3 ? ", ..." : ""}); give a new or empty folder, or an earlier backup folder.`,
    );
}

export function readSnapshot(file: string): { blobs: Set<string>; migrations: string[]; counts: Record<string, number> } {
  const db = new Database(file, { readonly: true });
  try {
    const blobs = referencedBlobs(db);
    const migrations = db
      .query<{ name: string }, []>("SELECT name FROM __pier_migrations ORDER BY name")
      .all()
      .map((r) => r.name);
    const counts: Record<string, number> = {};
    for (const table of COUNTED_TABLES) {
      try {
        counts[table] = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
      } catch {
        // A table this version does not have: not counted.
      }
    }
    return { blobs, migrations, counts };
  } finally {
    db.close();
  }
}

/** Copy the secret key when asked; otherwise make sure no key from an earlier backup stays behind. */
export async function writeSecretKey(folder: string, dataDir: string, opts: BackupOptions): Promise<boolean> {
  const dest = join(folder, SECRET_KEY_FILE);
  if (!opts.includeSecretKey) {
    await unlink(dest).catch(ignoreMissing);
    return false;
  }
  const file = join(dataDir, SECRET_KEY_FILE);
  const key = opts.secretKey ?? (existsSync(file) ? readFileSync(file, "utf8").trim() : null);
  if (!key) throw new ApiError("BACKUP_FAILED", `--include-secret-key: no secret key to include (${file} does not exist and none is configured).`);
  await writeFileAtomic(dest, `${key}\n`, 0o600);
  return true;
}

/**
 * Remove the blobs this snapshot does not reference that the folder holds from an earlier backup
 * into it, or linked from the previous scheduled one: otherwise a deleted file's bytes stay in
 * every later backup, and the folders grow for ever whatever --backup-keep says (D289). Unlinking
 * a hard link leaves the other backups' copies alone. Temp files of copies are left be.
 */
async function dropUnreferenced(folder: string, referenced: Set<string>): Promise<void> {
  const root = join(folder, "blobs", "sha256");
  if (!existsSync(root)) return;
  for await (const a of await opendir(root)) {
    if (!a.isDirectory()) continue;
    for await (const b of await opendir(join(root, a.name))) {
      if (!b.isDirectory()) continue;
      for await (const f of await opendir(join(root, a.name, b.name)))
        if (f.isFile() && isSha256(f.name) && !referenced.has(f.name)) await unlink(join(root, a.name, b.name, f.name));
    }
  }
}

function sizeOf(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

function ignoreMissing(e: NodeJS.ErrnoException): void {
  if (e.code !== "ENOENT") throw e;
}

/** A failed write as one sentence that says what to do; other errors pass through. */
export function targetError(e: unknown, folder: string): unknown {
  if (e instanceof ApiError) return e;
  const code = (e as NodeJS.ErrnoException)?.code;
  const why: Record<string, string> = {
    ENOSPC: "the disk is full",
    EDQUOT: "the disk quota is used up",
    EACCES: "permission denied",
    EPERM: "permission denied",
    EROFS: "the file system is read-only",
    ENOTDIR: "a part of the path is a file, not a folder",
  };
  // SQLite reports a full disk as SQLITE_FULL ("database or disk is full").
  const reason = code && why[code] ? why[code] : /disk is full|SQLITE_FULL/i.test(String((e as Error)?.message)) ? why.ENOSPC : null;
  if (!reason) return e;
  return new ApiError(
    "BACKUP_FAILED",
    `Cannot write the backup to ${folder}: ${reason} (${code ?? "SQLITE_FULL"}). Nothing there is marked complete (no ${MANIFEST_FILE} was written); free space or choose another folder and run the backup again.`,
  );
}
