// Test harness for the SMTP receiver: an in-process receiver with a recording handler, and a
// raw line-based SMTP client for the conversations a library client would never have.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../../../src/core/log";
import { startSmtpServer, type InboundEnvelope, type InboundHandler, type SmtpOptions, type SmtpSessionInfo } from "../../../src/smtp/server";
import { generate } from "selfsigned";

export interface Delivery {
  envelope: InboundEnvelope;
  session: SmtpSessionInfo;
  /** The raw message when it is small enough to keep in a test; otherwise null. */
  raw: string | null;
  fileSize: number;
}

export interface Receiver {
  port: number;
  deliveries: Delivery[];
  tempDir: string;
  dir: string;
  stop(): Promise<void>;
}

let tlsCache: { key: string; cert: string } | null = null;
export async function testTls() {
  if (!tlsCache) {
    const p = await generate([{ name: "commonName", value: "mx.pier.test" }], { keySize: 2048, days: 1 } as Parameters<typeof generate>[1]);
    tlsCache = { key: p.private, cert: p.cert };
  }
  return tlsCache;
}

/** Accepts any address @in.test except nobody@…; keys recipients by local part (a "bucket"). */
export const acceptingHandler = (deliveries: Delivery[], deliver?: InboundHandler["deliver"]): InboundHandler => ({
  acceptRecipient(address) {
    const [local, domain] = address.toLowerCase().split("@");
    if (domain !== "in.test" || local === "nobody") return { ok: false, code: 550, message: "No such mailbox" };
    return { ok: true, key: `box:${local}` };
  },
  async deliver(envelope, rawPath, session) {
    const fileSize = statSync(rawPath).size;
    deliveries.push({ envelope, session, fileSize, raw: fileSize < 1_000_000 ? readFileSync(rawPath, "utf8") : null });
    if (deliver) await deliver(envelope, rawPath, session);
  },
});

export async function startReceiver(over: Partial<SmtpOptions> & { handler?: InboundHandler } = {}): Promise<Receiver> {
  const dir = mkdtempSync(join(tmpdir(), "pier-smtp-"));
  const deliveries: Delivery[] = [];
  const tempDir = join(dir, "tmp");
  const { handler, ...opts } = over;
  const smtp = await startSmtpServer(handler ?? acceptingHandler(deliveries), {
    host: "127.0.0.1",
    port: 0,
    serverName: "mx.pier.test",
    maxMessageBytes: 1024 * 1024,
    maxRecipients: 100,
    perIpPerMinute: 10_000,
    perRecipientPerMinute: 10_000,
    tls: await testTls(),
    tempDir,
    log: silentLogger,
    closeTimeoutMs: 500,
    ...opts,
  });
  return {
    port: smtp.port,
    deliveries,
    tempDir,
    dir,
    stop: async () => {
      await smtp.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A raw SMTP conversation over a real socket. */
export class RawSmtp {
  private buf = "";
  private waiters: (() => void)[] = [];
  closed = false;
  greeting: { code: number; text: string } = { code: 0, text: "" };
  private constructor(readonly socket: Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => {
      this.buf += d;
      this.wake();
    });
    socket.on("close", () => {
      this.closed = true;
      this.wake();
    });
    socket.on("error", () => {});
  }
  private wake() {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((f) => f());
  }
  static async open(port: number): Promise<RawSmtp> {
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    const c = new RawSmtp(socket);
    c.greeting = await c.reply();
    return c;
  }
  /** The next complete reply (all lines of a multi-line reply). */
  async reply(timeoutMs = 10_000): Promise<{ code: number; lines: string[]; text: string }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = /^(?:\d{3}-[^\n]*\n)*(\d{3}) [^\n]*\n/.exec(this.buf);
      if (m) {
        const text = m[0];
        this.buf = this.buf.slice(text.length);
        return { code: Number(m[1]), lines: text.trim().split(/\r?\n/), text };
      }
      if (this.closed) throw new Error(`connection closed; buffered: ${JSON.stringify(this.buf)}`);
      if (Date.now() > deadline) throw new Error(`no reply in ${timeoutMs} ms; buffered: ${JSON.stringify(this.buf)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }
  write(data: string) {
    this.socket.write(data);
  }
  async cmd(line: string) {
    this.write(line + "\r\n");
    return this.reply();
  }
  close() {
    this.socket.destroy();
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
