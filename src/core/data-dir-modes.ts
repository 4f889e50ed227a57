// Who may read the data dir. pier.db holds received mail, the mail outbox (login codes while no
// relay is set), site leads and form submissions; secret.key unseals the rest. `mkdir(mode)`
// applies only when it creates the folder, and SQLite creates pier.db under the umask, so a data
// dir that already existed (./data in a checkout, Docker's /data) was left as wide as it was made
// (0755, pier.db 0644): readable by every local user (D262).
import { chmodSync, statSync } from "node:fs";
import { join } from "node:path";

/** Files only Pier's user may read (SQLite gives -wal and -shm the mode of pier.db when it creates them). */
export const PRIVATE_FILES = ["pier.db", "pier.db-wal", "pier.db-shm", "secret.key"];

export interface LooseMode {
  path: string;
  /** Its permission bits now, e.g. 0o755. */
  mode: number;
  /** What Pier wants: 0o700 for the folder, 0o600 for the files. */
  want: number;
}

export const octal = (mode: number) => `0${mode.toString(8).padStart(3, "0")}`;

/** The data dir and its private files when the group or other users may access them. */
export function looseModes(dataDir: string): LooseMode[] {
  const out: LooseMode[] = [];
  const look = (path: string, want: number) => {
    let mode: number;
    try {
      mode = statSync(path).mode & 0o777;
    } catch {
      return; // not there (yet)
    }
    if (mode & 0o077) out.push({ path, mode, want });
  };
  look(dataDir, 0o700);
  for (const f of PRIVATE_FILES) look(join(dataDir, f), 0o600);
  return out;
}

export interface TightenResult {
  tightened: LooseMode[];
  /** chmod refused (not the owner, a read-only mount): the operator must fix these. */
  failed: (LooseMode & { error: string })[];
}

/** chmod what looseModes finds to 0700 / 0600. */
export function tightenDataDir(dataDir: string): TightenResult {
  const result: TightenResult = { tightened: [], failed: [] };
  for (const l of looseModes(dataDir)) {
    const error = tighten(l);
    if (error === null) result.tightened.push(l);
    else result.failed.push({ ...l, error });
  }
  return result;
}

/** chmod one path to what Pier wants; null when done, else why not (an errno code). */
export function tighten(l: LooseMode): string | null {
  try {
    chmodSync(l.path, l.want);
    return null;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  }
}

/** One line per path: "/data 0755 -> 0700". */
export const describeModes = (list: LooseMode[]) => list.map((l) => `${l.path} ${octal(l.mode)} -> ${octal(l.want)}`).join(", ");

/**
 * Commands that write the data dir (serve, admin, backup, restore) create everything private
 * from the first byte: no window between SQLite creating a file and the chmod above.
 */
export function usePrivateUmask(): void {
  process.umask(0o077);
}
