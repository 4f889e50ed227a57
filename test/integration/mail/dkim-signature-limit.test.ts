// A message carrying hundreds of DKIM signatures, over real SMTP into the reader: only the first
// MAX_DKIM_SIGNATURES are verified (no key lookup, no body pass for the rest), a real signature
// among them still passes, and the stored message keeps every signature (D276).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { dkimSign, type DNSResolver } from "mailauth";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { MAX_DKIM_SIGNATURES } from "../../../src/features/mail/dkim-limit";
import { readInboundMessage, type InboundMessage } from "../../../src/features/mail/inbound";
import { tableResolver } from "../../../src/features/mail/sender-auth";
import { acceptingHandler, startReceiver, type Delivery, type Receiver } from "./smtp-harness";

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const table = tableResolver({
  // SPF never passes for 127.0.0.1, so DMARC passes only through the DKIM signature.
  "sender.test/TXT": [["v=spf1 -all"]],
  "_dmarc.sender.test/TXT": [["v=DMARC1; p=reject"]],
  "sel._domainkey.sender.test/TXT": [[`v=DKIM1; k=rsa; p=${publicKey.export({ type: "spki", format: "der" }).toString("base64")}`]],
});
const keyLookups: string[] = [];
const dns: DNSResolver = (name, rrtype) => {
  if (name.includes("._domainkey.")) keyLookups.push(name);
  return table(name, rrtype);
};

const BODY_LINES = 40_000; // 76 + 2 bytes each: a ~3 MB body
const body = Array.from({ length: BODY_LINES }, (_, i) => `${String(i).padStart(8, "0")} ${"x".repeat(67)}`).join("\r\n") + "\r\n";
const headers =
  "From: a@sender.test\r\nTo: box@in.test\r\nSubject: many signatures\r\nDate: Sat, 21 Nov 2026 10:00:00 +0000\r\nMessage-ID: <many@sender.test>\r\n";

/**
 * Body hashes of the body's first `length - i` bytes for i < count, in one pass (the body is its
 * own relaxed canonical form: single spaces, no trailing white space).
 */
function prefixHashes(count: number): string[] {
  const out: string[] = [];
  const h = createHash("sha256");
  let at = 0;
  for (let i = count - 1; i >= 0; i--) {
    const end = body.length - 100 - i;
    h.update(body.slice(at, end));
    at = end;
    out[i] = h.copy().digest("base64");
  }
  return out;
}
const bodyHashes = prefixHashes(400);

/**
 * A signature of the sender's choosing with a correct body hash: its own body length (a body
 * pass each) and its own key name (a DNS lookup each), under spellings of the name mailauth reads.
 */
const junk = (i: number) => {
  const name = ["DKIM-Signature", "dkim-signature", "DKIM-SIGNATURE", "DKIM-Signature\r\n "][i % 4];
  return `${name}: v=1; a=rsa-sha256; c=relaxed/relaxed; d=junk${i}.test; s=s${i};\r\n\tl=${body.length - 100 - i}; h=from:to:subject;\r\n\tbh=${bodyHashes[i]};\r\n\tb=${Buffer.alloc(256, i).toString("base64")}\r\n`;
};

async function realSignature(): Promise<string> {
  const options = {
    signatureData: [{ signingDomain: "sender.test", selector: "sel", privateKey: privateKey.export({ type: "pkcs8", format: "pem" }).toString() }],
  };
  return (await dkimSign(headers + "\r\n" + body, options as unknown as Parameters<typeof dkimSign>[1])).signatures;
}

/** `count` junk signatures with the real one at position `realAt` (1 = topmost). */
const message = (real: string, count: number, realAt: number) => {
  const sigs = Array.from({ length: count }, (_, i) => junk(i));
  sigs.splice(realAt - 1, 0, real);
  return Buffer.from(sigs.join("") + headers + "\r\n" + body);
};

const send = (port: number, raw: Buffer) =>
  nodemailer
    .createTransport({ host: "127.0.0.1", port, secure: false, tls: { rejectUnauthorized: false } } as SMTPTransport.Options)
    .sendMail({ envelope: { from: "a@sender.test", to: "box@in.test" }, raw });

describe("DKIM signatures verified per message", () => {
  let r: Receiver;
  let real: string;
  const read: { msg: InboundMessage; sha256Before: string; sha256After: string; stored: string }[] = [];
  beforeAll(async () => {
    real = await realSignature();
    const deliveries: Delivery[] = [];
    r = await startReceiver({
      maxMessageBytes: 40 * 1024 * 1024,
      handler: acceptingHandler(deliveries, async (envelope, rawPath, session) => {
        const sha = () => createHash("sha256").update(readFileSync(rawPath)).digest("hex");
        const sha256Before = sha();
        const msg = await readInboundMessage(envelope, rawPath, session, {
          tempDir: join(r.dir, "mail"),
          mta: "mx.pier.test",
          resolver: dns,
          rejectDmarcFail: false,
        });
        await msg.cleanup();
        read.push({ msg, sha256Before, sha256After: sha(), stored: readFileSync(rawPath, "latin1") });
      }),
    });
  });
  afterAll(() => r.stop());

  test("300 signatures with their own l= and keys: the first five are verified, the real one among them passes", async () => {
    keyLookups.length = 0;
    const raw = message(real, 300, MAX_DKIM_SIGNATURES);
    await send(r.port, raw);
    const { msg, sha256Before, sha256After, stored } = read.at(-1)!;
    const dkim = msg.auth.dkim;
    expect(dkim.length).toBe(MAX_DKIM_SIGNATURES);
    expect(dkim.at(-1)).toMatchObject({ result: "pass", domain: "sender.test", selector: "sel", aligned: true });
    expect(msg.auth.dmarc.result).toBe("pass");
    // No key of a signature past the limit was looked up (the cap, not the message, decides).
    expect(new Set(keyLookups).size).toBeLessThanOrEqual(MAX_DKIM_SIGNATURES);
    expect(keyLookups.some((n) => /^s(\d+)\._domainkey\.junk\1\.test$/.test(n) && Number(n.slice(1, n.indexOf("."))) >= MAX_DKIM_SIGNATURES)).toBe(false);
    // The stored message is the one received, every signature in it under its own name.
    expect(sha256After).toBe(sha256Before);
    expect(stored.match(/^dkim-signature(?:\r\n )?:/gim)!.length).toBe(301);
    expect(stored).not.toContain("X-Pier-Unverified");
    expect(msg.decoded.subject).toBe("many signatures");
  }, 60_000);

  test("a real signature past the limit is not verified: DMARC cannot pass on it", async () => {
    keyLookups.length = 0;
    await send(r.port, message(real, 300, MAX_DKIM_SIGNATURES + 1));
    const { msg } = read.at(-1)!;
    expect(msg.auth.dkim.length).toBe(MAX_DKIM_SIGNATURES);
    expect(msg.auth.dkim.some((d) => d.result === "pass")).toBe(false);
    expect(msg.auth.dmarc.result).toBe("fail");
    expect(keyLookups).not.toContain("sel._domainkey.sender.test");
  }, 60_000);

  test("a message with a few signatures is verified as before, each of them", async () => {
    keyLookups.length = 0;
    await send(r.port, message(real, 2, 2));
    const { msg } = read.at(-1)!;
    expect(msg.auth.dkim.map((d) => d.result === "pass")).toEqual([false, true, false]);
    expect(msg.auth.dmarc.result).toBe("pass");
    expect(new Set(keyLookups).size).toBe(3);
  }, 60_000);
});
