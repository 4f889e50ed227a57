// A consistent copy of a live database: `VACUUM INTO` reads one snapshot (a read transaction:
// writers in other connections and processes go on) and writes a compact, self-contained file.
// bun:sqlite has no online backup API, and VACUUM INTO was measured to keep concurrent commits
// under 8 ms (docs/decisions.md, "Operations: database snapshots").
import { Database } from "bun:sqlite";
import { chmodSync, closeSync, openSync, unlinkSync } from "node:fs";

export function snapshotInline(source: string, target: string): void {
  const db = new Database(source, { readonly: true });
  try {
    db.exec("PRAGMA busy_timeout = 10000");
    // VACUUM INTO creates its file under the umask (0644 as usual): the copy is the whole
    // database, so it is made for Pier's user only first (SQLite accepts an empty target; D262).
    closeSync(openSync(target, "wx", 0o600));
    chmodSync(target, 0o600);
    db.query("VACUUM INTO ?").run(target);
  } catch (e) {
    try {
      unlinkSync(target);
    } catch {}
    throw e;
  } finally {
    db.close();
  }
}

/**
 * From source the worker file sits beside this one; in the compiled binary it is an extra
 * entrypoint of the build (scripts/build.ts), embedded under src/ as features/operations/.
 */
function workerEntry(): string {
  return import.meta.url.includes("/$bunfs/") ? "./features/operations/snapshot-worker.ts" : new URL("./snapshot-worker.ts", import.meta.url).href;
}

/** VACUUM INTO on a worker thread, so the calling thread (a serving process) is never blocked. */
export async function snapshotDatabase(source: string, target: string): Promise<void> {
  let worker: Worker;
  try {
    worker = new Worker(workerEntry());
  } catch {
    // No worker (an unusual build): copying on this thread is slower for the caller, not wrong.
    snapshotInline(source, target);
    return;
  }
  try {
    await new Promise<void>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<{ ok: boolean; error?: string }>) => (e.data.ok ? resolve() : reject(new Error(e.data.error)));
      worker.onerror = (e) => reject(new Error(`database snapshot worker failed: ${e.message}`));
      worker.postMessage({ source, target });
    });
  } finally {
    worker.terminate();
  }
}
