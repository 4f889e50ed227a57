// The backup folder: what a backup holds and how it is written so that a crash or a full disk
// never leaves something that looks complete. Layout (a copy of the data dir's own):
//   manifest.json                 written last, atomically: its presence is the "complete" mark
//   pier.db                       the database snapshot (VACUUM INTO)
//   blobs/sha256/ab/cd/<hex>      every blob the snapshot references (content-addressed)
//   secret.key                    only with --include-secret-key
import { Database } from "bun:sqlite";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, open, rename, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ApiError } from "../../core/errors";
import { serverVersion } from "../../core/version";
import { migrations as embeddedMigrations } from "../../db/migrations";
import { referencedBlobs } from "../../blobs/gc";
import { isSha256 } from "../../blobs/store";

export const BACKUP_FORMAT = 1;
export const MANIFEST_FILE = "manifest.json";
export const DATABASE_FILE = "pier.db";
export const SECRET_KEY_FILE = "secret.key";

export interface BackupManifest {
  format: number;
  pier_version: string;
  created_at: string;
  /** Seconds the backup took. */
  duration_seconds: number;
  database: { file: string; sha256: string; size: number; migrations: string[] };
  blobs: {
    count: number;
    bytes: number;
    copied: number;
    copied_bytes: number;
    /**
     * Referenced blobs the data dir lacked or held damaged when the backup was taken, so not in it:
     * restore goes on without them (their files stay broken, as they were), D290. Absent before.
     */
    missing?: string[];
  };
  counts: Record<string, number>;
  secret_key_included: boolean;
}

export const blobPathIn = (root: string, sha256: string): string => {
  if (!isSha256(sha256)) throw new Error(`not a sha256: ${sha256}`);
  return join(root, "blobs", "sha256", sha256.slice(0, 2), sha256.slice(2, 4), sha256);
};

/** The manifest of a complete backup folder; a clear error for anything else. */
export function readManifest(folder: string): BackupManifest {
  const file = join(folder, MANIFEST_FILE);
  if (!existsSync(folder)) throw new ApiError("BACKUP_INVALID", `${folder} does not exist.`);
  if (!existsSync(file))
    throw new ApiError(
      "BACKUP_INVALID",
      `${folder} has no ${MANIFEST_FILE}: it is not a Pier backup, or the backup did not finish (an interrupted backup never writes one).`,
    );
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new ApiError("BACKUP_INVALID", `${file} is not valid JSON (${(e as Error).message}).`);
  }
  return checkFormat(folder, manifest);
}

/** A manifest this Pier can read (a folder's or an archive's); `where` names the backup in the error. */
export function checkFormat(where: string, manifest: BackupManifest): BackupManifest {
  if (manifest.format !== BACKUP_FORMAT)
    throw new ApiError(
      "BACKUP_INVALID",
      `${where} is backup format ${manifest.format}; this Pier reads format ${BACKUP_FORMAT}. Use the Pier version that wrote it (${manifest.pier_version}).`,
    );
  // Pier writes the database as pier.db beside the manifest; any other name could point out of the backup.
  if (manifest.database?.file !== DATABASE_FILE)
    throw new ApiError(
      "BACKUP_INVALID",
      `${where}: the manifest names the database ${JSON.stringify(manifest.database?.file)}; a Pier backup's is ${DATABASE_FILE}.`,
    );
  return manifest;
}

/** The blobs a backup recorded as missing from its data dir at backup time (none when absent or malformed). */
export function missingAtBackup(manifest: BackupManifest): Set<string> {
  const list = manifest.blobs?.missing;
  return new Set(Array.isArray(list) ? list.filter((s) => typeof s === "string" && isSha256(s)) : []);
}

/** verify's sentence for a referenced blob the backup does not hold. */
export function missingBlobProblem(manifest: BackupManifest, sha256: string): string {
  return missingAtBackup(manifest).has(sha256)
    ? `blob ${sha256} is missing: the data dir lacked it when the backup was taken, so its files restore broken, as they were (run pier admin check on the restored data dir)`
    : `blob ${sha256} is missing`;
}

/**
 * Copy a file to `dest` through a temp name, hashing it on the way; the copy is renamed into
 * place only when its sha256 is `expectSha256` (when given). Returns the hash and size.
 */
export async function copyHashed(src: string, dest: string, expectSha256?: string): Promise<{ sha256: string; size: number }> {
  await mkdir(dirname(dest), { recursive: true });
  const tmp = `${dest}.tmp-${process.pid}`;
  const fh = await open(tmp, "w", 0o600);
  const hasher = new Bun.CryptoHasher("sha256");
  let size = 0;
  try {
    for await (const chunk of readChunks(src)) {
      hasher.update(chunk);
      size += chunk.byteLength;
      let off = 0;
      while (off < chunk.byteLength) off += (await fh.write(chunk, off, chunk.byteLength - off)).bytesWritten;
    }
    await fh.sync();
    await fh.close();
  } catch (e) {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw e;
  }
  const sha256 = hasher.digest("hex");
  if (expectSha256 !== undefined && sha256 !== expectSha256) {
    await unlink(tmp).catch(() => {});
    throw new CorruptBlobError(src, expectSha256, sha256);
  }
  await rename(tmp, dest);
  return { sha256, size };
}

export class CorruptBlobError extends Error {
  constructor(
    readonly path: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`${path} is corrupt: its content hashes to ${actual}, not ${expected}`);
  }
}

/** sha256 of a file, streamed. */
export async function hashFile(path: string): Promise<{ sha256: string; size: number }> {
  const hasher = new Bun.CryptoHasher("sha256");
  let size = 0;
  for await (const chunk of readChunks(path)) {
    hasher.update(chunk);
    size += chunk.byteLength;
  }
  return { sha256: hasher.digest("hex"), size };
}

/** A file's bytes in 1 MiB chunks (one buffer reused: each chunk is consumed before the next read). */
export async function* readChunks(path: string): AsyncGenerator<Uint8Array> {
  const fh = await open(path, "r");
  const buf = new Uint8Array(1 << 20);
  try {
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.byteLength, null);
      if (bytesRead === 0) return;
      yield buf.subarray(0, bytesRead);
    }
  } finally {
    await fh.close();
  }
}

/**
 * Run `fn` over `items` with at most `limit` at a time. Copies wait mostly on fsync latency,
 * so a few in flight multiply throughput on small files.
 */
export async function eachLimit<T>(items: Iterable<T>, limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  const it = items[Symbol.iterator]();
  let failed: unknown = null;
  const worker = async () => {
    for (let r = it.next(); !r.done && failed === null; r = it.next()) {
      try {
        await fn(r.value);
      } catch (e) {
        failed ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  if (failed !== null) throw failed;
}

export const COPY_CONCURRENCY = 16;

/** integrity_check and the referenced blobs of a database file; null (and a problem) when it cannot be read. */
export function databaseChecks(dbFile: string, problems: string[]): { blobs: Set<string>; migrations: string[] } | null {
  try {
    const sqlite = new Database(dbFile, { readonly: true });
    try {
      const integrity = sqlite.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all();
      if (integrity[0]?.integrity_check !== "ok")
        problems.push(
          `the database fails PRAGMA integrity_check: ${integrity
            .map((r) => r.integrity_check)
            .slice(0, 5)
            .join("; ")}`,
        );
      return { blobs: referencedBlobs(sqlite), migrations: appliedMigrations(sqlite) };
    } finally {
      sqlite.close();
    }
  } catch (e) {
    problems.push(`the database cannot be read: ${(e as Error).message}`);
    return null;
  }
}

export const appliedMigrations = (db: Database): string[] =>
  db
    .query<{ name: string }, []>("SELECT name FROM __pier_migrations")
    .all()
    .map((r) => r.name);

/**
 * Why this Pier cannot restore a backup written by a newer one, or null: its database has
 * migrations this binary does not know, and once restored the server would refuse the data dir
 * (DATA_DIR_TOO_NEW). Restore refuses it with BACKUP_TOO_NEW before writing anything; verify
 * says the same, so an operator learns it before a restore (D298).
 */
export function tooNewMessage(where: string, manifest: BackupManifest, migrations: string[]): string | null {
  const known = new Set(embeddedMigrations.map((m) => m.name));
  const unknown = migrations.filter((n) => !known.has(n));
  if (!unknown.length) return null;
  return (
    `${where} was written by Pier ${manifest.pier_version}, newer than this Pier ${serverVersion}: its database has migration(s) ${unknown.join(", ")} that this version does not know. ` +
    "Install that version or a later one and restore with it."
  );
}
