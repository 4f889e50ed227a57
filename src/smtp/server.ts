// The SMTP receiver. It speaks the protocol (via `smtp-server`), enforces the limits that
// protect the process (size, recipients, rates, connections, time: time-limits.ts), streams
// each message to a temp file (or holds a small one in memory, for a handler that takes bytes)
// and hands it to an InboundHandler. It knows nothing about buckets: the handler decides
// which recipients exist and what "delivered" means (Mailpit's smtpd takes a handler the same
// way: https://github.com/axllent/mailpit/blob/develop/internal/smtpd/smtpd.go).
import { closeSync, mkdirSync, openSync, readdirSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server";
import { systemClock } from "../core/clock";
import { addressKey } from "../core/guess-limits";
import { randomToken } from "../core/ids";
import { TokenBuckets } from "../core/token-buckets";
import type { SMTP_REFUSALS } from "../core/pier-metrics";
import { isStorageFull } from "../core/storage-full";
import {
  IN_MEMORY_MESSAGE_BYTES,
  type InboundEnvelope,
  type InboundHandler,
  type RunningSmtp,
  type SmtpOptions,
  type SmtpSessionInfo,
  SmtpReply,
} from "./contract";
import { DEFAULT_TIME_LIMITS, SessionClock, type Overrun } from "./time-limits";

export * from "./contract";

type RefusalReason = (typeof SMTP_REFUSALS)[number];

/** The refusal reason counted for a reply code. */
function refusalReason(code: number): RefusalReason {
  if (code === 550 || code === 551 || code === 553) return "unknown_recipient";
  if (code === 552) return "too_large";
  if (code === 452) return "storage_full";
  if (code === 421 || code === 450 || code === 451) return "temporary";
  if (code >= 500) return "policy";
  return "other";
}

function errorWithCode(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

function sessionInfo(s: SMTPServerSession): SmtpSessionInfo {
  return {
    id: s.id,
    remoteAddress: s.remoteAddress,
    clientHostname: s.clientHostname || `[${s.remoteAddress}]`,
    helo: s.hostNameAppearsAs || "",
    tls: Boolean(s.secure),
  };
}

/** RFC 5321 §4.4 trace header; every value in it was syntax-checked by smtp-server. */
function receivedHeader(s: SMTPServerSession, opts: SmtpOptions, id: string, rcpts: string[], at: Date): string {
  const proto = (s.envelope.smtpUtf8 ? "UTF8SMTP" : "ESMTP") + (s.secure ? "S" : "");
  const helo = (s.hostNameAppearsAs || "unknown").replace(/[^\x21-\x7e]/g, "").slice(0, 255);
  const date = at.toUTCString().replace("GMT", "+0000");
  // Name the recipient only when there is one: with several, each bucket's copy would reveal
  // the others (Bcc). Reverse DNS is off, so smtp-server's clientHostname is just "[ip]".
  const forClause = rcpts.length === 1 ? `\r\n\tfor <${rcpts[0]}>` : "";
  const rdns = s.clientHostname && s.clientHostname !== `[${s.remoteAddress}]` ? `${s.clientHostname} ` : "";
  return `Received: from ${helo} (${rdns}[${s.remoteAddress}])\r\n\tby ${opts.serverName} (Pier) with ${proto} id ${id}${forClause};\r\n\t${date}\r\n`;
}

/**
 * Limit key for a sending address, for its message rate and its open connections: IPv4 as is,
 * IPv6 by its /64 (one host usually owns a whole /64, so per-address limits would be trivial to
 * rotate around), every spelling of one address the same key. The HTTP limits use the same key.
 */
export const senderKey = (ip: string): string => addressKey(ip);

/**
 * The IPv6 /48 of a sender key, or null for IPv4. A /48 is what an end site or a hosting
 * customer usually holds (RFC 6177), so its /64s are one sender's to rotate through.
 */
export function senderNetworkKey(key: string): string | null {
  const m = /^([0-9a-f]{1,4}:[0-9a-f]{1,4}:[0-9a-f]{1,4}):[0-9a-f]{1,4}::\/64$/.exec(key);
  return m ? `${m[1]}::/48` : null;
}

/** The limit keys a connection counts against: its address (or /64) and, for IPv6, its /48. */
const connectionKeys = (ip: string): string[] => {
  const key = senderKey(ip);
  const network = senderNetworkKey(key);
  return network ? [key, network] : [key];
};

export async function startSmtpServer(handler: InboundHandler, opts: SmtpOptions): Promise<RunningSmtp> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log;
  // Leftovers from a crash are half messages nobody was told 250 about: drop them.
  rmSync(opts.tempDir, { recursive: true, force: true });
  mkdirSync(opts.tempDir, { recursive: true, mode: 0o700 });

  const perIp = new TokenBuckets(opts.perIpPerMinute, 50_000);
  const perKey = new TokenBuckets(opts.perRecipientPerMinute, 50_000);
  const maxPerIp = opts.maxConnectionsPerIp ?? 20;
  const maxPerNetwork = opts.maxConnectionsPerNetwork ?? 50;
  // Open connections per limit key (an address or /64, and a /48).
  const openPerKey = new Map<string, number>();
  const counted = new WeakSet<SMTPServerSession>();
  const timeLimits = { ...DEFAULT_TIME_LIMITS, ...opts.timeLimits };
  const clocks = new Map<SMTPServerSession, SessionClock>();
  // The DATA stream being received on a session, ended when its time runs out.
  const dataStreams = new Map<SMTPServerSession, SMTPServerDataStream>();
  // RCPT TO address -> rate key, per transaction (smtp-server replaces the envelope on RSET).
  const keysByEnvelope = new WeakMap<object, Map<string, string>>();
  const metrics = opts.metrics;
  const refuse = (reason: RefusalReason) => metrics?.smtpRefused.inc(metrics.smtpRefused.slotOf(reason));
  // Sessions inside a DATA transaction: a shutdown waits for these and closes the others.
  const inTransaction = new Set<SMTPServerSession>();

  const server = new SMTPServer({
    name: opts.serverName,
    banner: "Pier ESMTP receiver",
    size: opts.maxMessageBytes,
    rejectOversized: true,
    maxRecipients: opts.maxRecipients,
    // Pier only receives for its own addresses: no AUTH, so no relay, nothing to guess.
    disabledCommands: opts.tls ? ["AUTH"] : ["AUTH", "STARTTLS"],
    authOptional: true,
    hideENHANCEDSTATUSCODES: false,
    ...(opts.tls ? { key: opts.tls.key, cert: opts.tls.cert } : {}),
    // No reverse DNS: it costs a lookup per connection and mailauth does its own checks.
    disableReverseLookup: true,
    logger: false,
    maxClients: opts.maxConnections ?? 500,
    socketTimeout: opts.socketTimeoutMs ?? 60_000,
    closeTimeout: opts.closeTimeoutMs ?? 5_000,

    onConnect(session, cb) {
      const keys = connectionKeys(session.remoteAddress);
      const full = keys.findIndex((k, i) => (openPerKey.get(k) ?? 0) >= (i === 0 ? maxPerIp : maxPerNetwork));
      if (full >= 0) {
        refuse("too_many_connections");
        return cb(errorWithCode(421, `Too many connections from your ${full === 0 ? "address" : "network"}, try again later`));
      }
      metrics?.smtpSessions.inc();
      for (const k of keys) openPerKey.set(k, (openPerKey.get(k) ?? 0) + 1);
      counted.add(session);
      clocks.set(session, new SessionClock(timeLimits, opts.maxMessageBytes, (why) => outOfTime(session, why)));
      cb();
    },

    onClose(session) {
      clocks.get(session)?.stop();
      clocks.delete(session);
      if (!counted.has(session)) return;
      counted.delete(session);
      for (const k of connectionKeys(session.remoteAddress)) {
        const n = (openPerKey.get(k) ?? 1) - 1;
        if (n <= 0) openPerKey.delete(k);
        else openPerKey.set(k, n);
      }
    },

    onMailFrom(_address, session, cb) {
      if (perIp.take(senderKey(session.remoteAddress)) > 0) {
        refuse("rate_limited");
        return cb(errorWithCode(450, "Too many messages from your address, try again later"));
      }
      cb();
    },

    onRcptTo(address: SMTPServerAddress, session, cb) {
      const info = sessionInfo(session);
      // A repeat of an address this transaction already accepted replaces it (smtp-server): nothing new to check.
      if (keysByEnvelope.get(session.envelope)?.has(address.address.toLowerCase())) return cb();
      Promise.resolve()
        .then(() => handler.acceptRecipient(address.address, info))
        .then((verdict) => {
          if (!verdict.ok) {
            refuse(refusalReason(verdict.code));
            return cb(errorWithCode(verdict.code, verdict.message));
          }
          const key = verdict.key ?? address.address.toLowerCase();
          // Only looked at here: a message is counted against its mailboxes once it was received
          // (receiveMessage), so RCPT TO lines without a message cannot use up a mailbox's allowance.
          if (perKey.peek(key) > 0) {
            refuse("rate_limited");
            return cb(errorWithCode(450, "Mailbox is receiving too much mail, try again later"));
          }
          let keys = keysByEnvelope.get(session.envelope);
          if (!keys) keysByEnvelope.set(session.envelope, (keys = new Map()));
          keys.set(address.address.toLowerCase(), key);
          cb();
        })
        .catch((e) => {
          log.error("smtp recipient check failed", { error: e, session: session.id });
          refuse("temporary");
          cb(errorWithCode(451, "Temporary failure, try again later"));
        });
    },

    onData(stream: SMTPServerDataStream, session, cb) {
      inTransaction.add(session);
      dataStreams.set(session, stream);
      clocks.get(session)?.dataStarted();
      receiveMessage(stream, session)
        .then(
          (reply) => {
            metrics?.smtpAccepted.inc();
            cb(null, reply);
          },
          (e: unknown) => {
            if (e instanceof SmtpReply) {
              refuse(refusalReason(e.code));
              return cb(errorWithCode(e.code, e.message));
            }
            const code = (e as { code?: string }).code;
            if (code === "ECONNECTION" || code === "ECONNRESET") return cb(e as Error); // client left; no reply reaches it
            if (code === OUT_OF_TIME) return cb(e as Error); // answered 421 and closed already
            if (isStorageFull(e)) {
              // RFC 5321 4.5.3.1.10: 452 "insufficient system storage"; the client keeps the message and retries.
              log.warn("smtp message refused: storage full", { session: session.id });
              refuse("storage_full");
              return cb(errorWithCode(452, "Insufficient system storage, try again later"));
            }
            log.error("smtp delivery failed", { error: e, session: session.id });
            refuse("temporary");
            cb(errorWithCode(451, "Temporary failure while storing the message, try again later"));
          },
        )
        .finally(() => {
          inTransaction.delete(session);
          dataStreams.delete(session);
          clocks.get(session)?.dataAnswered();
          if (closing) closeIdle();
        });
    },
  });

  /** A received message takes one token of each mailbox it is for, or none when one has none left (450 for all). */
  function chargeRecipients(recipients: InboundEnvelope["recipients"]): void {
    const distinct = new Set(recipients.map((r) => r.key));
    for (const key of distinct) if (perKey.peek(key) > 0) throw new SmtpReply(450, "Mailbox is receiving too much mail, try again later");
    for (const key of distinct) perKey.take(key);
  }

  async function receiveMessage(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<string> {
    const id = randomToken(16);
    const receivedAt = clock.now();
    const rcpts = session.envelope.rcptTo.map((r) => r.address);
    const keys = keysByEnvelope.get(session.envelope);
    const tmp = join(opts.tempDir, `${id}.eml`);
    // Synchronous calls: each is a copy into the page cache, microseconds, where an asynchronous
    // one waits for a thread-pool turn (milliseconds on a busy machine) and a small message
    // would pay that four or five times. Awaiting the next chunk keeps the backpressure: memory
    // stays at one chunk (or, for a handler taking bytes, at most IN_MEMORY_MESSAGE_BYTES).
    const held: Buffer[] = [];
    let fd: number | null = null;
    let size = 0;
    const append = (chunk: Buffer) => {
      size += chunk.length;
      if (fd === null && handler.deliverBytes && size <= IN_MEMORY_MESSAGE_BYTES) return void held.push(chunk);
      if (fd === null) {
        fd = openSync(tmp, "wx", 0o600);
        for (const h of held.splice(0)) writeAll(fd, h);
      }
      writeAll(fd, chunk);
    };
    try {
      try {
        append(Buffer.from(receivedHeader(session, opts, id, rcpts, receivedAt)));
        const clock = clocks.get(session);
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          clock?.dataBytes(chunk.length);
          if (stream.sizeExceeded) continue; // keep draining; smtp-server answers 552 at the end
          append(chunk);
        }
        clock?.dataReceived();
      } finally {
        if (fd !== null) closeSync(fd);
      }
      if (stream.sizeExceeded) throw new SmtpReply(552, `Message exceeds fixed maximum message size ${opts.maxMessageBytes}`);
      const envelope: InboundEnvelope = {
        id,
        mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address || null : null,
        recipients: rcpts.map((address) => ({ address, key: keys?.get(address.toLowerCase()) ?? address.toLowerCase() })),
        size,
        receivedAt,
        smtpUtf8: Boolean(session.envelope.smtpUtf8),
      };
      chargeRecipients(envelope.recipients);
      if (fd === null && handler.deliverBytes) await handler.deliverBytes(envelope, Buffer.concat(held, size), sessionInfo(session));
      else await handler.deliver(envelope, tmp, sessionInfo(session));
      log.info("smtp message accepted", { id, from: envelope.mailFrom, recipients: rcpts.length, size, ip: session.remoteAddress });
      return `OK: message received as ${id}`;
    } finally {
      if (fd !== null) {
        try {
          unlinkSync(tmp);
        } catch {
          // already gone
        }
      }
    }
  }

  type Connection = { session: SMTPServerSession; send(code: number, msg: string): void; close(): void };
  const connections = () => (server as unknown as { connections: Set<Connection> }).connections;

  /** A client that ran out of time (time-limits.ts) gets 421 and is closed; a DATA in progress is dropped with its temp file. */
  function outOfTime(session: SMTPServerSession, why: Overrun): void {
    const inData = dataStreams.get(session);
    log.info("smtp connection out of time", { session: session.id, ip: session.remoteAddress, during: why });
    refuse("temporary");
    for (const c of connections()) {
      if (c.session !== session) continue;
      try {
        c.send(
          421,
          why === "data" ? `${opts.serverName} Message data arrives too slowly, closing connection` : `${opts.serverName} Session too long, closing connection`,
        );
      } catch {
        // the socket may already be gone
      }
      c.close();
    }
    // receiveMessage stops at once and removes the temp file; nothing is filed.
    inData?.destroy(Object.assign(new Error("out of time"), { code: OUT_OF_TIME }));
  }

  let closing = false;
  /** Ends sessions not inside a DATA transaction (a shutdown does not wait for idle clients). */
  function closeIdle(): void {
    for (const c of connections()) {
      if (inTransaction.has(c.session)) continue;
      try {
        c.send(421, `${opts.serverName} Service shutting down, try again later`);
      } catch {
        // the socket may already be gone
      }
      c.close();
    }
  }

  // Bun reports clients hanging up (ECONNRESET) here; without a listener it would throw.
  server.on("error", (e: Error & { code?: string }) => {
    if (e.code === "ECONNRESET" || e.code === "EPIPE" || e.code === "ETIMEDOUT") log.debug("smtp client error", { code: e.code });
    else log.warn("smtp server error", { error: e });
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.server.once("error", onError);
    server.listen(opts.port, opts.host, () => {
      server.server.off("error", onError);
      resolve();
    });
  });
  const address = server.server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;

  return {
    port,
    starttls: opts.tls !== null,
    updateTls(tls) {
      // smtp-server rebuilds its secure context; each STARTTLS reads the current one.
      if (opts.tls) server.updateSecureContext({ key: tls.key, cert: tls.cert });
    },
    stop: (timeoutMs) =>
      new Promise<void>((resolve) => {
        closing = true;
        // smtp-server cuts every session after closeTimeout; a transaction gets the whole timeout.
        if (timeoutMs !== undefined) (server as unknown as { options: { closeTimeout: number } }).options.closeTimeout = timeoutMs;
        server.close(() => resolve());
        closeIdle();
      }),
  };
}

/** Error code of a DATA stream ended because its client ran out of time. */
const OUT_OF_TIME = "EPIERTIME";

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.byteLength; ) off += writeSync(fd, bytes, off, bytes.byteLength - off);
}

/** Names of files still in the temp dir (tests assert nothing is left behind). */
export function pendingTempFiles(tempDir: string): string[] {
  try {
    return readdirSync(tempDir);
  } catch {
    return [];
  }
}
