// The upload-pack request rewrite behind D250: "thin-pack" joins the first want line's
// capabilities, with the pkt-line length fixed; anything else passes unchanged.
// test/integration/gitsync/limits.test.ts covers a real server (git http-backend).
import { expect, test } from "bun:test";
import { advertisesThinPack, askThinPack } from "../../src/features/gitsync/thin-pack";

const pkt = (s: string) => (s.length + 4).toString(16).padStart(4, "0") + s;
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const oid = "a".repeat(40);

test("thin-pack is added to the first want line, once, with its length", () => {
  const body = new TextEncoder().encode(`${pkt(`want ${oid} multi_ack_detailed ofs-delta\n`)}${pkt("deepen 1\n")}0000`);
  const asked = text(askThinPack(body));
  expect(asked).toBe(`${pkt(`want ${oid} multi_ack_detailed ofs-delta thin-pack\n`)}${pkt("deepen 1\n")}0000`);
  expect(text(askThinPack(new TextEncoder().encode(asked)))).toBe(asked);
  const notWant = new TextEncoder().encode(`${pkt("command=ls-refs\n")}0000`);
  expect(askThinPack(notWant)).toBe(notWant);
});

test("the advertisement's capabilities decide", () => {
  const adv = (caps: string) => new TextEncoder().encode(`${pkt("# service=git-upload-pack\n")}0000${pkt(`${oid} HEAD\0${caps}\n`)}0000`);
  expect(advertisesThinPack(adv("multi_ack thin-pack side-band-64k shallow"))).toBe(true);
  expect(advertisesThinPack(adv("multi_ack side-band-64k shallow no-thin-pack"))).toBe(false);
});
