// Receiver + parse + authentication end to end over real SMTP, with a handler that does what
// the filer will do minus the bucket: read the message and build each recipient's message.json.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { tableResolver } from "../../../src/features/mail/sender-auth";
import { messageFilesFor, messageJsonFor, readInboundMessage, type MessageFile, type MessageJson } from "../../../src/features/mail/inbound";
import { pendingTempFiles } from "../../../src/smtp/server";
import { startTestPier } from "../../helpers/pier";
import { acceptingHandler, RawSmtp, startReceiver, type Delivery, type Receiver } from "./smtp-harness";

const dns = tableResolver({ "sender.test/TXT": [["v=spf1 ip4:127.0.0.1 -all"]], "_dmarc.sender.test/TXT": [["v=DMARC1; p=reject"]] });
const send = (port: number, mail: Parameters<ReturnType<typeof nodemailer.createTransport>["sendMail"]>[0]) =>
  nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, tls: { rejectUnauthorized: false } } as SMTPTransport.Options).sendMail(mail);

describe("inbound message reading over SMTP", () => {
  let r: Receiver;
  const filed: { json: MessageJson; files: Buffer[]; plan: MessageFile[] }[] = [];
  const deliveries: Delivery[] = [];
  let rejectDmarcFail = false;
  beforeAll(async () => {
    r = await startReceiver({
      maxMessageBytes: 40 * 1024 * 1024,
      handler: acceptingHandler(deliveries, async (envelope, rawPath, session) => {
        const msg = await readInboundMessage(envelope, rawPath, session, { tempDir: join(r.dir, "mail"), mta: "mx.pier.test", resolver: dns, rejectDmarcFail });
        try {
          for (const rcpt of envelope.recipients)
            filed.push({
              json: messageJsonFor(msg, [rcpt.address]),
              files: msg.attachmentFiles.map((f) => readFileSync(f)),
              plan: messageFilesFor(msg, rawPath, [rcpt.address]).files,
            });
        } finally {
          await msg.cleanup();
        }
      }),
    });
  });
  afterAll(() => r.stop());

  test("a multipart message with an attachment becomes message.json per recipient, verdicts recorded", async () => {
    const csv = Buffer.from("id,amount\n1,42\n".repeat(5000));
    await send(r.port, {
      from: "Billing <billing@sender.test>",
      to: ["acct1@in.test", "acct2@in.test"],
      subject: "Invoice 7",
      text: "Invoice attached.",
      attachments: [{ filename: "../../../invoice\u0007.csv", content: csv, contentType: "text/csv" }],
    });
    expect(filed.length).toBe(2);
    const [a, b] = filed;
    expect(a!.json.envelope.rcpt_to).toEqual(["acct1@in.test"]); // each copy names only its own recipient
    expect(b!.json.envelope.rcpt_to).toEqual(["acct2@in.test"]);
    const j = a!.json;
    expect(j.folder).toMatch(/^_email\/\d{4}\/\d{2}\/\d{2}\/\d{8}T\d{9}Z-[a-z0-9]{16}\/$/);
    expect(j.id).toBe(deliveries.at(-1)!.envelope.id);
    expect(j.subject).toBe("Invoice 7");
    expect(j.from).toEqual({ name: "Billing", address: "billing@sender.test" });
    expect(j.envelope).toMatchObject({ mail_from: "billing@sender.test", remote_ip: "127.0.0.1", tls: true });
    expect(j.authentication.spf.result).toBe("pass");
    expect(j.authentication.dmarc.result).toBe("pass");
    expect(j.attachments).toEqual([
      {
        filename: "invoice.csv",
        original_filename: "../../../invoice\u0007.csv",
        content_type: "text/csv",
        size: csv.length,
        sha256: createHash("sha256").update(csv).digest("hex"),
        disposition: "attachment",
        content_id: null,
        path: j.folder + "attachments/invoice.csv",
      },
    ]);
    expect(a!.files[0]!.equals(csv)).toBe(true);
    expect(JSON.parse(JSON.stringify(j))).toEqual(j); // plain JSON, ready to write as message.json
    // What the filer writes into the bucket, in one version:
    expect(a!.plan.map((f) => [f.path, f.contentType])).toEqual([
      [j.folder + "message.eml", "message/rfc822"],
      [j.folder + "message.json", "application/json"],
      [j.folder + "attachments/invoice.csv", "text/csv"],
    ]);
    const jsonFile = a!.plan[1]!.source as { bytes: Uint8Array };
    expect(JSON.parse(new TextDecoder().decode(jsonFile.bytes))).toEqual(j);
    expect(pendingTempFiles(r.tempDir)).toEqual([]);
    expect(pendingTempFiles(join(r.dir, "mail"))).toEqual([]);
  });

  test("a header bomb is received and parsed without crashing; the server keeps serving", async () => {
    const c = await RawSmtp.open(r.port);
    await c.cmd("EHLO bomb.example.com");
    await c.cmd("MAIL FROM:<x@sender.test>");
    await c.cmd("RCPT TO:<acct1@in.test>");
    expect((await c.cmd("DATA")).code).toBe(354);
    let body = "From: x@sender.test\r\nSubject: bomb\r\n";
    for (let i = 0; i < 30_000; i++) body += `X-Bomb-${i}: ${"b".repeat(80)}\r\n`;
    c.write(body + "\r\nhello\r\n.\r\n");
    expect((await c.reply(20_000)).code).toBe(250);
    c.close();
    const j = filed.at(-1)!.json;
    expect(j.parse_error).toBeString();
    expect(j.attachments).toEqual([]);
    await send(r.port, { from: "a@sender.test", to: "acct1@in.test", subject: "still here", text: "ok" });
    expect(filed.at(-1)!.json.subject).toBe("still here");
  });

  test("malformed MIME is received and gets a message.json", async () => {
    const c = await RawSmtp.open(r.port);
    await c.cmd("EHLO broken.example.com");
    await c.cmd("MAIL FROM:<x@sender.test>");
    await c.cmd("RCPT TO:<acct1@in.test>");
    await c.cmd("DATA");
    c.write(
      'From: x@sender.test\r\nSubject: =?utf-8?B?broken\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\n--zz\r\nContent-Type: text/plain; charset=nope\r\nContent-Transfer-Encoding: base64\r\n\r\n@@@@\r\n--zz\r\nContent-Disposition: attachment; filename="..\\u0000"\r\n\r\nunterminated\r\n.\r\n',
    );
    expect((await c.reply()).code).toBe(250);
    c.close();
    const j = filed.at(-1)!.json;
    expect(j.from?.address).toBe("x@sender.test");
    for (const a of j.attachments) expect(a.filename).not.toMatch(/^\.|[\u0000-\u001f\/\\]/);
  });

  test("DMARC enforcement on: a failing message under p=reject gets 550 and nothing is filed", async () => {
    rejectDmarcFail = true;
    try {
      const before = filed.length;
      // Claims sender.test in From: but MAIL FROM is elsewhere and nothing is signed -> DMARC fail.
      await expect(
        send(r.port, {
          envelope: { from: "bounce@elsewhere.test", to: "acct1@in.test" },
          from: "ceo@sender.test",
          to: "acct1@in.test",
          subject: "wire money",
          text: "now",
        }),
      ).rejects.toMatchObject({ responseCode: 550 });
      expect(filed.length).toBe(before);
    } finally {
      rejectDmarcFail = false;
    }
  });
});

describe("pier serve's receiver", () => {
  test("starts with Pier when --smtp-port is set and refuses unknown addresses and other domains", async () => {
    const t = await startTestPier({ smtpPort: 0, mailDomain: "mail.pier.test" });
    try {
      expect(t.pier.smtp).not.toBeNull();
      expect(t.pier.smtp!.tlsSource).toBe("self-signed");
      const c = await RawSmtp.open(t.pier.smtp!.port);
      const ehlo = await c.cmd("EHLO client.example.com");
      expect(ehlo.lines.map((l) => l.slice(4))).toContain(`SIZE ${t.pier.deps.config.smtpMaxMessageBytes}`);
      expect(ehlo.text).toContain("STARTTLS");
      await c.cmd("MAIL FROM:<a@sender.test>");
      const rcpt = await c.cmd("RCPT TO:<anything@mail.pier.test>");
      expect(rcpt.code).toBe(550);
      expect(rcpt.text).toContain("No such mailbox");
      expect((await c.cmd("RCPT TO:<someone@gmail.example>")).code).toBe(550);
      c.close();
    } finally {
      await t.stop();
    }
  });

  test("stays off when --smtp-port is off", async () => {
    const t = await startTestPier({ smtpPort: null });
    try {
      expect(t.pier.smtp).toBeNull();
    } finally {
      await t.stop();
    }
  });
});
