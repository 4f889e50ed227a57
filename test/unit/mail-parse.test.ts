// Parsing and authentication of raw messages as the receiver stores them. Messages are built
// with nodemailer's MIME composer (a real, independent MIME writer) or written by hand when
// they are meant to be broken.
import { afterAll, describe, expect, test } from "bun:test";
import { createHash, generateKeyPairSync } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dkimSign } from "mailauth";
import MailComposer from "nodemailer/lib/mail-composer";
import { shouldRejectForDmarc, tableResolver, verifyAuthentication } from "../../src/features/mail/sender-auth";
import { parseMessageFile } from "../../src/features/mail/parse";

const dir = mkdtempSync(join(tmpdir(), "pier-mail-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const writeRaw = (raw: string | Buffer) => {
  const p = join(dir, `m${++n}.eml`);
  writeFileSync(p, raw);
  return p;
};
const compose = (opts: ConstructorParameters<typeof MailComposer>[0]) => new MailComposer(opts).compile().build();
const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

describe("parseMessageFile", () => {
  test("a real multipart message: headers, bodies, threading, attachment streamed to disk with matching sha256", async () => {
    const pdf = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 256));
    const raw = await compose({
      from: '"Ada Lovelace" <ada@sender.test>',
      to: ["box1@in.test", { name: "Box Two", address: "box2@in.test" }],
      cc: "carol@sender.test",
      replyTo: "replies@sender.test",
      subject: "Quarterly réport ✓",
      date: new Date("2026-11-21T10:00:00Z"),
      messageId: "<msg-2@sender.test>",
      inReplyTo: "<msg-1@sender.test>",
      references: ["<msg-0@sender.test>", "<msg-1@sender.test>"],
      headers: { "List-Id": "<reports.sender.test>", "X-Secret-Internal": "dropped" },
      text: "Hello, see attached.",
      html: "<p>Hello, <b>see attached</b>.</p>",
      attachments: [
        { filename: "report.pdf", content: pdf, contentType: "application/pdf" },
        { filename: "report.pdf", content: "second one with the same name" },
      ],
    });
    const parsed = await parseMessageFile(writeRaw(raw), { tempDir: join(dir, "att1") });
    const m = parsed.message;
    expect(m.parse_error).toBeNull();
    expect(m.from).toEqual({ name: "Ada Lovelace", address: "ada@sender.test" });
    expect(m.to).toEqual([
      { name: "", address: "box1@in.test" },
      { name: "Box Two", address: "box2@in.test" },
    ]);
    expect(m.cc).toEqual([{ name: "", address: "carol@sender.test" }]);
    expect(m.reply_to).toEqual([{ name: "", address: "replies@sender.test" }]);
    expect(m.subject).toBe("Quarterly réport ✓");
    expect(m.date).toBe("2026-11-21T10:00:00.000Z");
    expect(m.message_id).toBe("<msg-2@sender.test>");
    expect(m.in_reply_to).toBe("<msg-1@sender.test>");
    expect(m.references).toEqual(["<msg-0@sender.test>", "<msg-1@sender.test>"]);
    expect(m.text?.trim()).toBe("Hello, see attached.");
    expect(m.html).toContain("<b>see attached</b>");
    expect(m.headers["list-id"]).toBe("<reports.sender.test>");
    expect(m.headers["x-secret-internal"]).toBeUndefined();
    expect(m.attachments.map((a) => a.filename)).toEqual(["report.pdf", "report (2).pdf"]);
    const [a] = m.attachments;
    expect(a).toMatchObject({ content_type: "application/pdf", size: pdf.length, sha256: sha256(pdf), disposition: "attachment", path: null });
    // The bytes on disk are the attachment, and the recorded hash is theirs.
    const onDisk = readFileSync(parsed.attachmentFiles[0]!);
    expect(onDisk.equals(pdf)).toBe(true);
    expect(sha256(onDisk)).toBe(a!.sha256);
    expect(readFileSync(parsed.attachmentFiles[1]!, "utf8")).toBe("second one with the same name");
  });

  test("attachment names with ../ and control characters are sanitized", async () => {
    const raw = await compose({
      from: "a@sender.test",
      to: "b@in.test",
      subject: "names",
      text: "x",
      attachments: [
        { filename: "../../etc/passwd", content: "1" },
        { filename: "..\\..\\boot.ini", content: "2" },
        { filename: "evil\u0007\u0000\u202Egpj.exe", content: "3" },
        { filename: ".bashrc", content: "4" },
        { filename: "..", content: "5" },
      ],
    });
    const { message } = await parseMessageFile(writeRaw(raw), { tempDir: join(dir, "att2") });
    expect(message.attachments.map((a) => a.filename)).toEqual(["passwd", "boot.ini", "evilgpj.exe", "bashrc", "attachment-5"]);
    expect(message.attachments[0]!.original_filename).toBe("../../etc/passwd");
    for (const a of message.attachments) expect(a.filename).not.toMatch(/[\/\\\u0000-\u001f]|^\./);
  });

  test("a header bomb does not crash and is reported, quickly", async () => {
    const big = "From: a@sender.test\r\nTo: b@in.test\r\nSubject: bomb\r\n" + "X-Filler: " + "a".repeat(200) + "\r\n".repeat(1);
    const raw = big + Array.from({ length: 20_000 }, (_, i) => `X-H${i}: ${"v".repeat(100)}\r\n`).join("") + "\r\nbody\r\n";
    const started = Date.now();
    const { message } = await parseMessageFile(writeRaw(raw), { tempDir: join(dir, "att3") });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(message.parse_error).toBeString();
    expect(message.attachments).toEqual([]);
  });

  test("a failure after an attachment was extracted drops the partial attachments, without hanging", async () => {
    const raw =
      "From: a@sender.test\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n" +
      "--b\r\nContent-Type: application/octet-stream; name=ok.bin\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
      "QUJD\r\n".repeat(50_000) +
      "--b\r\nContent-Type: text/plain\r\n" +
      Array.from({ length: 15_000 }, (_, i) => `X-P${i}: ${"p".repeat(90)}\r\n`).join("") +
      "\r\nbody\r\n--b--\r\n";
    const tempDir = join(dir, "att-mid");
    const { message, attachmentFiles } = await parseMessageFile(writeRaw(raw), { tempDir });
    expect(message.parse_error).toBeString();
    expect(message.attachments).toEqual([]);
    expect(attachmentFiles).toEqual([]);
    expect(existsSync(tempDir)).toBe(false); // the folder too: no caller would remove it
  });

  test("one enormous folded header line does not crash", async () => {
    const raw = "From: a@sender.test\r\nSubject: " + "word ".repeat(400_000) + "\r\n\r\nbody\r\n";
    const { message } = await parseMessageFile(writeRaw(raw), { tempDir: join(dir, "att4") });
    expect(message.parse_error).toBeString();
  });

  test("malformed MIME parses without crashing", async () => {
    const broken = [
      // multipart with a boundary that never appears, plus junk
      'From: a@sender.test\r\nContent-Type: multipart/mixed; boundary="nope"\r\n\r\n--other\r\nhello\r\n',
      // invalid base64 and an unknown charset
      "From: a@sender.test\r\nSubject: =?x-unknown?B?!!!?=\r\nContent-Type: text/plain; charset=x-klingon\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!not base64@@@\r\n",
      // a nested multipart that ends early, attachment without end
      'From: a@sender.test\r\nContent-Type: multipart/mixed; boundary=b1\r\n\r\n--b1\r\nContent-Type: multipart/alternative; boundary=b2\r\n\r\n--b2\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b1\r\nContent-Type: application/pdf; name="x.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0x',
      // no headers at all, binary junk
      Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 31) % 256)),
      // empty message
      "",
      // deeply nested multiparts
      "From: a@sender.test\r\n" +
        Array.from({ length: 200 }, (_, i) => `Content-Type: multipart/mixed; boundary=n${i}\r\n\r\n--n${i}\r\n`).join("") +
        "Content-Type: text/plain\r\n\r\ndeep\r\n",
    ];
    for (const raw of broken) {
      const { message } = await parseMessageFile(writeRaw(raw), { tempDir: join(dir, `att-broken-${n}`) });
      expect(message).toBeDefined();
    }
  });

  test("bodies over the cap are truncated and flagged", async () => {
    const raw = await compose({ from: "a@sender.test", to: "b@in.test", text: "z".repeat(5000) });
    const { message } = await parseMessageFile(writeRaw(raw), { tempDir: join(dir, "att5"), maxBodyChars: 1000 });
    expect(message.text!.length).toBe(1000);
    expect(message.text_truncated).toBe(true);
  });

  test("attachments past the per-message limit are counted, not stored", async () => {
    const raw = await compose({
      from: "a@sender.test",
      to: "b@in.test",
      text: "x",
      attachments: Array.from({ length: 7 }, (_, i) => ({ filename: `f${i}.txt`, content: `c${i}` })),
    });
    const tempDir = join(dir, "att6");
    const { message, attachmentFiles } = await parseMessageFile(writeRaw(raw), { tempDir, maxAttachments: 5 });
    expect(message.attachments.length).toBe(5);
    expect(message.attachments_omitted).toBe(2);
    expect(readdirSync(tempDir).length).toBe(5);
    expect(attachmentFiles.length).toBe(5);
  });
});

describe("parseMessageFile from bytes", () => {
  test("a message held in memory parses exactly as from its file, attachments still go to files", async () => {
    const raw = await compose({
      from: '"Ada" <ada@sender.test>',
      to: "box1@in.test",
      subject: "in memory ✓",
      date: new Date("2026-11-21T10:00:00Z"),
      messageId: "<mem@sender.test>",
      text: "plain",
      html: "<p>html</p>",
      attachments: [{ filename: "a.bin", content: Buffer.alloc(50_000, 7) }],
    });
    const fromFile = await parseMessageFile(writeRaw(raw), { tempDir: join(dir, "mem-file") });
    const fromBytes = await parseMessageFile(raw, { tempDir: join(dir, "mem-bytes") });
    expect(fromBytes.message).toEqual(fromFile.message);
    expect(fromBytes.attachmentFiles).toHaveLength(1);
    expect(sha256(readFileSync(fromBytes.attachmentFiles[0]!))).toBe(sha256(Buffer.alloc(50_000, 7)));
  });

  test("no attachment, no scratch directory", async () => {
    const raw = await compose({ from: "a@sender.test", to: "box1@in.test", subject: "s", text: "t" });
    await parseMessageFile(raw, { tempDir: join(dir, "never-made") });
    expect(readdirSync(dir)).not.toContain("never-made");
  });
});

describe("verifyAuthentication (local DNS table, nothing leaves the machine)", () => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const p = publicKey.export({ type: "spki", format: "der" }).toString("base64");
  const dns = tableResolver({
    "sender.test/TXT": [["v=spf1 ip4:127.0.0.1 -all"]],
    "_dmarc.sender.test/TXT": [["v=DMARC1; p=reject"]],
    "sel._domainkey.sender.test/TXT": [[`v=DKIM1; k=rsa; p=${p}`]],
    "_dmarc.lax.test/TXT": [["v=DMARC1; p=none"]],
    "lax.test/TXT": [["v=spf1 -all"]],
  });
  // mailauth signs with the entries of signatureData (the top-level fields are their defaults).
  const dkimOptions = { signatureData: [{ signingDomain: "sender.test", selector: "sel", privateKey: pem }] } as unknown as Parameters<typeof dkimSign>[1];
  const msg = (from: string) =>
    `From: ${from}\r\nTo: box@in.test\r\nSubject: auth\r\nDate: Sat, 21 Nov 2026 10:00:00 +0000\r\nMessage-ID: <a@x>\r\n\r\nbody\r\n`;
  const ctx = (ip: string, mailFrom: string) => ({ ip, helo: "mx.sender.test", mailFrom, mta: "mx.pier.test", resolver: dns });

  test("SPF pass and aligned DMARC pass from an authorized IP", async () => {
    const r = await verifyAuthentication(writeRaw(msg("a@sender.test")), ctx("127.0.0.1", "a@sender.test"));
    expect(r.spf.result).toBe("pass");
    expect(r.dkim.map((d) => d.result)).toEqual(["none"]);
    expect(r.dmarc.result).toBe("pass");
    expect(r.header).toContain("spf=pass");
    expect(r.error).toBeNull();
  });

  test("DKIM signature verifies (pass) even from an unauthorized IP, and DMARC passes on it", async () => {
    const raw = msg("a@sender.test");
    const signed = await dkimSign(raw, dkimOptions);
    const r = await verifyAuthentication(writeRaw(signed.signatures + raw), ctx("127.0.0.9", "a@sender.test"));
    expect(r.spf.result).toBe("fail");
    expect(r.dkim[0]).toMatchObject({ result: "pass", domain: "sender.test", selector: "sel", aligned: true });
    expect(r.dmarc.result).toBe("pass");
  });

  test("a small message is verified from its bytes exactly as from its file (DKIM body hash included)", async () => {
    const raw = msg("a@sender.test");
    const signed = (await dkimSign(raw, dkimOptions)).signatures + raw;
    const fromFile = await verifyAuthentication(writeRaw(signed), ctx("127.0.0.9", "a@sender.test"));
    const fromBytes = await verifyAuthentication(Buffer.from(signed), ctx("127.0.0.9", "a@sender.test"));
    expect(fromBytes.dkim[0]).toMatchObject({ result: "pass", domain: "sender.test", aligned: true });
    expect(fromBytes).toEqual(fromFile);
    const tampered = await verifyAuthentication(Buffer.from(signed.replace("body", "bodY")), ctx("127.0.0.9", "a@sender.test"));
    expect(tampered.dkim[0]!.result).not.toBe("pass");
  });

  test("SPF fail, no DKIM: DMARC fail under p=reject; enforcement decides", async () => {
    const r = await verifyAuthentication(writeRaw(msg("a@sender.test")), ctx("127.0.0.9", "a@sender.test"));
    expect(r.spf.result).toBe("fail");
    expect(r.dmarc).toMatchObject({ result: "fail", policy: "reject", domain: "sender.test" });
    expect(shouldRejectForDmarc(r, false)).toBe(false);
    expect(shouldRejectForDmarc(r, true)).toBe(true);
  });

  test("tampering breaks DKIM: a forged signed header fails, an edited body does not pass", async () => {
    const raw = msg("a@sender.test");
    const signed = await dkimSign(raw, dkimOptions);
    const forged = await verifyAuthentication(writeRaw(signed.signatures + raw.replace("Subject: auth", "Subject: pay me")), ctx("127.0.0.9", "a@sender.test"));
    expect(forged.dkim[0]!.result).toBe("fail");
    expect(forged.dmarc.result).toBe("fail");
    // mailauth reports a body hash mismatch as "neutral" (RFC 6376 leaves the label to the verifier).
    const edited = await verifyAuthentication(writeRaw(signed.signatures + raw.replace("body", "b0dy")), ctx("127.0.0.9", "a@sender.test"));
    expect(edited.dkim[0]!.result).not.toBe("pass");
    expect(edited.dmarc.result).toBe("fail");
  });

  test("DMARC fail under p=none is never enforced", async () => {
    const r = await verifyAuthentication(writeRaw(msg("a@lax.test")), ctx("127.0.0.9", "a@lax.test"));
    expect(r.dmarc).toMatchObject({ result: "fail", policy: "none" });
    expect(shouldRejectForDmarc(r, true)).toBe(false);
  });

  test("unknown domains: none across the board (lookups fail closed)", async () => {
    const r = await verifyAuthentication(writeRaw(msg("a@unknown.test")), ctx("127.0.0.1", "a@unknown.test"));
    expect(r.spf.result).toBe("none");
    expect(r.dmarc.result).toBe("none");
  });

  test("a header bomb still yields verdicts or a temperror, never a throw", async () => {
    const raw = "From: a@sender.test\r\n" + Array.from({ length: 20_000 }, (_, i) => `X-H${i}: ${"v".repeat(100)}\r\n`).join("") + "\r\nbody\r\n";
    const started = Date.now();
    const r = await verifyAuthentication(writeRaw(raw), ctx("127.0.0.1", "a@sender.test"));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(["pass", "temperror", "none", "fail", "permerror"]).toContain(r.spf.result);
  });
});
