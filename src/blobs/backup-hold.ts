// A backup copies the blobs its database snapshot references after taking the snapshot, often
// from another process (`pier backup` beside a running server). A blob collection in between
// would delete blobs the live database dropped meanwhile (a bucket deleted) but the snapshot still
// needs: the backup would then lack them, and restore refuses a backup with a missing blob. So a
// backup holds collection off with a file in `<data-dir>/run/`, written before its snapshot and
// removed when its copies are done; the collector checks for one after its mark and before each
// removal, and stops its sweep while one is there (its next run collects).
//
// Freshness is the file's mtime, not its pid: a backup in another container has a pid this one
// cannot see. A running backup touches its file every minute, so one left by a crash stops
// holding after ten minutes.
import { mkdirSync, readdirSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const BACKUP_HOLD_FRESH_MS = 10 * 60_000;
const HEARTBEAT_MS = 60_000;
const HOLD = /^backup-\d+-\d+\.hold$/;

const runDir = (dataDir: string) => join(dataDir, "run");

/**
 * Hold collection off until the returned function is called. Best effort: a data dir this process
 * cannot write (a read-only snapshot of it, another user's) gets no hold, and the backup reports a
 * blob that went missing meanwhile as it always did.
 */
export function holdCollection(dataDir: string): () => void {
  const file = join(runDir(dataDir), `backup-${process.pid}-${Date.now()}.hold`);
  try {
    mkdirSync(runDir(dataDir), { recursive: true, mode: 0o700 });
    writeFileSync(file, `${process.pid}\n`, { mode: 0o600 });
  } catch {
    return () => {};
  }
  const heartbeat = setInterval(() => {
    const now = new Date();
    try {
      utimesSync(file, now, now);
    } catch {}
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return () => {
    clearInterval(heartbeat);
    try {
      unlinkSync(file);
    } catch {}
  };
}

/** A backup holds collection off now. Holds gone stale (a crashed backup) are removed. */
export function collectionHeld(dataDir: string): boolean {
  let names: string[];
  try {
    names = readdirSync(runDir(dataDir));
  } catch {
    return false;
  }
  let held = false;
  for (const name of names) {
    if (!HOLD.test(name)) continue;
    const path = join(runDir(dataDir), name);
    try {
      // Wall time, not the server's clock: the file's mtime is the file system's.
      if (Math.abs(Date.now() - statSync(path).mtimeMs) < BACKUP_HOLD_FRESH_MS) held = true;
      else unlinkSync(path);
    } catch {
      // released meanwhile
    }
  }
  return held;
}
