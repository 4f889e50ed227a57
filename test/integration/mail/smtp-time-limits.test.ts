// How long a client may hold a connection, over real sockets with shortened limits (D277): a
// trickled DATA and an endless run of commands are cut with 421, a slow but steady DATA is not.
import { describe, expect, test } from "bun:test";
import { pendingTempFiles, senderKey, senderNetworkKey } from "../../../src/smtp/server";
import { RawSmtp, sleep, startReceiver } from "./smtp-harness";

async function openTransaction(port: number): Promise<RawSmtp> {
  const c = await RawSmtp.open(port);
  expect((await c.cmd("EHLO client.example.com")).code).toBe(250);
  expect((await c.cmd("MAIL FROM:<a@sender.test>")).code).toBe(250);
  expect((await c.cmd("RCPT TO:<box@in.test>")).code).toBe(250);
  expect((await c.cmd("DATA")).code).toBe(354);
  return c;
}

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  for (const stop = Date.now() + ms; !check() && Date.now() < stop; ) await sleep(20);
}

describe("SMTP time limits", () => {
  test("a DATA trickled a byte at a time gets 421 and is closed; its temp file is removed, nothing is delivered", async () => {
    const r = await startReceiver({ timeLimits: { dataGraceMs: 300, dataMinBytesPerSecond: 1000 } });
    try {
      const c = await openTransaction(r.port);
      c.write(`From: a@sender.test\r\nSubject: slow\r\n\r\n${"x".repeat(1000)}\r\n`);
      await until(() => pendingTempFiles(r.tempDir).length === 1);
      expect(pendingTempFiles(r.tempDir)).toHaveLength(1);
      // 10 bytes a second, never idle for as long as the 60 s idle timeout.
      const trickle = setInterval(() => c.socket.writable && c.write("y"), 100);
      const started = Date.now();
      try {
        const cut = await c.reply(20_000);
        expect(cut.code).toBe(421);
        expect(cut.text).toContain("too slowly");
      } finally {
        clearInterval(trickle);
      }
      // Allowed: 0.3 s + ~1 KB at 1 KB/s; seconds, not the minutes a trickle could last.
      expect(Date.now() - started).toBeLessThan(15_000);
      await until(() => c.closed);
      expect(c.closed).toBe(true);
      await expect(c.reply(500)).rejects.toThrow('closed; buffered: ""'); // the 421 was the last word
      await until(() => pendingTempFiles(r.tempDir).length === 0);
      expect(pendingTempFiles(r.tempDir)).toEqual([]);
      expect(r.deliveries).toEqual([]);
    } finally {
      await r.stop();
    }
  }, 30_000);

  test("a session of nothing but commands gets 421 and is closed when its time is up", async () => {
    const r = await startReceiver({ timeLimits: { commandPhaseMs: 1000 } });
    try {
      const c = await RawSmtp.open(r.port);
      expect((await c.cmd("EHLO client.example.com")).code).toBe(250);
      const started = Date.now();
      let last = 250;
      while (last === 250 && Date.now() - started < 20_000) {
        last = (await c.cmd("NOOP")).code;
        await sleep(100);
      }
      expect(last).toBe(421);
      await until(() => c.closed);
      expect(c.closed).toBe(true);
    } finally {
      await r.stop();
    }
  }, 30_000);

  test("a slow but steady DATA is received whole, and its transfer does not use up the session's time", async () => {
    // 400 KB at ~100 KB/s: about 4 s, longer than the session's 2.5 s outside DATA and the 2 s
    // grace, five times the 20 KB/s minimum.
    const r = await startReceiver({ timeLimits: { commandPhaseMs: 2500, dataGraceMs: 2000, dataMinBytesPerSecond: 20_000 } });
    try {
      const c = await openTransaction(r.port);
      c.write("From: a@sender.test\r\nSubject: steady\r\n\r\n");
      const line = "z".repeat(98) + "\r\n";
      for (let i = 0; i < 40; i++) {
        c.write(line.repeat(100));
        await sleep(100);
      }
      const reply = await c.cmd(".");
      expect(reply.code).toBe(250);
      expect(r.deliveries).toHaveLength(1);
      expect(r.deliveries[0]!.envelope.size).toBeGreaterThan(400_000);
      expect((await c.cmd("NOOP")).code).toBe(250);
      c.close();
    } finally {
      await r.stop();
    }
  }, 60_000);

  test("IPv6 senders also count per /48; IPv4 only per address", () => {
    expect(senderNetworkKey(senderKey("2001:db8:1:2::5"))).toBe("2001:db8:1::/48");
    expect(senderNetworkKey(senderKey("2001:0db8:0001:ffff:1::9"))).toBe("2001:db8:1::/48");
    expect(senderNetworkKey(senderKey("203.0.113.7"))).toBeNull();
    expect(senderNetworkKey(senderKey("::ffff:203.0.113.7"))).toBeNull();
  });
});
