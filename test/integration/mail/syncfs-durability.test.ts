// A 250 only after the shared syncfs (D225): the real filer (reading worker, group commit, real
// database and blob store) behind a real SMTP receiver, spoken to over a socket. The file-system
// sync is injected so it can fail: it runs the REAL syncfs of the blob store's file system and
// then, when the test says so, reports an error as syncfs does after a failed writeback. A
// failed blob sync means no 250 and nothing filed; with the WAL on the barrier too (an option),
// a failed WAL sync means no 250 (committed: the sender retries and a duplicate is preferred to
// a loss); a full disk is 452; the fallback (per-file fsync) still files.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DiskBlobStore } from "../../../src/blobs/disk";
import { tmpdir } from "node:os";
import { syncfsAvailable, syncfsFileSystem, syncfsThread, type SyncfsThread } from "../../../src/blobs/syncfs";
import { createInboundHandler, type InboundFiler } from "../../../src/features/mail/filer";
import { tableResolver } from "../../../src/features/mail/sender-auth";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { RawSmtp, startReceiver } from "./smtp-harness";

let t: TestPier;
let u: TestUser;
let bucketId: string;
let address: string;
let real: SyncfsThread;

beforeAll(async () => {
  t = await startTestPier({ smtpPort: 0, mailDomain: "mail.pier.test" });
  u = await t.user();
  const b = await createBucket(t, u, { title: "synced", inbound_email: { enabled: true } });
  bucketId = b.id;
  address = b.inbound_email.address;
  real = syncfsThread((t.pier.deps.blobs as DiskBlobStore).dir)!; // null where the describe below is skipped
});
afterAll(async () => {
  real?.close();
  await t?.stop();
});

const filed = async () =>
  (await t.api("GET", `/api/v1/buckets/${bucketId}/inbound_email/messages?limit=500`, { key: u.key })).body.data.messages.map(
    (m: { subject: string }) => m.subject,
  );

/** One message over a real SMTP conversation; the reply to the end of DATA. */
async function send(filer: InboundFiler, subject: string, lines = 500): Promise<number> {
  const r = await startReceiver({ handler: filer, tls: null });
  const c = await RawSmtp.open(r.port);
  try {
    expect((await c.cmd("EHLO sender.test")).code).toBe(250);
    expect((await c.cmd("MAIL FROM:<a@sender.test>")).code).toBe(250);
    expect((await c.cmd(`RCPT TO:<${address}>`)).code).toBe(250);
    expect((await c.cmd("DATA")).code).toBe(354);
    return (await c.cmd(`From: a@sender.test\r\nTo: ${address}\r\nSubject: ${subject}\r\n\r\n${"body line\r\n".repeat(lines)}.`)).code;
  } finally {
    c.close();
    await r.stop();
  }
}

/** The filer with an injected sync: the real syncfs, then the planned outcome (null: success, else an errno code). */
function filerWith(plan: (string | null)[], syncfs: "blobs" | "blobs+wal" = "blobs", extraMs = 0) {
  let calls = 0;
  const filer = createInboundHandler(t.pier.deps, {
    resolver: tableResolver({}),
    syncfs,
    fileSystemSync: async () => {
      calls++;
      await real.sync();
      if (extraMs) await Bun.sleep(extraMs); // as long as a sync that writes another program's data
      const code = plan.shift() ?? null;
      if (code) throw Object.assign(new Error(`syncfs failed: ${code}`), { code });
    },
  });
  return { filer, calls: () => calls };
}

// The test server's data dir is in the temp folder: syncfs is used there unless it is, e.g., a tmpfs.
describe.if(syncfsAvailable() && syncfsFileSystem(tmpdir()) !== null)("inbound mail waits for the shared syncfs", () => {
  test("a message's blobs wait for one sync before the commit; the WAL keeps its fsync: 250, filed", async () => {
    const { filer, calls } = filerWith([]);
    try {
      expect(await send(filer, "synced ok")).toBe(250);
      expect(calls()).toBe(1);
      expect(filer.barrier!.stats).toMatchObject({ syncs: 1, flushes: 1, failures: 0 });
      expect(filer.committer.stats.walSyncMs).toBeGreaterThan(0); // the WAL's own fsync ran
    } finally {
      filer.close();
    }
    expect(await filed()).toContain("synced ok");
  });

  test("the blobs' sync fails: 451, nothing filed", async () => {
    const before = await filed();
    const { filer, calls } = filerWith(["EIO"]);
    try {
      expect(await send(filer, "blob sync failed")).toBe(451);
      expect(calls()).toBe(1);
      expect(filer.committer.stats.batches).toBe(0);
    } finally {
      filer.close();
    }
    expect(await filed()).toEqual(before);
  });

  test("with the WAL on the barrier too (blobs+wal), a message waits for two syncs: 250", async () => {
    const { filer, calls } = filerWith([], "blobs+wal");
    try {
      expect(await send(filer, "synced twice")).toBe(250);
      // One after the other: the blobs' before the commit, the WAL's after it.
      expect(calls()).toBe(2);
      expect(filer.barrier!.stats).toMatchObject({ syncs: 2, flushes: 2, failures: 0 });
    } finally {
      filer.close();
    }
    expect(await filed()).toContain("synced twice");
  });

  test("with the WAL on the barrier, its sync fails after the commit: 451 (the sender retries; a duplicate beats a loss)", async () => {
    const { filer, calls } = filerWith([null, "EIO"], "blobs+wal");
    try {
      expect(await send(filer, "wal sync failed")).toBe(451);
      expect(calls()).toBe(2);
      expect(filer.committer.stats.batches).toBe(1);
    } finally {
      filer.close();
    }
  });

  test("a message too large to be held in memory (over 128 KB) fsyncs its blobs instead: no sync, 250", async () => {
    // A syncfs would also write its temp file, deleted right after the 250, and its flush is its bytes.
    const { filer, calls } = filerWith(["EIO"]);
    try {
      expect(await send(filer, "large one", 20_000)).toBe(250);
      expect(calls()).toBe(0);
    } finally {
      filer.close();
    }
    expect(await filed()).toContain("large one");
  });

  test("after a slow sync (another writer's data) the next message fsyncs its own blobs: 250, no second sync", async () => {
    const { filer, calls } = filerWith([], "blobs", 50);
    try {
      expect(await send(filer, "slow sync")).toBe(250);
      expect(await send(filer, "own fsync")).toBe(250);
      expect(calls()).toBe(1);
      expect(filer.barrier!.stats.slow).toBe(1);
      expect(filer.committer.stats.fsyncedWhileSlow).toBe(1);
    } finally {
      filer.close();
    }
    expect(await filed()).toEqual(expect.arrayContaining(["slow sync", "own fsync"]));
  });

  test("a full disk reported by syncfs is 452", async () => {
    const { filer } = filerWith(["ENOSPC"]);
    try {
      expect(await send(filer, "disk full")).toBe(452);
    } finally {
      filer.close();
    }
    expect(await filed()).not.toContain("disk full");
  });

  test("after a failure the next message is filed (a failure taints only writes made before it)", async () => {
    const { filer } = filerWith(["EIO"]);
    try {
      expect(await send(filer, "first fails")).toBe(451);
      expect(await send(filer, "second files")).toBe(250);
    } finally {
      filer.close();
    }
    const subjects = await filed();
    expect(subjects).toContain("second files");
    expect(subjects).not.toContain("first fails");
  });
});

describe("without syncfs (the fallback)", () => {
  test("every blob is fsynced with its directory and the WAL fsynced: no barrier, 250, filed", async () => {
    const filer = createInboundHandler(t.pier.deps, { resolver: tableResolver({}), syncfs: "off" });
    try {
      expect(filer.barrier).toBeNull();
      expect(await send(filer, "fallback")).toBe(250);
      expect(filer.committer.stats).toMatchObject({ batches: 1, blobSyncMs: 0 }); // no wait for a syncfs
      expect(filer.committer.stats.walSyncMs).toBeGreaterThan(0);
    } finally {
      filer.close();
    }
    expect(await filed()).toContain("fallback");
  });
});
