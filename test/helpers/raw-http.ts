// Raw HTTP/1.1 over a socket, for what fetch cannot do: send a body slowly, keep sending after
// the server answered, lie in Content-Length, and see exactly when the server answers or hangs up.
import net from "node:net";

export interface RawResult {
  /** First line of the response, e.g. "HTTP/1.1 413 Payload Too Large"; "" when none came. */
  statusLine: string;
  status: number;
  /** The whole response text received (headers and body). */
  text: string;
  /** Milliseconds from connect until the first response byte (Infinity when none). */
  answeredAfterMs: number;
  /** Milliseconds from connect until the socket closed. */
  closedAfterMs: number;
  /** Body bytes the client managed to write before the server answered or hung up. */
  bodyBytesSent: number;
}

export interface RawOptions {
  port: number;
  /** Request line and headers, without the blank line. */
  head: string;
  /**
   * Called repeatedly to get the next piece of body to write; null = stop sending. `every` ms
   * between pieces (0 = as fast as the socket drains).
   */
  next: (i: number) => Uint8Array | string | null;
  every?: number;
  /** Stop sending once the server answered (default true). */
  stopOnAnswer?: boolean;
  /** Give up (destroy the socket) after this many ms. */
  giveUpMs?: number;
  /**
   * Hang up as soon as a whole response (with a Content-Length) has arrived, instead of waiting
   * for the server to close: a refused body's connection lingers for seconds (body-limit.ts).
   */
  hangUpOnAnswer?: boolean;
}

/** Whether `text` holds a whole response: its head and as many body bytes as it declares. */
function isWholeResponse(text: string): boolean {
  const headEnd = text.indexOf("\r\n\r\n");
  if (headEnd < 0) return false;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, headEnd));
  return length !== null && text.length - (headEnd + 4) >= Number(length[1]);
}

export function rawRequest(o: RawOptions): Promise<RawResult> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let text = "";
    let answeredAt = Infinity;
    let sent = 0;
    let i = 0;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const sock = net.connect(o.port, "127.0.0.1");
    const stopSending = () => {
      stopped = true;
      clearTimeout(timer);
    };
    const pump = () => {
      if (stopped || sock.destroyed) return;
      for (;;) {
        const piece = o.next(i++);
        if (piece === null) return stopSending();
        const buf = typeof piece === "string" ? Buffer.from(piece) : piece;
        sent += buf.byteLength;
        const more = sock.write(buf);
        if (o.every) {
          timer = setTimeout(pump, o.every);
          return;
        }
        if (!more) {
          sock.once("drain", pump);
          return;
        }
        // Let the answer in now and then, as a client with a loop of its own would: a pump that
        // fills the socket for tens of milliseconds reads the server's early 413 only after
        // whatever the server did next (a close on a completed body resets the connection).
        if (i % 64 === 0) {
          setImmediate(pump);
          return;
        }
      }
    };
    sock.on("connect", () => {
      sock.write(`${o.head}\r\n\r\n`);
      pump();
    });
    sock.on("data", (d) => {
      if (answeredAt === Infinity) answeredAt = performance.now() - t0;
      text += d.toString("latin1");
      if (o.stopOnAnswer !== false) stopSending();
      if (o.hangUpOnAnswer && isWholeResponse(text)) sock.destroy();
    });
    sock.on("error", () => {});
    const giveUp = setTimeout(() => sock.destroy(), o.giveUpMs ?? 20_000);
    sock.on("close", () => {
      stopSending();
      clearTimeout(giveUp);
      const statusLine = text.split("\r\n", 1)[0] ?? "";
      resolve({
        statusLine,
        status: Number(statusLine.split(" ")[1] ?? 0),
        text,
        answeredAfterMs: answeredAt,
        closedAfterMs: performance.now() - t0,
        bodyBytesSent: sent,
      });
    });
  });
}

/** The JSON error code in a raw response's body, if any. */
export const rawErrorCode = (r: RawResult): string | undefined => /"code":"([A-Z_]+)"/.exec(r.text)?.[1];
