// A SyncBarrier backed by Linux syncfs(2) on the file system holding a directory, run in a
// small worker thread (syncfs-worker.ts) through bun:ffi. Null where that is not available
// (not Linux, a kernel before 5.8 whose syncfs does not report writeback errors, no glibc
// `libc.so.6` to open, e.g. a musl build) or not known to be enough (a file system other than
// ext4, XFS or btrfs: FUSE before Linux 5.15 ignored syncfs, network and overlay file systems
// flush elsewhere): the caller then keeps fsyncing every file and its directory, as before.
import { dlopen, FFIType } from "bun:ffi";
import { closeSync, openSync, statfsSync } from "node:fs";
import { constants, platform, release } from "node:os";
import { SyncBarrier, type FileSystemSync } from "./barrier";
import type { SyncfsReply, SyncfsRequest } from "./syncfs-worker";

/** syncfs reports writeback errors since Linux 5.8 (before, it returned 0 after a failed write). */
export function kernelReportsSyncfsErrors(rel = release()): boolean {
  const m = /^(\d+)\.(\d+)/.exec(rel);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 5 || (major === 5 && minor >= 8);
}

/** Whether this process can call syncfs through libc (checked once; the worker opens it again). */
let available: boolean | null = null;
export function syncfsAvailable(): boolean {
  if (available !== null) return available;
  available = false;
  if (platform() !== "linux" || !kernelReportsSyncfsErrors()) return false;
  try {
    const lib = dlopen("libc.so.6", { syncfs: { args: [FFIType.i32], returns: FFIType.i32 } });
    available = typeof lib.symbols.syncfs === "function";
    lib.close();
  } catch {
    // no glibc (musl, another OS): fall back to fsync per file
  }
  return available;
}

/** statfs(2) f_type of the local file systems whose syncfs writes and commits everything (ext2/3/4 share a magic). */
const TRUSTED_FILE_SYSTEMS = new Map([
  [0xef53, "ext4"],
  [0x58465342, "xfs"],
  [0x9123683e, "btrfs"],
]);

/** The name of `dir`'s file system when syncfs is known to make its files durable, else null. */
export function syncfsFileSystem(dir: string): string | null {
  try {
    return TRUSTED_FILE_SYSTEMS.get(Number(statfsSync(dir).type)) ?? null;
  } catch {
    return null;
  }
}

/** From source the worker sits beside this file; in the binary it is an extra entrypoint (scripts/build.ts). */
function workerEntry(): string {
  return import.meta.url.includes("/$bunfs/") ? "./blobs/syncfs-worker.ts" : new URL("./syncfs-worker.ts", import.meta.url).href;
}

const errnoNames = new Map(Object.entries(constants.errno).map(([name, n]) => [n, name]));

/** The syncfs(2) of the file system holding `dir`, run in its own thread; close() stops the thread. */
export interface SyncfsThread {
  sync: FileSystemSync;
  close(): void;
}

/** Null when syncfs cannot be used here (syncfsAvailable, syncfsFileSystem); throws when `dir` cannot be opened. */
export function syncfsThread(dir: string): SyncfsThread | null {
  if (!syncfsAvailable()) return null;
  closeSync(openSync(dir, "r")); // the directory must exist and be readable now, not at the first message
  if (!syncfsFileSystem(dir)) return null;
  const worker = new Worker(workerEntry());
  (worker as unknown as { unref(): void }).unref(); // an idle thread does not keep the process alive
  const waiting = new Map<number, { resolve: () => void; reject: (e: unknown) => void }>();
  let nextId = 0;
  let broken: Error | null = null;
  const failAll = (e: Error) => {
    broken = e;
    for (const w of waiting.values()) w.reject(e);
    waiting.clear();
  };
  worker.onmessage = (e: MessageEvent<SyncfsReply>) => {
    const m = e.data;
    if (m.kind === "open") {
      if (!m.ok) failAll(new Error(`syncfs thread could not open ${dir}: ${m.error}`));
      return;
    }
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (!w) return;
    if (m.rc === 0) return w.resolve();
    const code = errnoNames.get(m.errno) ?? "EIO";
    // ENOSPC keeps its code: the SMTP layer answers a full disk with 452, anything else with 451.
    w.reject(Object.assign(new Error(`syncfs of ${dir} failed: ${code}`), { code }));
  };
  worker.onerror = () => failAll(new Error("syncfs thread failed"));
  worker.postMessage({ kind: "open", dir } satisfies SyncfsRequest);
  return {
    sync: () =>
      new Promise<void>((resolve, reject) => {
        if (broken) return reject(broken);
        const id = ++nextId;
        waiting.set(id, { resolve, reject });
        worker.postMessage({ kind: "sync", id } satisfies SyncfsRequest);
      }),
    close() {
      failAll(new Error("syncfs thread closed"));
      worker.terminate();
    },
  };
}

/**
 * A barrier over the file system of `dir`, or null when syncfs cannot be used here. Close it
 * when done (it stops its thread); a barrier whose thread died fails every flush (451s), it
 * never pretends.
 */
export function syncfsBarrier(dir: string): SyncBarrier | null {
  const thread = syncfsThread(dir);
  return thread ? new SyncBarrier(thread.sync, thread.close) : null;
}
