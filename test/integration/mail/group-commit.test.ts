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

const versions = async (id: string) => (await t.api("GET", `/api/v1/buckets/${id}/versions?limit=1000`, { key: u.key })).body.data.versions.length;
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
      expect(filer.committer.stats).toEqual({ batches: 1, messages: 2, largest: 3 });
    } finally {
      filer.close();
    }
    expect(await Promise.all(ids.map(versions))).toEqual([before[0]! + 1, before[1]!, before[2]! + 1]);
    expect(await messages(ids[0]!)).toEqual(["message 0"]);
    expect(await messages(ids[1]!)).toEqual([]);
    expect(await messages(ids[2]!)).toEqual(["message 2"]);
  });
});
