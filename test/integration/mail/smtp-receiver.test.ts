// The SMTP receiver over real sockets: nodemailer's SMTP transport, raw conversations, swaks.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { IN_MEMORY_MESSAGE_BYTES, pendingTempFiles } from "../../../src/smtp/server";
import { RawSmtp, sleep, startReceiver, type Receiver } from "./smtp-harness";

const transport = (port: number, extra: Record<string, unknown> = {}) =>
  nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, tls: { rejectUnauthorized: false }, ...extra } as SMTPTransport.Options);

describe("SMTP receiver", () => {
  let r: Receiver;
  beforeAll(async () => {
    r = await startReceiver({ maxMessageBytes: 200_000 });
  });
  afterAll(() => r.stop());

  test("EHLO advertises SIZE, 8BITMIME, SMTPUTF8, PIPELINING, STARTTLS and no AUTH", async () => {
    const c = await RawSmtp.open(r.port);
    const ehlo = await c.cmd("EHLO client.example.com");
    expect(ehlo.code).toBe(250);
    const caps = ehlo.lines.map((l) => l.slice(4));
    expect(caps).toContain("SIZE 200000");
    expect(caps).toContain("8BITMIME");
    expect(caps).toContain("SMTPUTF8");
    expect(caps).toContain("PIPELINING");
    expect(caps).toContain("STARTTLS");
    expect(caps.some((l) => l.startsWith("AUTH"))).toBe(false);
    c.close();
  });

  test("STARTTLS upgrades and a message sent over TLS to two recipients is delivered once with both", async () => {
    const info = await transport(r.port, { requireTLS: true }).sendMail({
      from: "Alice <alice@sender.test>",
      to: ["box1@in.test", "box2@in.test"],
      subject: "Two boxes",
      text: "héllo wörld",
    });
    expect(info.accepted).toEqual(["box1@in.test", "box2@in.test"]);
    const d = r.deliveries.at(-1)!;
    expect(d.session.tls).toBe(true);
    expect(d.envelope.mailFrom).toBe("alice@sender.test");
    expect(d.envelope.recipients).toEqual([
      { address: "box1@in.test", key: "box:box1" },
      { address: "box2@in.test", key: "box:box2" },
    ]);
    expect(d.raw!.startsWith("Received: from ")).toBe(true);
    expect(d.raw).toContain("with ESMTPS id " + d.envelope.id);
    expect(d.raw).toContain("Subject: Two boxes");
    expect(d.envelope.size).toBe(d.fileSize);
    expect(pendingTempFiles(r.tempDir)).toEqual([]);
  });

  test("SMTPUTF8 and 8BITMIME: internationalized addresses and 8-bit bodies are accepted", async () => {
    const c = await RawSmtp.open(r.port);
    await c.cmd("EHLO client.example.com");
    expect((await c.cmd("MAIL FROM:<józef@sender.test> SMTPUTF8 BODY=8BITMIME")).code).toBe(250);
    expect((await c.cmd("RCPT TO:<bøx@in.test>")).code).toBe(250);
    expect((await c.cmd("DATA")).code).toBe(354);
    c.write("From: józef@sender.test\r\nTo: bøx@in.test\r\nSubject: zażółć\r\n\r\ngęślą jaźń\r\n.\r\n");
    expect((await c.reply()).code).toBe(250);
    c.close();
    const d = r.deliveries.at(-1)!;
    expect(d.envelope.smtpUtf8).toBe(true);
    expect(d.envelope.mailFrom).toBe("józef@sender.test");
    expect(d.envelope.recipients[0]!.address).toBe("bøx@in.test");
    expect(d.raw).toContain("with UTF8SMTP id");
    expect(d.raw).toContain("gęślą jaźń");
  });

  test("unknown recipient is refused at RCPT TO with 550; the known one still gets the message", async () => {
    const before = r.deliveries.length;
    const info = await transport(r.port).sendMail({ from: "a@sender.test", to: ["nobody@in.test", "box1@in.test"], subject: "x", text: "y" });
    expect(info.rejected).toEqual(["nobody@in.test"]);
    expect(info.rejectedErrors?.[0]?.responseCode).toBe(550);
    expect(r.deliveries.length).toBe(before + 1);
    expect(r.deliveries.at(-1)!.envelope.recipients.map((x) => x.address)).toEqual(["box1@in.test"]);
    // A foreign domain is refused too: no relaying.
    const c = await RawSmtp.open(r.port);
    await c.cmd("EHLO client.example.com");
    expect((await c.cmd("MAIL FROM:<a@sender.test>")).code).toBe(250);
    expect((await c.cmd("RCPT TO:<victim@elsewhere.example>")).code).toBe(550);
    c.close();
  });

  test("AUTH is refused (the receiver does not relay)", async () => {
    const c = await RawSmtp.open(r.port);
    await c.cmd("EHLO client.example.com");
    const auth = await c.cmd("AUTH PLAIN " + Buffer.from("\0user\0pass").toString("base64"));
    expect(auth.code).toBeGreaterThanOrEqual(500);
    expect(auth.code).toBeLessThan(600);
    expect((await c.cmd("NOOP")).code).toBe(250); // still serving
    c.close();
  });

  test("commands out of order get 503", async () => {
    const c = await RawSmtp.open(r.port);
    expect((await c.cmd("MAIL FROM:<a@sender.test>")).code).toBe(503); // before EHLO
    await c.cmd("EHLO client.example.com");
    expect((await c.cmd("RCPT TO:<box1@in.test>")).code).toBe(503); // before MAIL
    expect((await c.cmd("DATA")).code).toBe(503); // before RCPT
    expect((await c.cmd("MAIL FROM:<a@sender.test>")).code).toBe(250);
    expect((await c.cmd("MAIL FROM:<a@sender.test>")).code).toBe(503); // nested MAIL
    expect((await c.cmd("DATA")).code).toBe(503); // MAIL without an accepted RCPT
    c.close();
  });

  test("oversize: declared SIZE and an undeclared large body both get 552, nothing delivered, no temp file", async () => {
    const before = r.deliveries.length;
    const c = await RawSmtp.open(r.port);
    await c.cmd("EHLO client.example.com");
    expect((await c.cmd("MAIL FROM:<a@sender.test> SIZE=999999999")).code).toBe(552);
    expect((await c.cmd("MAIL FROM:<a@sender.test>")).code).toBe(250);
    expect((await c.cmd("RCPT TO:<box1@in.test>")).code).toBe(250);
    expect((await c.cmd("DATA")).code).toBe(354);
    const line = "x".repeat(998) + "\r\n";
    c.write("Subject: big\r\n\r\n" + line.repeat(400) + ".\r\n"); // ~400 KB > 200 KB limit
    const res = await c.reply();
    expect(res.code).toBe(552);
    expect((await c.cmd("NOOP")).code).toBe(250);
    c.close();
    await expect(transport(r.port).sendMail({ from: "a@sender.test", to: "box1@in.test", text: line.repeat(400) })).rejects.toMatchObject({
      responseCode: 552,
    });
    expect(r.deliveries.length).toBe(before);
    expect(pendingTempFiles(r.tempDir)).toEqual([]);
  });

  test("a client disconnecting mid-DATA leaves nothing: handler not called, no temp file, server keeps serving", async () => {
    const before = r.deliveries.length;
    const c = await RawSmtp.open(r.port);
    await c.cmd("EHLO client.example.com");
    await c.cmd("MAIL FROM:<a@sender.test>");
    await c.cmd("RCPT TO:<box1@in.test>");
    expect((await c.cmd("DATA")).code).toBe(354);
    c.write("Subject: half\r\n\r\n" + "partial line\r\n".repeat(2000));
    for (let i = 0; i < 100 && !pendingTempFiles(r.tempDir).length; i++) await sleep(20);
    expect(pendingTempFiles(r.tempDir).length).toBe(1); // it was being streamed to disk
    c.close();
    for (let i = 0; i < 50 && pendingTempFiles(r.tempDir).length; i++) await sleep(20);
    expect(pendingTempFiles(r.tempDir)).toEqual([]);
    expect(r.deliveries.length).toBe(before);
    const info = await transport(r.port).sendMail({ from: "a@sender.test", to: "box1@in.test", subject: "after", text: "ok" });
    expect(info.accepted).toEqual(["box1@in.test"]);
  });

  test("10,000 pipelined RCPT TO lines: 100 accepted, the rest 452, quickly", async () => {
    const c = await RawSmtp.open(r.port);
    await c.cmd("EHLO client.example.com");
    await c.cmd("MAIL FROM:<a@sender.test>");
    const started = Date.now();
    let batch = "";
    for (let i = 0; i < 10_000; i++) batch += `RCPT TO:<box${i}@in.test>\r\n`;
    c.write(batch);
    const codes = new Map<number, number>();
    for (let i = 0; i < 10_000; i++) {
      const { code } = await c.reply();
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    const elapsed = Date.now() - started;
    expect(codes.get(250)).toBe(100);
    expect(codes.get(452)).toBe(9_900);
    expect(elapsed).toBeLessThan(5_000);
    expect((await c.cmd("RSET")).code).toBe(250);
    expect((await c.cmd("QUIT")).code).toBe(221);
    c.close();
  });

  test("swaks (Debian) delivers over STARTTLS with an attachment", async () => {
    if (!Bun.which("swaks")) {
      console.warn("swaks not installed (scripts/test.sh installs it); skipping");
      return;
    }
    const tls = spawnSync("perl", ["-MNet::SSLeay", "-e1"]).status === 0;
    if (!tls) console.warn("swaks has no TLS (libnet-ssleay-perl missing); testing without --tls");
    const file = join(r.dir, "notes.txt");
    writeFileSync(file, "attached by swaks\n");
    const before = r.deliveries.length;
    // Async spawn: the receiver runs in this process, a blocking spawn would starve it.
    const proc = Bun.spawn(
      [
        "swaks",
        "--server",
        `127.0.0.1:${r.port}`,
        "--from",
        "ops@sender.test",
        "--to",
        "box3@in.test",
        ...(tls ? ["--tls"] : []),
        "--ehlo",
        "swaks.example.com",
        "--header",
        "Subject: from swaks",
        "--attach",
        `@${file}`,
      ],
      { stdout: "pipe", stderr: "pipe", timeout: 20_000 },
    );
    const stdout = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    expect(stdout).toContain("<~  250 2.6.0 OK");
    expect(r.deliveries.length).toBe(before + 1);
    const d = r.deliveries.at(-1)!;
    expect(d.session.tls).toBe(tls);
    expect(d.session.helo).toBe("swaks.example.com");
    expect(d.raw).toContain("Subject: from swaks");
    expect(d.raw).toContain('filename="notes.txt"');
  });
});

describe("SMTP receiver limits", () => {
  test("per-IP message rate: over the limit MAIL FROM gets 450 (temporary)", async () => {
    const r = await startReceiver({ perIpPerMinute: 2 });
    try {
      const c = await RawSmtp.open(r.port);
      await c.cmd("EHLO client.example.com");
      expect((await c.cmd("MAIL FROM:<a@sender.test>")).code).toBe(250);
      await c.cmd("RSET");
      expect((await c.cmd("MAIL FROM:<a@sender.test>")).code).toBe(250);
      await c.cmd("RSET");
      const third = await c.cmd("MAIL FROM:<a@sender.test>");
      expect(third.code).toBe(450);
      c.close();
    } finally {
      await r.stop();
    }
  });

  test("per-recipient-key rate: a received message counts; over the limit RCPT TO gets 450, other mailboxes unaffected", async () => {
    const r = await startReceiver({ perRecipientPerMinute: 1 });
    try {
      const c = await RawSmtp.open(r.port);
      await c.cmd("EHLO client.example.com");
      await c.cmd("MAIL FROM:<a@sender.test>");
      expect((await c.cmd("RCPT TO:<busy@in.test>")).code).toBe(250);
      expect((await c.cmd("DATA")).code).toBe(354);
      c.write("Subject: one\r\n\r\nhello\r\n.\r\n");
      expect((await c.reply()).code).toBe(250);
      await c.cmd("MAIL FROM:<a@sender.test>");
      expect((await c.cmd("RCPT TO:<busy@in.test>")).code).toBe(450);
      expect((await c.cmd("RCPT TO:<quiet@in.test>")).code).toBe(250);
      c.close();
      expect(r.deliveries).toHaveLength(1);
    } finally {
      await r.stop();
    }
  });

  test("RCPT TO lines without a message, repeated or not, use up nothing of a mailbox's allowance", async () => {
    const r = await startReceiver({ perRecipientPerMinute: 3, perIpPerMinute: 1000 });
    try {
      const attacker = await RawSmtp.open(r.port);
      await attacker.cmd("EHLO attacker.example.com");
      for (let round = 0; round < 5; round++) {
        expect((await attacker.cmd("MAIL FROM:<x@attacker.test>")).code).toBe(250);
        for (let i = 0; i < 20; i++) expect((await attacker.cmd("RCPT TO:<victim@in.test>")).code).toBe(250);
        await attacker.cmd("RSET");
      }
      attacker.close();
      const sender = await RawSmtp.open(r.port);
      await sender.cmd("EHLO friend.example.com");
      for (let n = 0; n < 3; n++) {
        await sender.cmd("MAIL FROM:<friend@sender.test>");
        expect((await sender.cmd("RCPT TO:<victim@in.test>")).code).toBe(250);
        expect((await sender.cmd("DATA")).code).toBe(354);
        sender.write(`Subject: ${n}\r\n\r\nhello\r\n.\r\n`);
        expect((await sender.reply()).code).toBe(250);
      }
      await sender.cmd("MAIL FROM:<friend@sender.test>");
      expect((await sender.cmd("RCPT TO:<victim@in.test>")).code).toBe(450); // the allowance is the messages received
      sender.close();
      expect(r.deliveries).toHaveLength(3);
    } finally {
      await r.stop();
    }
  });

  test("concurrent connections per IP are capped with 421; closing one frees a slot", async () => {
    const r = await startReceiver({ maxConnectionsPerIp: 2 });
    try {
      const a = await RawSmtp.open(r.port);
      const b = await RawSmtp.open(r.port);
      expect([a.greeting.code, b.greeting.code]).toEqual([220, 220]);
      const c = await RawSmtp.open(r.port);
      expect(c.greeting.code).toBe(421);
      c.close();
      a.close();
      await sleep(100);
      const d = await RawSmtp.open(r.port);
      expect(d.greeting.code).toBe(220);
      b.close();
      d.close();
    } finally {
      await r.stop();
    }
  });

  test("without a certificate STARTTLS is not offered", async () => {
    const r = await startReceiver({ tls: null });
    try {
      const c = await RawSmtp.open(r.port);
      const ehlo = await c.cmd("EHLO client.example.com");
      expect(ehlo.lines.some((l) => l.includes("STARTTLS"))).toBe(false);
      c.close();
    } finally {
      await r.stop();
    }
  });

  test("a handler failure is a 451 temporary failure and the temp file is removed", async () => {
    const r = await startReceiver({
      handler: {
        acceptRecipient: () => ({ ok: true }),
        deliver: async () => {
          throw new Error("disk on fire");
        },
      },
    });
    try {
      await expect(transport(r.port).sendMail({ from: "a@sender.test", to: "x@in.test", text: "hi" })).rejects.toMatchObject({ responseCode: 451 });
      expect(pendingTempFiles(r.tempDir)).toEqual([]);
    } finally {
      await r.stop();
    }
  });

  test("a handler taking bytes gets small messages in memory (no temp file) and large ones as a file", async () => {
    const got: { kind: "bytes" | "file"; raw: string; size: number; tempFiles: string[] }[] = [];
    let tempDir = "";
    const r = await startReceiver({
      tls: null,
      handler: {
        acceptRecipient: () => ({ ok: true }),
        async deliver(envelope, rawPath) {
          got.push({ kind: "file", raw: readFileSync(rawPath, "latin1"), size: envelope.size, tempFiles: pendingTempFiles(tempDir) });
        },
        async deliverBytes(envelope, raw) {
          got.push({ kind: "bytes", raw: Buffer.from(raw).toString("latin1"), size: envelope.size, tempFiles: pendingTempFiles(tempDir) });
        },
      },
    });
    tempDir = r.tempDir;
    try {
      const t = transport(r.port);
      await t.sendMail({ from: "a@sender.test", to: "x@in.test", subject: "small", text: "tiny body" });
      const big = "y".repeat(IN_MEMORY_MESSAGE_BYTES + 10_000);
      await t.sendMail({ from: "a@sender.test", to: "x@in.test", subject: "large", text: big });
      expect(got.map((g) => g.kind)).toEqual(["bytes", "file"]);
      const [small, large] = got as [(typeof got)[0], (typeof got)[0]];
      expect(small.tempFiles).toEqual([]); // nothing written for the small one
      expect(small.raw).toStartWith("Received: from ");
      expect(small.raw).toContain("tiny body");
      expect(small.size).toBe(Buffer.byteLength(small.raw, "latin1"));
      expect(large.tempFiles).toHaveLength(1);
      expect(large.raw).toStartWith("Received: from ");
      expect(large.raw).toContain("Subject: large");
      expect(large.size).toBe(Buffer.byteLength(large.raw, "latin1"));
      expect(pendingTempFiles(r.tempDir)).toEqual([]);
    } finally {
      await r.stop();
    }
  });
});
