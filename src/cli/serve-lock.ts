// One `pier serve` per data dir (D266): `<data-dir>/run/serve.lock` names the server that holds
// it (pid and the kernel's start time of that pid), taken before anything touches the data dir
// and held for the life of the process. Bun has no flock, so a lock whose holder is gone (a
// crash, a kill -9, a reboot, a container restarted with the same pid) is recognised as stale by
// the holder's pid no longer running, or running with another start time (the pid was reused).
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pidAlive } from "../core/processes";

export const serveLockPath = (dataDir: string) => join(dataDir, "run", "serve.lock");

export interface LockHolder {
  pid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot); null where there is no /proc. */
  start: string | null;
  started_at: string;
}

/** Another live `pier serve` holds the data dir. */
export class DataDirInUseError extends Error {
  readonly code = "DATA_DIR_IN_USE";
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(
      `another Pier (pid ${holder.pid}, started ${holder.started_at}) already serves the data dir ${dataDir}. ` +
        `Stop it first (kill -TERM ${holder.pid}, or stop its service), or give this one another --data-dir. Nothing was changed.`,
    );
  }
}

/** The kernel's start time of `pid` (a pid reused by another process has another one); null when unknown. */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** True when the process that wrote `holder` is still running (not this process, not a reused pid). */
export function holderAlive(holder: LockHolder): boolean {
  if (!Number.isInteger(holder.pid) || holder.pid <= 0 || holder.pid === process.pid) return false;
  if (!pidAlive(holder.pid)) return false;
  const now = processStart(holder.pid);
  return holder.start === null || now === null || now === holder.start;
}

function readHolder(file: string): LockHolder | null {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as LockHolder;
  } catch {
    return null; // gone meanwhile, or not ours to read: treated as stale
  }
}

/**
 * Remove a lock judged stale, unless another server replaced it meanwhile (two started at once
 * over the same stale lock): it is moved aside first and put back when what was moved names a
 * live server, so the first of them keeps it and the second is refused.
 */
function removeStale(file: string, dataDir: string): void {
  const moved = `${file}.stale.${process.pid}`;
  try {
    renameSync(file, moved);
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return; // removed meanwhile: try to link again
    throw e;
  }
  const now = readHolder(moved);
  if (now && holderAlive(now)) {
    try {
      linkSync(moved, file);
    } catch {
      // a third server linked its own meanwhile: it holds the data dir
    }
    rmSync(moved, { force: true });
    throw new DataDirInUseError(dataDir, now);
  }
  rmSync(moved, { force: true });
}

export interface ServeLock {
  /** Remove the lock if it is still this process's (idempotent). */
  release(): void;
}

/**
 * Take the data dir for this process, or throw DataDirInUseError naming the live holder. The
 * lock file appears whole (written aside, then hard-linked into place, which fails when one
 * exists), so a reader never sees a half-written holder.
 */
export function acquireServeLock(dataDir: string): ServeLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  mkdirSync(join(dataDir, "run"), { recursive: true, mode: 0o700 });
  const file = serveLockPath(dataDir);
  const me: LockHolder = { pid: process.pid, start: processStart(process.pid), started_at: new Date().toISOString() };
  const aside = `${file}.${process.pid}`;
  writeFileSync(aside, JSON.stringify(me) + "\n", { mode: 0o600 });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(aside, file);
        break;
      } catch (e) {
        if ((e as { code?: string }).code !== "EEXIST" || attempt >= 5) throw e;
      }
      const holder = readHolder(file);
      if (holder && holderAlive(holder)) throw new DataDirInUseError(dataDir, holder);
      removeStale(file, dataDir);
    }
  } finally {
    rmSync(aside, { force: true });
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      const holder = readHolder(file);
      if (holder?.pid === process.pid) rmSync(file, { force: true });
    },
  };
}
