// Group commit keeps per-message semantics: messages filed in one transaction still get one
// bucket version each, and a message refused inside the batch (its address switched off after
// RCPT TO) fails alone while the others of the same transaction are filed. The filer is the
// real one, on the real database, fed the way the SMTP layer feeds it (a raw file + envelope).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInboundHandler } from "../../../src/features/mail/filer";
import { tableResolver } from "../../../src/features/mail/sender-auth";
import { coalesced, walSyncer } from "../../../src/features/mail/wal-sync";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";

let t: TestPier;
let u: TestUser;
let dir: string;

beforeAll(async () => {
  t = await startTestPier({ smtpPort: 0, mailDomain: "mail.pier.test" });
  u = await t.user();
  dir = mkdtempSync(join(tmpdir(), "pier-group-commit-"));
});
afterAll(async () => {
  await t?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const versions = async (id: string) => (await t.api("GET", `/api/v1/buckets/${id}/versions?limit=500`, { key: u.key })).body.data.versions.length;
const messages = async (id: string) =>
  (await t.api("GET", `/api/v1/buckets/${id}/inbound_email/messages`, { key: u.key })).body.data.messages.map((m: { subject: string }) => m.subject);

describe("group commit", () => {
  test("three messages in one transaction: one version each; the one whose address was switched off fails alone", async () => {
    const ids: string[] = [];
    for (const title of ["first", "switched off", "third"]) ids.push((await createBucket(t, u, { title, inbound_email: { enabled: true } })).id);
    const before = await Promise.all(ids.map(versions));
    // Accepted at RCPT TO earlier; switched off before its message is committed.
    const off = await t.api("PATCH", `/api/v1/buckets/${ids[1]}`, { key: u.key, body: { bucket: { inbound_email: { enabled: false } } } });
    expect(off.status).toBe(200);

    // maxBatch 3: the batch commits when the third message arrives, whatever the machine's speed.
    const filer = createInboundHandler(t.pier.deps, { groupCommit: { maxBatch: 3, maxWaitMs: 60_000 }, inProcessReading: true, resolver: tableResolver({}) });
    try {
      const results = await Promise.allSettled(
        ids.map((bucketId, i) => {
          const raw = join(dir, `m${i}.eml`);
          writeFileSync(raw, `From: a@sender.test\r\nTo: box@mail.pier.test\r\nSubject: message ${i}\r\n\r\nhello ${i}\r\n`);
          return filer.deliver(
            {
              id: `grpcommit${i}abcdefgh`,
              mailFrom: "a@sender.test",
              recipients: [{ address: "box@mail.pier.test", key: bucketId }],
              size: 80,
              receivedAt: new Date(),
              smtpUtf8: false,
            },
            raw,
            { id: `s${i}`, remoteAddress: "127.0.0.1", clientHostname: "[127.0.0.1]", helo: "sender.test", tls: false },
          );
        }),
      );
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect(filer.committer.stats).toMatchObject({ batches: 1, messages: 2, largest: 3 });
    } finally {
      filer.close();
    }
    expect(await Promise.all(ids.map(versions))).toEqual([before[0]! + 1, before[1]!, before[2]! + 1]);
    expect(await messages(ids[0]!)).toEqual(["message 0"]);
    expect(await messages(ids[1]!)).toEqual([]);
    expect(await messages(ids[2]!)).toEqual(["message 2"]);
  });

  test("a committed batch is acknowledged only after the WAL fsync, which really runs", async () => {
    const { id } = await createBucket(t, u, { title: "durable", inbound_email: { enabled: true } });
    expect(t.pier.deps.sqlite.filename).toBeTruthy();
    const real = walSyncer(t.pier.deps.sqlite.filename);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let syncs = 0;
    const syncWal = async () => {
      syncs++;
      await gate;
      await real(); // the real fsync of the real WAL file: throws if the file cannot be synced
    };
    const filer = createInboundHandler(t.pier.deps, {
      groupCommit: { maxBatch: 1, maxWaitMs: 60_000, syncWal },
      inProcessReading: true,
      resolver: tableResolver({}),
    });
    try {
      const raw = join(dir, "durable.eml");
      writeFileSync(raw, "From: a@sender.test\r\nTo: box@mail.pier.test\r\nSubject: durable\r\n\r\nhello\r\n");
      let settled = false;
      const delivered = filer
        .deliver(
          {
            id: "walsync0abcdefgh",
            mailFrom: "a@sender.test",
            recipients: [{ address: "box@mail.pier.test", key: id }],
            size: 60,
            receivedAt: new Date(),
            smtpUtf8: false,
          },
          raw,
          { id: "s-durable", remoteAddress: "127.0.0.1", clientHostname: "[127.0.0.1]", helo: "sender.test", tls: false },
        )
        .finally(() => (settled = true));
      // Committed (readable through the API) while the fsync is held: no acknowledgement yet.
      const deadline = Date.now() + 20_000;
      while ((await messages(id)).length === 0 && Date.now() < deadline) await Bun.sleep(20);
      expect(await messages(id)).toEqual(["durable"]);
      await Bun.sleep(50);
      expect(syncs).toBe(1);
      expect(settled).toBe(false);
      open();
      await delivered;
      expect(settled).toBe(true);
    } finally {
      open();
      filer.close();
    }
  });

  test("fsyncs asked for while one runs share the next one", async () => {
    const releases: (() => void)[] = [];
    let runs = 0;
    const sync = coalesced(async () => {
      runs++;
      await new Promise<void>((r) => releases.push(r));
    });
    const first = sync();
    const second = sync();
    const third = sync();
    expect(runs).toBe(1);
    expect(second).toBe(third);
    releases[0]!();
    await first;
    // The shared follow-up starts only after the first finished (it must cover later writes).
    const deadline = Date.now() + 20_000;
    while (runs < 2 && Date.now() < deadline) await Bun.sleep(5);
    expect(runs).toBe(2);
    releases[1]!();
    await Promise.all([second, third]);
    expect(runs).toBe(2);
  });
});
