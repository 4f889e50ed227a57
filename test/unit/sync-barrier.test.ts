// The syncfs barrier the mail filer waits on (D225): many flushes share few syncs, a flush never
// resolves on a sync that started before it, a failed sync fails every flush whose writes it may
// have covered, and the real syncfs thread (bun:ffi, libc) runs here. The sync function is
// injected where a test needs to hold or fail it; the blob store is the real one.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { closeSync, existsSync, fstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { platform, tmpdir } from "node:os";
import { join } from "node:path";
import { SyncBarrier } from "../../src/blobs/barrier";
import { DiskBlobStore } from "../../src/blobs/disk";
import { kernelReportsSyncfsErrors, syncfsAvailable, syncfsBarrier, syncfsFileSystem, syncfsThread } from "../../src/blobs/syncfs";

/** A sync the test finishes by hand: release(i) or fail(i, code) the i-th run. */
function heldSync() {
  const runs: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  const sync = () => new Promise<void>((resolve, reject) => runs.push({ resolve, reject }));
  const until = async (n: number) => {
    const deadline = Date.now() + 5_000;
    while (runs.length < n && Date.now() < deadline) await Bun.sleep(1);
    expect(runs.length).toBe(n);
  };
  return {
    sync,
    runs,
    until,
    release: (i: number) => runs[i]!.resolve(),
    fail: (i: number, code = "EIO") => runs[i]!.reject(Object.assign(new Error(`sync failed: ${code}`), { code })),
  };
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: { code?: string }) => e.code ?? "error",
  );

describe("SyncBarrier", () => {
  test("100 flushes while one sync runs share ONE next sync (two in all), which starts only after the first ended", async () => {
    const h = heldSync();
    const b = new SyncBarrier(h.sync);
    const first = b.flush(b.mark());
    const rest = Array.from({ length: 100 }, () => b.flush(b.mark()));
    await h.until(1);
    let restDone = false;
    void Promise.all(rest).then(() => (restDone = true));
    h.release(0);
    await first;
    await Bun.sleep(5);
    // The first sync started before they asked: it cannot cover their writes.
    expect(restDone).toBe(false);
    await h.until(2);
    h.release(1);
    await Promise.all(rest);
    expect(b.stats).toMatchObject({ syncs: 2, flushes: 101, failures: 0 });
  });

  test("a flush when nothing runs starts a sync at once; a later one starts another", async () => {
    let n = 0;
    const b = new SyncBarrier(async () => {
      n++;
    });
    await b.flush(b.mark());
    await b.flush(b.mark());
    expect(n).toBe(2);
  });

  test("a failed sync rejects every flush waiting on it, with its code", async () => {
    const h = heldSync();
    const b = new SyncBarrier(h.sync);
    const waiting = Array.from({ length: 5 }, () => outcome(b.flush(b.mark())));
    await h.until(1);
    h.fail(0, "ENOSPC");
    expect(await Promise.all(waiting)).toEqual(["ENOSPC", "ENOSPC", "ENOSPC", "ENOSPC", "ENOSPC"]);
    expect(b.stats.failures).toBe(1);
  });

  test("a flush whose writes began before a failed sync fails even when its own sync succeeds", async () => {
    // syncfs reports a writeback error once: the failing sync may have reported the loss of a
    // write whose caller waits for the next sync, which then succeeds.
    const h = heldSync();
    const b = new SyncBarrier(h.sync);
    const early = outcome(b.flush(b.mark())); // starts sync 0
    await h.until(1);
    const markBeforeWrite = b.mark(); // a caller starts writing while sync 0 runs
    h.fail(0);
    expect(await early).toBe("EIO");
    const late = outcome(b.flush(markBeforeWrite)); // it asks after the failure: sync 1
    await h.until(2);
    h.release(1);
    expect(await late).toBe("EIO");
    const fresh = outcome(b.flush(b.mark())); // a caller that began writing after the failure
    await h.until(3);
    h.release(2);
    expect(await fresh).toBe("ok");
  });

  test("callers queued behind a failing sync are failed at once (they may have written while it ran)", async () => {
    const h = heldSync();
    const b = new SyncBarrier(h.sync);
    const first = outcome(b.flush(b.mark()));
    await h.until(1);
    const queued = Array.from({ length: 3 }, () => outcome(b.flush(b.mark())));
    h.fail(0);
    expect(await first).toBe("EIO");
    expect(await Promise.all(queued)).toEqual(["EIO", "EIO", "EIO"]);
    expect(h.runs.length).toBe(1); // no sync was run for them
    const after = outcome(b.flush(b.mark())); // afterwards, the barrier works again
    await h.until(2);
    h.release(1);
    expect(await after).toBe("ok");
  });
});

describe("SyncBarrier backs off while syncs are slow (another writer's data)", () => {
  test("a sync running past slowMs, and backoffMs after a slow one, tell callers to fsync their own files", async () => {
    let t = 0;
    const h = heldSync();
    const b = new SyncBarrier(h.sync, () => {}, { slowMs: 20, backoffMs: 1_000, now: () => t });
    expect(b.worthWaiting()).toBe(true);
    const f = b.flush(b.mark());
    await h.until(1);
    t = 10;
    expect(b.worthWaiting()).toBe(true); // running, not slow yet
    t = 25;
    expect(b.worthWaiting()).toBe(false); // running past 20 ms
    t = 40;
    h.release(0);
    await f;
    expect(b.stats.slow).toBe(1);
    t = 1_030;
    expect(b.worthWaiting()).toBe(false); // within 1 s of the slow sync's end
    t = 1_041;
    expect(b.worthWaiting()).toBe(true); // try the barrier again
    const g = b.flush(b.mark());
    await h.until(2);
    t = 1_045;
    h.release(1);
    await g;
    expect(b.worthWaiting()).toBe(true); // a quick sync: no backoff
    expect(b.stats).toMatchObject({ syncs: 2, slow: 1 });
  });
});

/** syncfs usable for the temp folder the tests write in (not on a tmpfs /tmp). */
const usable = syncfsAvailable() && syncfsFileSystem(tmpdir()) !== null;

describe("syncfs on this machine", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "pier-syncfs-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test("kernel versions: syncfs reports writeback errors from Linux 5.8 on", () => {
    expect(kernelReportsSyncfsErrors("5.7.19")).toBe(false);
    expect(kernelReportsSyncfsErrors("4.19.0-amd64")).toBe(false);
    expect(kernelReportsSyncfsErrors("5.8.0")).toBe(true);
    expect(kernelReportsSyncfsErrors("6.18.44-fc-v669")).toBe(true);
    expect(kernelReportsSyncfsErrors("not a version")).toBe(false);
  });

  test("is available here (Linux, glibc): the mail filer uses it on ext4, XFS and btrfs", () => {
    // The machines Pier is tested on are glibc Linux >= 5.8; elsewhere the fallback is used.
    expect(syncfsAvailable()).toBe(platform() === "linux");
    const fs = syncfsFileSystem(dir);
    if (fs) expect(["ext4", "xfs", "btrfs"]).toContain(fs);
    const barrier = syncfsBarrier(dir);
    expect(barrier !== null).toBe(syncfsAvailable() && fs !== null);
    barrier?.close();
  });

  test.if(platform() === "linux" && existsSync("/dev/shm"))("a file system not known to be made durable by syncfs (tmpfs here) gets no barrier", () => {
    expect(syncfsFileSystem("/dev/shm")).toBeNull();
    expect(syncfsBarrier("/dev/shm")).toBeNull();
  });

  test.if(usable)("the real syncfs thread: many flushes, few syncs; blobs written with deferSync are whole after it", async () => {
    const store = new DiskBlobStore(dir);
    await store.init();
    const barrier = syncfsBarrier(dir)!;
    try {
      const mark = barrier.mark();
      const bodies = Array.from({ length: 40 }, (_, i) => `blob ${i} `.repeat(1000));
      const infos = await Promise.all(bodies.map((b) => store.putBytes(b, { deferSync: true })));
      await Promise.all(infos.map(() => barrier.flush(mark)));
      expect(barrier.stats.flushes).toBe(40);
      expect(barrier.stats.syncs).toBeLessThanOrEqual(2);
      expect(barrier.stats.failures).toBe(0);
      for (const [i, info] of infos.entries()) expect(await store.file(info.sha256).text()).toBe(bodies[i]!);
      expect(readdirSync(join(dir, "tmp"))).toEqual([]);
    } finally {
      barrier.close();
    }
  });

  test.if(usable)("a closed thread fails flushes instead of pretending", async () => {
    const thread = syncfsThread(dir)!;
    await thread.sync();
    thread.close();
    expect(await outcome(thread.sync())).toBe("error");
  });

  test.if(usable)("a folder that cannot be opened is refused at once, not at the first message", () => {
    expect(() => syncfsBarrier(join(dir, "missing"))).toThrow();
  });
});

describe("blob names a crash may have left short", () => {
  let dir: string;
  let store: DiskBlobStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "pier-syncfs-blobs-"));
    store = new DiskBlobStore(dir);
    await store.init();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const plant = (bytes: string, left: string) => {
    const sha = createHash("sha256").update(bytes).digest("hex");
    const path = store.pathOf(sha);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, left);
    return sha;
  };

  test("a deferred write keeps a stored blob that is whole: it never renames its unflushed copy over it", async () => {
    // The stored blob may be an acknowledged message's; renaming an unflushed copy over it
    // could leave the name empty after a power cut on some file systems.
    const body = "an acknowledged message ".repeat(50);
    const sha = plant(body, body);
    // Held open, the planted file's inode cannot be freed and its number handed to a new file.
    const held = openSync(store.pathOf(sha), "r");
    try {
      expect((await store.putBytes(body, { deferSync: true })).sha256).toBe(sha);
      await store.put(
        (async function* () {
          yield new TextEncoder().encode(body);
        })(),
        {},
        { deferSync: true },
      );
      expect(statSync(store.pathOf(sha)).ino).toBe(fstatSync(held).ino);
    } finally {
      closeSync(held);
    }
    expect(await store.file(sha).text()).toBe(body);
    expect(readdirSync(join(dir, "tmp"))).toEqual([]); // the streamed copy was not left behind
  });

  test("a short file under the name is replaced, not reused (putBytes, put, deferred putBytes)", async () => {
    const body = "the whole blob ".repeat(100);
    const sha = plant(body, ""); // a crash after the rename, before the barrier: an empty file
    expect((await store.putBytes(body)).sha256).toBe(sha);
    expect(await store.file(sha).text()).toBe(body);

    const body2 = "streamed blob ".repeat(100);
    const sha2 = plant(body2, "streamed");
    await store.put(
      (async function* () {
        yield new TextEncoder().encode(body2);
      })(),
    );
    expect(await store.file(sha2).text()).toBe(body2);

    const body3 = "deferred blob ".repeat(100);
    const sha3 = plant(body3, "x".repeat(body3.length)); // even a full-size file is not trusted by a deferred write
    await store.putBytes(body3, { deferSync: true });
    expect(await store.file(sha3).text()).toBe(body3);
    expect(statSync(store.pathOf(sha3)).size).toBe(body3.length);
  });
});
