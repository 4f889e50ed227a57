// SMTP limits count a sender the way the HTTP limits count a client: an IPv4 address by itself,
// an IPv6 address by its /64, so a host cannot rotate through its /64 to get fresh allowances
// (open connections and messages per minute alike).
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { connect, type Socket } from "node:net";
import { addressKey } from "../../../src/core/guess-limits";
import { senderKey } from "../../../src/smtp/server";
import { startReceiver } from "./smtp-harness";

/** Connect from `localAddress` and read the greeting's reply code. */
async function greetingFrom(port: number, localAddress: string): Promise<{ code: number; socket: Socket }> {
  const socket = connect({ port, host: "127.0.0.1", localAddress });
  socket.on("error", () => {});
  let buf = "";
  const code = await new Promise<number>((resolve, reject) => {
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => {
      buf += d;
      const line = /^(\d{3})[ -]/.exec(buf);
      if (line && buf.includes("\r\n")) resolve(Number(line[1]));
    });
    socket.once("close", () => reject(new Error(`closed before a greeting: ${JSON.stringify(buf)}`)));
  });
  return { code, socket };
}

const hex16 = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));

describe("SMTP sender groups", () => {
  test("every address of one IPv6 /64 is one sender; other /64s are others; the key is the HTTP limits' key", () => {
    fc.assert(
      fc.property(
        fc.array(hex16, { minLength: 4, maxLength: 4 }),
        fc.array(hex16, { minLength: 4, maxLength: 4 }),
        fc.array(hex16, { minLength: 4, maxLength: 4 }),
        (prefix, hostA, hostB) => {
          const a = [...prefix, ...hostA].join(":");
          const b = [...prefix, ...hostB].join(":");
          expect(senderKey(a)).toBe(senderKey(b));
          expect(senderKey(a.toUpperCase())).toBe(senderKey(a));
          expect(senderKey(a)).toBe(addressKey(a));
          const otherPrefix = [...prefix.slice(0, 3), ((Number.parseInt(prefix[3]!, 16) + 1) & 0xffff).toString(16)];
          expect(senderKey([...otherPrefix, ...hostA].join(":"))).not.toBe(senderKey(a));
        },
      ),
    );
    expect(senderKey("2001:db8:1:2::1")).toBe(senderKey("2001:0db8:0001:0002:ffff:ffff:ffff:fffe"));
    expect(senderKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(senderKey("203.0.113.7")).not.toBe(senderKey("203.0.113.8"));
  });

  test("the open-connections cap is per sender: a full sender gets 421, another IPv4 address still gets in", async () => {
    const r = await startReceiver({ maxConnectionsPerIp: 2 });
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const c = await greetingFrom(r.port, "127.0.0.1");
        sockets.push(c.socket);
        expect(c.code).toBe(220);
      }
      const third = await greetingFrom(r.port, "127.0.0.1");
      sockets.push(third.socket);
      expect(third.code).toBe(421);
      // 127.0.0.2 is another loopback address (Linux answers the whole 127/8): its own sender.
      const other = await greetingFrom(r.port, "127.0.0.2");
      sockets.push(other.socket);
      expect(other.code).toBe(220);
    } finally {
      for (const s of sockets) s.destroy();
      await r.stop();
    }
  });
});
