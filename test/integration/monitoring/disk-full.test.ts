// A full disk: the data dir lives on a 20 MiB tmpfs that the test fills to the last byte.
// Uploads, text writes and mail are refused with a clear answer (HTTP 507 STORAGE_FULL, SMTP
// 452), nothing is half-written (no temp file, no file row, no blob), /readyz says why, and
// everything works again once space is freed. Mounting needs root: elsewhere the file is
// skipped with a message saying so.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { mountSmallDisk } from "../../helpers/small-disk";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { declared, putBytes, type LocalFile } from "../../helpers/uploads";
import { createBucket } from "../../helpers/buckets";
import { RawSmtp } from "../mail/smtp-harness";

const disk = mountSmallDisk(20, "test/integration/monitoring/disk-full.test.ts", "a full disk");
const { mounted, mountPoint } = disk;
const fillDisk = disk.fill;
const freeSpace = disk.free;
let t: TestPier;
let u: TestUser;
let bucketId: string;
let address: string;

describe.skipIf(!mounted)("a full disk", () => {
  beforeAll(async () => {
    const dataDir = join(mountPoint, "data");
    mkdirSync(dataDir);
    t = await startTestPier({ dataDir, smtpPort: 0, mailDomain: "mail.pier.test", smtpRateLimitPerIp: 10_000 });
    u = await t.user();
    const b = await createBucket(t, u, { title: "Full disk", inbound_email: { enabled: true } });
    bucketId = b.id;
    address = b.inbound_email.address;
  });
  afterAll(async () => {
    try {
      await t?.stop();
    } finally {
      disk.unmount();
    }
  });

  const fileCount = () => (t.pier.deps.sqlite.query("SELECT count(*) AS n FROM files").get() as { n: number }).n;
  const tempFiles = () =>
    [join(t.dataDir, "blobs", "tmp"), join(t.dataDir, "tmp", "smtp")].flatMap((d) => (existsSync(d) ? readdirSync(d).map((f) => join(d, f)) : []));
  const blobPath = (sha: string) => join(t.dataDir, "blobs", "sha256", sha.slice(0, 2), sha.slice(2, 4), sha);

  async function declare(f: LocalFile) {
    const d = declared(f);
    const r = await t.api("POST", "/api/v1/direct_uploads", {
      key: u.key,
      body: {
        bucket_id: bucketId,
        path: f.path,
        blob: { filename: d.name, byte_size: d.byte_size, checksum: d.checksum, content_type: d.content_type, sha256: d.sha256, purpose: "bucket_file" },
      },
    });
    expect(r.status).toBe(201);
    return r.body.data;
  }

  async function sendMail(subject: string) {
    const c = await RawSmtp.open(t.pier.smtp!.port);
    try {
      await c.cmd("EHLO client.test");
      expect((await c.cmd("MAIL FROM:<a@sender.test>")).code).toBe(250);
      expect((await c.cmd(`RCPT TO:<${address}>`)).code).toBe(250);
      expect((await c.cmd("DATA")).code).toBe(354);
      c.write(`From: a@sender.test\r\nTo: ${address}\r\nSubject: ${subject}\r\n\r\n${"body line\r\n".repeat(2000)}.\r\n`);
      return await c.reply(30_000);
    } finally {
      c.close();
    }
  }

  test("uploads, text writes and mail are refused clearly, nothing is half-written, and all work again once space is freed", async () => {
    const big = { path: "big.bin", bytes: crypto.getRandomValues(new Uint8Array(1024 * 1024)), contentType: "application/octet-stream" };
    const upload = await declare(big);
    const filesBefore = fileCount();
    fillDisk();
    try {
      // Upload: the body cannot be stored.
      const put = await putBytes(upload.upload, big.bytes);
      expect(put.status).toBe(507);
      const body = (await put.json()) as { error: { code: string } };
      expect(body.error.code).toBe("STORAGE_FULL");
      expect(put.headers.get("retry-after")).not.toBeNull();
      expect(existsSync(blobPath(declared(big).sha256))).toBe(false);

      // A text write through the JSON API.
      const text = await t.api("POST", `/api/v1/buckets/${bucketId}/files/append_text`, {
        key: u.key,
        body: { path: "notes.txt", text: "x".repeat(60_000), create: true },
      });
      expect(text.status).toBe(507);
      expect(text.body.error.code).toBe("STORAGE_FULL");

      // Mail: 452, so the sending server keeps the message and retries later.
      const mail = await sendMail("while full");
      expect(mail.code).toBe(452);

      // Readiness tells the operator why.
      const ready = await t.api("GET", "/readyz");
      expect(ready.status).toBe(503);
      expect(ready.body.error.details.checks.disk).toContain("full");

      // Nothing half-written.
      expect(fileCount()).toBe(filesBefore);
      expect(tempFiles()).toEqual([]);
      const inbound = await t.api("GET", `/api/v1/buckets/${bucketId}/inbound_email`, { key: u.key });
      expect(inbound.body.data.received_count).toBe(0);
    } finally {
      freeSpace();
    }

    // Space is back: the same operations succeed.
    expect((await t.api("GET", "/readyz")).status).toBe(200);
    const again = await putBytes(upload.upload, big.bytes);
    expect(again.status).toBe(200);
    const attach = await t.api("POST", `/api/v1/buckets/${bucketId}/files`, { key: u.key, body: { signed_blob_id: upload.signed_blob_id } });
    expect(attach.status).toBe(201);
    const text = await t.api("POST", `/api/v1/buckets/${bucketId}/files/append_text`, { key: u.key, body: { path: "notes.txt", text: "hello", create: true } });
    expect(text.status).toBe(200);
    expect((await sendMail("after space was freed")).code).toBe(250);
    const inbound = await t.api("GET", `/api/v1/buckets/${bucketId}/inbound_email`, { key: u.key });
    expect(inbound.body.data.received_count).toBe(1);
    expect(tempFiles()).toEqual([]);
  });
});
