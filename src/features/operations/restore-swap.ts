// The last step of a restore: the verified copies staged inside the data dir take the place of
// its database, blobs and key by renames only, so a restore that fails at any step leaves the
// data dir as it was (D242). Renames, not copies: they cannot run out of space, and within one
// file system each one is atomic.
import { existsSync } from "node:fs";
import { mkdir, rename as fsRename, rm } from "node:fs/promises";
import { join } from "node:path";
import { DATABASE_FILE, SECRET_KEY_FILE } from "./layout";
import { fsyncDir } from "../../core/atomic-file";

/** What a restore replaces in a data dir; certificates, backups/ and the operator's files stay. */
const DATABASE_FILES = [DATABASE_FILE, `${DATABASE_FILE}-wal`, `${DATABASE_FILE}-shm`];

/** The folder a restore stages into: inside the data dir, so a rename out of it never crosses file systems. */
export const stagingFolder = (dataDir: string, kind: "restore" | "replaced"): string => join(dataDir, `.${kind}-${process.pid}-${Date.now()}`);

export interface SwapFs {
  rename(from: string, to: string): Promise<void>;
}

/**
 * Move the data dir's database (with its WAL files, which belong to the old database and must
 * never meet the new one), blobs and, when the backup has one, key aside; rename the staged ones
 * into place, the database last (a data dir with a pier.db is a finished restore); then remove
 * the old ones. If a rename fails, whatever was placed goes back to `staging` and the old entries
 * go back where they were.
 */
export async function swapIn(staging: string, dataDir: string, fs: SwapFs = { rename: fsRename }): Promise<void> {
  const incoming = ["blobs", SECRET_KEY_FILE, ...DATABASE_FILES].filter((n) => existsSync(join(staging, n)));
  const outgoing = [...DATABASE_FILES, "blobs", ...(incoming.includes(SECRET_KEY_FILE) ? [SECRET_KEY_FILE] : [])].filter((n) => existsSync(join(dataDir, n)));
  const aside = stagingFolder(dataDir, "replaced");
  await mkdir(aside, { mode: 0o700 });
  const movedAside: string[] = [];
  const placed: string[] = [];
  try {
    for (const name of outgoing) {
      await fs.rename(join(dataDir, name), join(aside, name));
      movedAside.push(name);
    }
    for (const name of incoming) {
      await fs.rename(join(staging, name), join(dataDir, name));
      placed.push(name);
    }
    await fsyncDir(dataDir);
  } catch (e) {
    await putBack(staging, dataDir, aside, placed, movedAside, fs);
    throw e;
  }
  // The old data is gone only once the new data is in place; failing to delete it loses nothing.
  await rm(aside, { recursive: true, force: true }).catch(() => {});
}

async function putBack(staging: string, dataDir: string, aside: string, placed: string[], movedAside: string[], fs: SwapFs): Promise<void> {
  try {
    for (const name of [...placed].reverse()) await fs.rename(join(dataDir, name), join(staging, name));
    for (const name of [...movedAside].reverse()) await fs.rename(join(aside, name), join(dataDir, name));
  } catch (e) {
    // The old files are still whole in `aside`: say where, rather than delete anything.
    throw new Error(
      `The restore failed and putting the data dir back failed too (${(e as Error).message}): the previous ${movedAside.join(", ")} are in ${aside}; move them back into ${dataDir} by hand.`,
    );
  }
  await rm(aside, { recursive: true, force: true }).catch(() => {});
  await fsyncDir(dataDir).catch(() => {});
}
