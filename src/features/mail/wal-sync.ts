// Makes committed mail survive a power cut before its 250 goes out. The database runs
// `synchronous = NORMAL` in WAL mode: a COMMIT is written to the WAL file but not fsynced, which
// survives a process crash, not a power cut. The mail filer therefore fsyncs the WAL file after
// each group commit and answers 250 only then. The fsync runs on the thread pool, so the event
// loop keeps speaking SMTP (and the next batch can commit) while the disk flushes; fsyncs asked
// for while one runs are merged into the next one.
//
// Why this is enough: on Linux fsync flushes every written page of the file, whichever
// descriptor wrote it, so SQLite's own writes of the COMMIT are covered. A checkpoint that
// moved those frames into the database file before our fsync has already fsynced the WAL and
// the database itself (SQLite does so in NORMAL mode), and the WAL is only rewritten from its
// start after such a complete checkpoint.
import { closeSync, fsync, openSync } from "node:fs";
import { promisify } from "node:util";

const fsyncFd = promisify(fsync);

export type DurableSync = () => Promise<void>;

/** A syncer for the database file `dbFile` (its `-wal` companion; the file itself without one). */
export function walSyncer(dbFile: string): DurableSync {
  if (!dbFile || dbFile === ":memory:") return async () => {};
  const flush = async () => {
    let fd: number;
    try {
      fd = openSync(`${dbFile}-wal`, "r");
    } catch (e) {
      // No WAL file: the last connection closed and checkpointed it into the database.
      if ((e as { code?: string }).code !== "ENOENT") throw e;
      fd = openSync(dbFile, "r");
    }
    try {
      await fsyncFd(fd);
    } finally {
      closeSync(fd);
    }
  };
  return coalesced(flush);
}

/**
 * Calls of `run` made while it is running share the one after it (which starts after they
 * asked, so it covers their writes); calls made while nothing runs start it at once.
 */
export function coalesced(run: () => Promise<void>): DurableSync {
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  const start = (): Promise<void> => {
    const p = run().finally(() => {
      if (running === p) running = null;
    });
    running = p;
    return p;
  };
  return () => {
    if (!running) return start();
    next ??= running
      .catch(() => {})
      .then(() => {
        next = null;
        return start();
      });
    return next;
  };
}
