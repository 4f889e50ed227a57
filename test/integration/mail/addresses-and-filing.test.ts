// Inbound email end to end: a bucket gets an address over the API, real SMTP clients
// (nodemailer, swaks) send to the in-process receiver with STARTTLS, and the message is read
// back exactly as an agent would: inbound_email state, files?q=_email/, by_path message.json
// and attachment, the read status.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readlinkSync } from "node:fs";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { pendingTempFiles } from "../../../src/smtp/server";
import { join } from "node:path";
import { setReadOnly } from "../../../src/features/accounts/service";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { RawSmtp } from "./smtp-harness";
import { pierCommand } from "../../helpers/cli";

const DOMAIN = "mail.pier.test";
let t: TestPier;
let u: TestUser;

beforeAll(async () => {
  t = await startTestPier({ smtpPort: 0, mailDomain: DOMAIN, smtpRateLimitPerIp: 10_000 });
  u = await t.user();
});
afterAll(() => t.stop());

const port = () => t.pier.smtp!.port;
type Mail = Parameters<ReturnType<typeof nodemailer.createTransport>["sendMail"]>[0];
/** STARTTLS required: the client upgrades or fails (self-signed test certificate). */
const send = (mail: Mail) =>
  nodemailer
    .createTransport({ host: "127.0.0.1", port: port(), secure: false, requireTLS: true, tls: { rejectUnauthorized: false } } as SMTPTransport.Options)
    .sendMail({ from: "Sender <someone@sender.test>", ...mail });

const newBucket = (body: Record<string, unknown> = { inbound_email: { enabled: true } }, title = "Invoices Inbox") => createBucket(t, u, { title, ...body });
const inbound = async (id: string) => (await t.api("GET", `/api/v1/buckets/${id}/inbound_email`, { key: u.key })).body.data;
const versionCount = async (id: string) => (await t.api("GET", `/api/v1/buckets/${id}/versions?limit=500`, { key: u.key })).body.data.versions.length;
async function emailFiles(id: string, limit = 1000, offset = 0) {
  const r = await t.api("GET", `/api/v1/buckets/${id}/files?q=_email/&limit=${limit}&offset=${offset}`, { key: u.key });
  expect(r.status).toBe(200);
  return r.body.data;
}
async function readByPath(id: string, path: string): Promise<Response> {
  const r = await t.api("GET", `/api/v1/buckets/${id}/files/by_path?path=${encodeURIComponent(path)}`, { key: u.key });
  expect(r.status).toBe(302);
  return fetch(r.headers.get("location")!);
}

describe("bucket addresses", () => {
  test("inbound_email.enabled at creation gives an unguessable address; ready at once", async () => {
    const b = await newBucket();
    expect(b.inbound_email).toMatchObject({ enabled: true, ready: true, blocked_reason: null, received_count: 0, last_received_path: null });
    expect(b.inbound_email.address).toMatch(new RegExp(`^invoices-inbox-[0-9a-hjkmnp-tv-z]{10}@${DOMAIN.replace(/\./g, "\\.")}$`));
    expect(await inbound(b.id)).toEqual(b.inbound_email);
  });

  test("without the field there is no address; PATCH adds one, disabling keeps it, enabling restores it", async () => {
    const b = await newBucket({});
    expect(b.inbound_email).toMatchObject({ enabled: false, ready: false, address: null, blocked_reason: "not_enabled" });
    const on = await t.api("PATCH", `/api/v1/buckets/${b.id}`, { key: u.key, body: { bucket: { inbound_email: { enabled: true } } } });
    expect(on.status).toBe(200);
    const address = on.body.data.bucket.inbound_email.address;
    expect(on.body.data.bucket.inbound_email.ready).toBe(true);
    const off = await t.api("PATCH", `/api/v1/buckets/${b.id}`, { key: u.key, body: { bucket: { inbound_email: { enabled: false } } } });
    expect(off.body.data.bucket.inbound_email).toMatchObject({ enabled: false, ready: false, address, blocked_reason: "not_enabled" });
    const c = await RawSmtp.open(port());
    await c.cmd("EHLO client.test");
    await c.cmd("MAIL FROM:<a@sender.test>");
    expect((await c.cmd(`RCPT TO:<${address}>`)).code).toBe(550);
    c.close();
    const again = await t.api("PATCH", `/api/v1/buckets/${b.id}`, { key: u.key, body: { bucket: { inbound_email: { enabled: true } } } });
    expect(again.body.data.bucket.inbound_email.address).toBe(address);
  });

  test("bad inbound_email input is refused with 422 and changes nothing", async () => {
    for (const inbound_email of [{ enabled: "yes" }, { enabled: true, extra: 1 }, true, {}]) {
      const r = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "bad", inbound_email } } });
      expect(r.status).toBe(422);
    }
    expect(t.pier.deps.sqlite.query("select count(*) n from buckets where title = 'bad'").get()).toEqual({ n: 0 });
  });

  test("an archived bucket's address is refused at RCPT TO (550) and reports bucket_archived", async () => {
    const b = await newBucket();
    expect((await t.api("POST", `/api/v1/buckets/${b.id}/archive`, { key: u.key })).status).toBe(200);
    expect(await inbound(b.id)).toMatchObject({ ready: false, blocked_reason: "bucket_archived", address: b.inbound_email.address });
    await expect(send({ to: b.inbound_email.address, subject: "x", text: "x" })).rejects.toMatchObject({ responseCode: 550 });
    expect((await inbound(b.id)).received_count).toBe(0);
  });

  test("a read-only account's addresses are not ready and refuse mail (550) until it is writable again", async () => {
    const owner = await t.user();
    const b = (await t.api("POST", "/api/v1/buckets", { key: owner.key, body: { bucket: { title: "Frozen inbox", inbound_email: { enabled: true } } } })).body
      .data.bucket;
    setReadOnly(t.pier.deps, owner.accountId, true, "billing");
    const state = async () => (await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email`, { key: owner.key })).body.data;
    expect(await state()).toMatchObject({ ready: false, blocked_reason: "account_read_only", address: b.inbound_email.address });
    await expect(send({ to: b.inbound_email.address, subject: "x", text: "x" })).rejects.toMatchObject({ responseCode: 550 });
    expect((await state()).received_count).toBe(0);
    setReadOnly(t.pier.deps, owner.accountId, false, null);
    expect(await state()).toMatchObject({ ready: true, blocked_reason: null });
    await send({ to: b.inbound_email.address, subject: "thawed", text: "x" });
    expect((await state()).received_count).toBe(1);
  });

  test("with the receiver off (--smtp-port off) addresses exist but are not ready: smtp_disabled", async () => {
    const off = await startTestPier({ mailDomain: DOMAIN });
    try {
      const o = await off.user();
      const r = await off.api("POST", "/api/v1/buckets", { key: o.key, body: { bucket: { title: "No receiver", inbound_email: { enabled: true } } } });
      expect(r.status).toBe(201);
      expect(r.body.data.bucket.inbound_email).toMatchObject({
        enabled: true,
        ready: false,
        blocked_reason: "smtp_disabled",
        address: expect.stringContaining(`@${DOMAIN}`),
      });
    } finally {
      await off.stop();
    }
  });
});

describe("filing over real SMTP", () => {
  test("a multipart message with an attachment over STARTTLS, read back as an agent would", async () => {
    const b = await newBucket();
    const versionsBefore = await versionCount(b.id);
    const csv = Buffer.from("id,amount\n1,42\n".repeat(3000));
    const info = await send({
      to: b.inbound_email.address,
      subject: "Invoice 7",
      text: "Invoice attached.",
      html: "<p>Invoice <b>attached</b>.</p>",
      attachments: [{ filename: "../invoice.csv", content: csv, contentType: "text/csv" }],
    });
    expect(info.response).toMatch(/^250 /);

    const state = await inbound(b.id);
    expect(state.received_count).toBe(1);
    expect(state.last_received_path).toMatch(/^_email\/\d{4}\/\d{2}\/\d{2}\/\d{8}T\d{9}Z-[a-z0-9]{16}\/$/);
    expect(await versionCount(b.id)).toBe(versionsBefore + 1); // one version for the whole message

    const folder = state.last_received_path;
    const listed = await emailFiles(b.id);
    expect(listed.files.map((f: any) => f.path)).toEqual([`${folder}attachments/invoice.csv`, `${folder}message.eml`, `${folder}message.json`]);

    const before = (await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email/messages`, { key: u.key })).body.data;
    expect(before.messages).toHaveLength(1);
    expect(before.messages[0]).toMatchObject({ folder, subject: "Invoice 7", from: "someone@sender.test", attachment_count: 1, read: false, read_at: null });

    const json = await (await readByPath(b.id, `${folder}message.json`)).json();
    expect(json).toMatchObject({ folder, subject: "Invoice 7", text: "Invoice attached.", envelope: { rcpt_to: [b.inbound_email.address], tls: true } });
    expect(json.html).toContain("<b>attached</b>");
    expect(json.attachments).toEqual([
      {
        filename: "invoice.csv",
        original_filename: "../invoice.csv",
        content_type: "text/csv",
        size: csv.length,
        sha256: createHash("sha256").update(csv).digest("hex"),
        disposition: "attachment",
        content_id: null,
        path: `${folder}attachments/invoice.csv`,
      },
    ]);
    const bytes = Buffer.from(await (await readByPath(b.id, json.attachments[0].path)).arrayBuffer());
    expect(bytes.equals(csv)).toBe(true);
    const eml = await (await readByPath(b.id, `${folder}message.eml`)).text();
    expect(eml).toStartWith("Received: from ");
    expect(eml).toContain("Subject: Invoice 7");

    // Reading message.json recorded the shared read status; reading other files did not count.
    const after = (await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email/messages?unread=false`, { key: u.key })).body.data.messages[0];
    expect(after).toMatchObject({ read: true, read_count: 1, message_json_file_id: listed.files[2].id });
    expect(after.read_at).toBeString();
    expect(after.read_by).toStartWith("key_");
    expect((await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email/messages?unread=true`, { key: u.key })).body.data.messages).toEqual([]);
    expect(pendingTempFiles(join(t.dataDir, "tmp", "smtp"))).toEqual([]);
    expect(pendingTempFiles(join(t.dataDir, "tmp", "mail"))).toEqual([]);
  });

  test("two recipients in two buckets: one copy each, each naming only its own address", async () => {
    const a = await newBucket();
    const c = await newBucket(undefined, "Second");
    await send({ to: [a.inbound_email.address, c.inbound_email.address.toUpperCase()], subject: "Both", text: "hi" });
    for (const [b, own] of [
      [a, a.inbound_email.address],
      [c, c.inbound_email.address.toUpperCase()],
    ] as const) {
      const s = await inbound(b.id);
      expect(s.received_count).toBe(1);
      const json = await (await readByPath(b.id, `${s.last_received_path}message.json`)).json();
      expect(json.envelope.rcpt_to.map((r: string) => r.toLowerCase())).toEqual([own.toLowerCase()]); // clients may lower-case the domain
      expect((await emailFiles(b.id)).files).toHaveLength(2);
    }
  });

  test("unknown addresses and other domains are refused at RCPT TO", async () => {
    const c = await RawSmtp.open(port());
    await c.cmd("EHLO client.test");
    await c.cmd("MAIL FROM:<a@sender.test>");
    const unknown = await c.cmd(`RCPT TO:<nobody-0123456789@${DOMAIN}>`);
    expect(unknown.code).toBe(550);
    expect(unknown.text).toContain("No such mailbox");
    expect((await c.cmd("RCPT TO:<someone@elsewhere.example>")).code).toBe(550);
    c.close();
  });

  test("a client that disconnects mid-DATA files nothing", async () => {
    const b = await newBucket();
    const versions = await versionCount(b.id);
    const c = await RawSmtp.open(port());
    await c.cmd("EHLO client.test");
    await c.cmd("MAIL FROM:<a@sender.test>");
    expect((await c.cmd(`RCPT TO:<${b.inbound_email.address}>`)).code).toBe(250);
    expect((await c.cmd("DATA")).code).toBe(354);
    c.write("Subject: half\r\n\r\n" + "x".repeat(100_000));
    await Bun.sleep(100);
    c.close();
    await Bun.sleep(300);
    expect(await inbound(b.id)).toMatchObject({ received_count: 0, last_received_path: null });
    expect((await emailFiles(b.id)).files).toEqual([]);
    expect(await versionCount(b.id)).toBe(versions);
    expect(pendingTempFiles(join(t.dataDir, "tmp", "smtp"))).toEqual([]);
  });

  test("a bucket archived between RCPT TO and the end of DATA: 451, nothing filed in any bucket", async () => {
    const a = await newBucket(undefined, "Stays");
    const b = await newBucket(undefined, "Archived meanwhile");
    const versions = [await versionCount(a.id), await versionCount(b.id)];
    const c = await RawSmtp.open(port());
    await c.cmd("EHLO client.test");
    await c.cmd("MAIL FROM:<a@sender.test>");
    expect((await c.cmd(`RCPT TO:<${a.inbound_email.address}>`)).code).toBe(250);
    expect((await c.cmd(`RCPT TO:<${b.inbound_email.address}>`)).code).toBe(250);
    expect((await t.api("POST", `/api/v1/buckets/${b.id}/archive`, { key: u.key })).status).toBe(200);
    expect((await c.cmd("DATA")).code).toBe(354);
    const end = await c.cmd("Subject: both\r\n\r\nhello\r\n.");
    expect(end.code).toBe(451); // the sender retries; the archived bucket then refuses at RCPT TO
    c.close();
    for (const x of [a, b]) {
      expect(await inbound(x.id)).toMatchObject({ received_count: 0, last_received_path: null });
      expect((await emailFiles(x.id)).files).toEqual([]);
    }
    expect([await versionCount(a.id), await versionCount(b.id)]).toEqual(versions);
  });

  test("an account made read-only between RCPT TO and the end of DATA: 451, nothing filed", async () => {
    const owner = await t.user();
    const b = await createBucket(t, owner, { title: "Read-only meanwhile", inbound_email: { enabled: true } });
    const versions = (await t.api("GET", `/api/v1/buckets/${b.id}/versions?limit=500`, { key: owner.key })).body.data.versions.length;
    const c = await RawSmtp.open(port());
    try {
      await c.cmd("EHLO client.test");
      await c.cmd("MAIL FROM:<a@sender.test>");
      expect((await c.cmd(`RCPT TO:<${b.inbound_email.address}>`)).code).toBe(250);
      setReadOnly(t.pier.deps, owner.accountId, true, "billing");
      expect((await c.cmd("DATA")).code).toBe(354);
      expect((await c.cmd("Subject: late\r\n\r\nhello\r\n.")).code).toBe(451);
    } finally {
      c.close();
      setReadOnly(t.pier.deps, owner.accountId, false, null);
    }
    const after = await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email`, { key: owner.key });
    expect(after.body.data).toMatchObject({ received_count: 0, last_received_path: null });
    expect((await t.api("GET", `/api/v1/buckets/${b.id}/versions?limit=500`, { key: owner.key })).body.data.versions.length).toBe(versions);
  });

  test("the read status is shared: the first reader is kept, any key sees it; deleted messages leave the list", async () => {
    const b = await newBucket();
    await send({ to: b.inbound_email.address, subject: "one", text: "1" });
    await send({ to: b.inbound_email.address, subject: "two", text: "2" });
    const reader = t.key(u, { scope: "bucket_read", bucketAccess: "selected", bucketPermissions: { [b.id]: "read" } });
    const list = async (key: string, q = "") => (await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email/messages${q}`, { key })).body.data;
    const [first, second] = (await list(u.key)).messages;
    expect([first.subject, second.subject]).toEqual(["one", "two"]);
    const r = await t.api("GET", `/api/v1/buckets/${b.id}/files/by_path?path=${encodeURIComponent(first.message_json_path)}`, { key: reader });
    expect(r.status).toBe(302);
    const byReader = (await list(u.key)).messages[0];
    expect(byReader).toMatchObject({ read: true, read_count: 1 });
    expect(byReader.read_by).toStartWith("key_");
    await readByPath(b.id, first.message_json_path); // the owner reads it too
    const seen = (await list(u.key)).messages[0];
    expect(seen).toMatchObject({ read: true, read_count: 2, read_by: byReader.read_by, read_at: byReader.read_at });
    expect((await list(reader, "?unread=true")).messages.map((m: any) => m.subject)).toEqual(["two"]);
    const del = await t.api("DELETE", `/api/v1/buckets/${b.id}/files/${second.message_json_file_id}`, { key: u.key });
    expect(del.status).toBe(200);
    expect((await list(u.key)).messages.map((m: any) => m.subject)).toEqual(["one"]);
    expect((await inbound(b.id)).received_count).toBe(2); // a receipt total, not a count of what is left
  });

  test("the messages list refuses bad paging with 422", async () => {
    const b = await newBucket();
    for (const q of ["limit=0", "limit=501", "limit=abc", "offset=-1", "unread=yes"]) {
      const r = await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email/messages?${q}`, { key: u.key });
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe("VALIDATION_FAILED");
    }
  });

  test("a deleted bucket's address is refused and never handed out again", async () => {
    const b = await newBucket(undefined, "Gone");
    const address: string = b.inbound_email.address;
    const del = await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation: b.delete.confirmation } });
    expect(del.status).toBe(200);
    await expect(send({ to: address, subject: "x", text: "x" })).rejects.toMatchObject({ responseCode: 550 });
    // The address row outlives the bucket, so its local part can never be allocated again.
    const local = address.split("@")[0]!;
    expect(t.pier.deps.sqlite.query("select bucket_id from mail_addresses where local_part = ?").get(local)).toEqual({ bucket_id: b.id });
    const fresh = await newBucket(undefined, "Gone");
    expect(fresh.inbound_email.address).not.toBe(address);
  });

  test("messages paginate in arrival order with files?q=_email/", async () => {
    const b = await newBucket();
    const subjects = ["first", "second", "third", "fourth"];
    for (const s of subjects) {
      await send({ to: b.inbound_email.address, subject: s, text: s });
      t.clock.advance(1000);
    }
    const jsonPaths: string[] = [];
    for (let offset: number | null = 0; offset !== null; ) {
      const page: any = await emailFiles(b.id, 3, offset);
      jsonPaths.push(...page.files.map((f: any) => f.path).filter((p: string) => p.endsWith("message.json")));
      offset = page.pagination.next_offset;
    }
    const read = [];
    for (const p of jsonPaths) read.push((await (await readByPath(b.id, p)).json()).subject);
    expect(read).toEqual(subjects);
    expect((await inbound(b.id)).received_count).toBe(4);
  });

  test("forbidden attachments are not stored as files; the message still is", async () => {
    const b = await newBucket();
    const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46]), Buffer.alloc(100)]);
    // A Windows executable whose PE header sits past a 16 KiB stub: no fixed-size head sees it.
    const pe = Buffer.alloc(20_000);
    pe.write("MZ", 0, "latin1");
    pe.writeUInt32LE(16_384, 0x3c);
    pe.write("PE\0\0", 16_384, "latin1");
    await send({
      to: b.inbound_email.address,
      subject: "tools",
      text: "see attached",
      attachments: [
        { filename: "setup.exe", content: "MZ" },
        { filename: "notes.txt", content: elf },
        { filename: "photo.jpg", content: pe },
        { filename: "ok.txt", content: "fine" },
      ],
    });
    const s = await inbound(b.id);
    const json = await (await readByPath(b.id, `${s.last_received_path}message.json`)).json();
    expect(json.attachments.map((a: any) => [a.filename, a.path === null ? null : "stored", a.not_stored ?? null])).toEqual([
      ["setup.exe", null, "forbidden_file_type"],
      ["notes.txt", null, "executable_content"],
      ["photo.jpg", null, "executable_content"],
      ["ok.txt", "stored", null],
    ]);
    expect((await emailFiles(b.id)).files.map((f: any) => f.path.slice(s.last_received_path.length))).toEqual([
      "attachments/ok.txt",
      "message.eml",
      "message.json",
    ]);
  });

  test("more attachments than are stored at once, two alike and one over 1 MB: each filed with its own bytes", async () => {
    const b = await newBucket();
    const big = Buffer.alloc(1_500_000, "big attachment ");
    const contents = [
      Buffer.from("one\n"),
      Buffer.from("two\n"),
      Buffer.from("one\n"),
      big,
      Buffer.from("three\n"),
      Buffer.from("four\n"),
      Buffer.from("five\n"),
    ];
    const info = await send({
      to: b.inbound_email.address,
      subject: "many",
      text: "seven attached",
      attachments: contents.map((content, i) => ({ filename: `part-${i}.txt`, content, contentType: "text/plain" })),
    });
    expect(info.response).toMatch(/^250 /);
    const s = await inbound(b.id);
    const json = await (await readByPath(b.id, `${s.last_received_path}message.json`)).json();
    expect(json.attachments.map((a: any) => [a.filename, a.size, a.sha256])).toEqual(
      contents.map((c, i) => [`part-${i}.txt`, c.length, createHash("sha256").update(c).digest("hex")]),
    );
    for (const [i, c] of contents.entries()) {
      const bytes = Buffer.from(await (await readByPath(b.id, json.attachments[i].path)).arrayBuffer());
      expect(bytes.equals(c)).toBe(true);
    }
    expect((await emailFiles(b.id)).files).toHaveLength(contents.length + 2);
    expect(pendingTempFiles(join(t.dataDir, "tmp", "mail"))).toEqual([]);
  });

  test("MIME that breaks off mid-attachment (too many parts): filed with parse_error, no attachment file left open or behind", async () => {
    const b = await newBucket();
    // Past mailsplit's part limit the splitter fails while the first attachment is still being
    // streamed to its temp file: that file used to stay open for good (and the answer took 5 s).
    const openScratch = () =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).includes(join(t.dataDir, "tmp", "mail"));
        } catch {
          return false;
        }
      });
    let body = "From: x@sender.test\r\nSubject: many parts\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\n";
    for (let i = 0; i < 1100; i++) body += `--zz\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="a.bin"\r\n\r\nx\r\n`;
    for (let k = 0; k < 2; k++) {
      const c = await RawSmtp.open(port());
      await c.cmd("EHLO client.test");
      await c.cmd("MAIL FROM:<x@sender.test>");
      expect((await c.cmd(`RCPT TO:<${b.inbound_email.address}>`)).code).toBe(250);
      expect((await c.cmd("DATA")).code).toBe(354);
      expect((await c.cmd(body + "--zz--\r\n.")).code).toBe(250);
      c.close();
    }
    const s = await inbound(b.id);
    expect(s.received_count).toBe(2);
    const json = await (await readByPath(b.id, `${s.last_received_path}message.json`)).json();
    expect(json.parse_error).toBeString();
    expect(json.attachments).toEqual([]);
    await Bun.sleep(200);
    if (existsSync("/proc/self/fd")) expect(openScratch()).toEqual([]);
    expect(pendingTempFiles(join(t.dataDir, "tmp", "mail"))).toEqual([]);
  });

  test("swaks (where installed) delivers with STARTTLS and an attachment", async () => {
    if (!Bun.which("swaks")) return;
    const b = await newBucket();
    const p = Bun.spawn(
      [
        "swaks",
        "--server",
        `127.0.0.1:${port()}`,
        "--to",
        b.inbound_email.address,
        "--from",
        "ops@sender.test",
        "--tls",
        "--header",
        "Subject: from swaks",
        "--attach-type",
        "text/plain",
        "--attach-name",
        "hello.txt",
        "--attach",
        "@-",
      ],
      { stdin: new TextEncoder().encode("hello from swaks\n"), stdout: "pipe", stderr: "pipe" },
    );
    const out = await new Response(p.stdout).text();
    expect(await p.exited).toBe(0);
    expect(out).toContain("250 ");
    const s = await inbound(b.id);
    expect(s.received_count).toBe(1);
    const json = await (await readByPath(b.id, `${s.last_received_path}message.json`)).json();
    expect(json.subject).toBe("from swaks");
    expect(json.envelope.tls).toBe(true);
    const att = json.attachments.find((a: any) => a.filename === "hello.txt");
    expect(await (await readByPath(b.id, att.path)).text()).toBe("hello from swaks\n");
  });
});

describe("pier admin mail", () => {
  const root = join(import.meta.dir, "../../..");
  async function admin(args: string[]) {
    const proc = Bun.spawn(
      [...(await pierCommand()), "admin", ...args, "--data-dir", t.dataDir, "--mail-domain", DOMAIN, "--smtp-port", String(port()), "--host", "127.0.0.1"],
      {
        cwd: root,
        env: { ...process.env, PIER_SECRET_KEY: "test-secret-key-test-secret-key-test-secret-key" },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { stdout, stderr, code };
  }

  test("mail test ADDRESS delivers a message the bucket files", async () => {
    const b = await newBucket();
    const r = await admin(["mail", "test", b.inbound_email.address]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ to: b.inbound_email.address, accepted: [b.inbound_email.address], rejected: [] });
    const s = await inbound(b.id);
    expect(s.received_count).toBe(1);
    const json = await (await readByPath(b.id, `${s.last_received_path}message.json`)).json();
    expect(json.subject).toStartWith("Pier test message");
    expect(json.envelope.tls).toBe(true);
    expect(json.attachments.map((a: any) => a.filename)).toEqual(["pier-test.txt"]);
  });

  test("mail test to an unknown address fails with the receiver's 550; mail disable blocks an address", async () => {
    const unknown = await admin(["mail", "test", `nobody-0000000000@${DOMAIN}`]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("did not accept the message");
    expect(unknown.stderr).toContain("550");
    const b = await newBucket();
    const off = await admin(["mail", "disable", b.inbound_email.address]);
    expect(off.code).toBe(0);
    expect(await inbound(b.id)).toMatchObject({ ready: false, blocked_reason: "disabled_by_admin" });
    await expect(send({ to: b.inbound_email.address, subject: "x", text: "x" })).rejects.toMatchObject({ responseCode: 550 });
    expect((await admin(["mail", "enable", b.inbound_email.address])).code).toBe(0);
    expect(await inbound(b.id)).toMatchObject({ ready: true, blocked_reason: null });
    expect((await admin(["mail", "test"])).code).toBe(2);
  });
});
