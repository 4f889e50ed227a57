// The copy of a message mailauth reads keeps its first MAX_DKIM_SIGNATURES DKIM signatures and
// renames the rest, found as mailauth finds header fields, however the bytes arrive (D276).
import { describe, expect, test } from "bun:test";
import { Readable } from "node:stream";
import { parseHeaders } from "mailauth/lib/tools";
import { limitDkimSignatures, limitDkimSignaturesInBytes, MAX_DKIM_SIGNATURES, UNVERIFIED_DKIM_HEADER } from "../../src/features/mail/dkim-limit";

async function throughStream(raw: Buffer, chunkSize: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for (let i = 0; i < raw.length; i += chunkSize) chunks.push(raw.subarray(i, i + chunkSize));
  const out: Buffer[] = [];
  for await (const c of Readable.from(chunks).pipe(limitDkimSignatures())) out.push(c as Buffer);
  return Buffer.concat(out);
}

/** What mailauth's verifier sees: the header fields it parses (up to the first empty line, bare LF as CRLF) and the body. */
function asMailauthReads(raw: Buffer): { keys: string[]; body: string } {
  const s = raw.toString("binary").replace(/\r?\n/g, "\r\n");
  const end = s.startsWith("\r\n") ? 0 : s.indexOf("\r\n\r\n");
  const head = end < 0 ? s : s.slice(0, end);
  return { keys: parseHeaders(Buffer.from(head, "binary")).parsed.map((r) => r.key ?? ""), body: end < 0 ? "" : s.slice(end + (end === 0 ? 2 : 4)) };
}

const sig = (name: string, i: number) => `${name}: v=1; a=rsa-sha256; d=d${i}.test; s=s${i};\r\n\tl=${i}; h=from; bh=AAAA; b=BBBB\r\n`;
const names = ["DKIM-Signature", "dkim-signature", "DKIM-SIGNATURE", "DKIM-Signature \t", "DKIM-Signature\r\n "];
const body = "Body line one\r\nDKIM-Signature: in the body, not a header\r\n\r\nlast\r\n";

describe("limitDkimSignatures", () => {
  const many = Buffer.from(
    "Received: from x\r\n" + Array.from({ length: 12 }, (_, i) => sig(names[i % names.length]!, i)).join("") + "From: a@b.test\r\nSubject: s\r\n\r\n" + body,
    "binary",
  );

  test("keeps the first five signatures, renames the rest, leaves every other field and the body alone; any chunking", async () => {
    const expected = limitDkimSignaturesInBytes(many);
    const seen = asMailauthReads(expected);
    expect(seen.keys.filter((k) => k === "dkim-signature").length).toBe(MAX_DKIM_SIGNATURES);
    expect(seen.keys.filter((k) => k === UNVERIFIED_DKIM_HEADER.toLowerCase()).length).toBe(12 - MAX_DKIM_SIGNATURES);
    expect(seen.keys.filter((k) => !k.includes("dkim-signature"))).toEqual(["received", "from", "subject"]);
    expect(seen.body).toBe(body);
    // The kept ones are the topmost, unchanged.
    expect(expected.toString("binary")).toContain(sig(names[4]!, 4));
    expect(expected.toString("binary")).toContain(`\r\n${UNVERIFIED_DKIM_HEADER}: v=1; a=rsa-sha256; d=d5.test;`);
    expect(expected.toString("binary")).toContain(`\r\n${UNVERIFIED_DKIM_HEADER}: v=1; a=rsa-sha256; d=d9.test;`); // its name was folded
    for (const size of [1, 2, 3, 7, 64, 1000, many.length]) expect((await throughStream(many, size)).equals(expected)).toBe(true);
  });

  test("a message with at most five signatures reaches mailauth byte for byte", async () => {
    const five = Buffer.from(Array.from({ length: 5 }, (_, i) => sig(names[i]!, i)).join("") + "From: a@b.test\n\n" + body.replace(/\r\n/g, "\n"));
    expect(limitDkimSignaturesInBytes(five)).toBe(five);
    for (const size of [1, 5, 4096]) expect((await throughStream(five, size)).equals(five)).toBe(true);
  });

  test("bare LF line ends, a header block without a body, and a message starting with an empty line", async () => {
    const bare = Buffer.from(Array.from({ length: 8 }, (_, i) => sig("DKIM-Signature", i).replace(/\r\n/g, "\n")).join("") + "From: a@b.test\n\nbody\n");
    const out = asMailauthReads(await throughStream(bare, 3));
    expect(out.keys.filter((k) => k === "dkim-signature").length).toBe(MAX_DKIM_SIGNATURES);
    expect(out.body).toBe("body\r\n");

    const noBody = Buffer.from(Array.from({ length: 8 }, (_, i) => sig("DKIM-Signature", i)).join("") + "From: a@b.test\r\n");
    const headOnly = asMailauthReads(await throughStream(noBody, 5));
    expect(headOnly.keys.filter((k) => k === "dkim-signature").length).toBe(MAX_DKIM_SIGNATURES);
    expect(headOnly.keys.at(-1)).toBe("from");

    // An empty first line ends an empty header block: what follows is body, left as it is.
    const bodyOnly = Buffer.from("\r\n" + Array.from({ length: 8 }, (_, i) => sig("DKIM-Signature", i)).join(""));
    expect((await throughStream(bodyOnly, 1)).equals(bodyOnly)).toBe(true);
    expect(limitDkimSignaturesInBytes(bodyOnly)).toBe(bodyOnly);
  });

  test("names mailauth does not read as DKIM-Signature are not counted", async () => {
    const lookalikes = Buffer.from(
      Array.from({ length: 8 }, (_, i) => sig(["X-DKIM-Signature", "DKIM-Signature-Not", "ARC-Message-Signature", "X-Google-DKIM-Signature"][i % 4]!, i)).join(
        "",
      ) + "From: a@b.test\r\n\r\nbody\r\n",
    );
    expect(limitDkimSignaturesInBytes(lookalikes)).toBe(lookalikes);
  });
});
