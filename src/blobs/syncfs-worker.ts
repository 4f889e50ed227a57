// The thread that runs syncfs(2) for a SyncBarrier (syncfs.ts). syncfs blocks its caller until
// the whole file system is on disk (a millisecond or more), so it runs here rather than on the
// event loop or in the mail reading worker, which have other work meanwhile. One sync at a time
// (the barrier never asks for two at once); errno is read right after the call, on this thread.
import { dlopen, FFIType, read } from "bun:ffi";
import { closeSync, openSync } from "node:fs";

declare const self: Worker;

export type SyncfsRequest = { kind: "open"; dir: string } | { kind: "sync"; id: number };
export type SyncfsReply = { kind: "open"; ok: boolean; error?: string } | { kind: "sync"; id: number; rc: number; errno: number };

let fd = -1;
let libc: ReturnType<typeof open> | null = null;

function open() {
  return dlopen("libc.so.6", {
    syncfs: { args: [FFIType.i32], returns: FFIType.i32 },
    __errno_location: { args: [], returns: FFIType.ptr },
  });
}

self.onmessage = (e: MessageEvent<SyncfsRequest>) => {
  const m = e.data;
  if (m.kind === "open") {
    try {
      libc = open();
      if (fd !== -1) closeSync(fd);
      fd = openSync(m.dir, "r");
      self.postMessage({ kind: "open", ok: true } satisfies SyncfsReply);
    } catch (err) {
      self.postMessage({ kind: "open", ok: false, error: (err as Error)?.message ?? String(err) } satisfies SyncfsReply);
    }
    return;
  }
  if (!libc) {
    self.postMessage({ kind: "sync", id: m.id, rc: -1, errno: 0 } satisfies SyncfsReply);
    return;
  }
  const rc = libc.symbols.syncfs(fd);
  const errno = rc === 0 ? 0 : read.i32(libc.symbols.__errno_location()!, 0);
  self.postMessage({ kind: "sync", id: m.id, rc, errno } satisfies SyncfsReply);
};
