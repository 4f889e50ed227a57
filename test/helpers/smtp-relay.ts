// An SMTP relay on loopback for Pier's outbound mail (--smtp-relay-url), built on smtp-server:
// it takes messages without TLS, records what it was sent, and refuses recipients on request.
import { SMTPServer } from "smtp-server";

export interface RelayedMessage {
  from: string;
  to: string[];
  data: string;
}

export interface TestRelay {
  port: number;
  url: string;
  messages: RelayedMessage[];
  /** Passwords the relay was sent (in clear: it offers no TLS). */
  passwords: string[];
  stop(): Promise<void>;
}

export function startRelay(o: { host?: string; refuse?: (recipient: string) => boolean } = {}): Promise<TestRelay> {
  const host = o.host ?? "127.0.0.1";
  const messages: RelayedMessage[] = [];
  const passwords: string[] = [];
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      passwords.push(auth.password ?? "");
      cb(null, { user: auth.username });
    },
    onRcptTo(address, _session, cb) {
      if (o.refuse?.(address.address)) {
        const err = new Error("mailbox unavailable") as Error & { responseCode: number };
        err.responseCode = 550;
        cb(err);
      } else cb();
    },
    onData(stream, session, cb) {
      let data = "";
      stream.on("data", (c: Buffer) => (data += c.toString("utf8")));
      stream.on("end", () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        messages.push({ from, to: session.envelope.rcptTo.map((r) => r.address), data });
        cb();
      });
    },
  });
  server.on("error", () => {});
  return new Promise((res) =>
    server.listen(0, host, () => {
      const port = (server.server.address() as { port: number }).port;
      res({
        port,
        url: `smtp://${host.includes(":") ? `[${host}]` : host}:${port}`,
        messages,
        passwords,
        stop: () => new Promise<void>((done) => server.close(() => done())),
      });
    }),
  );
}
