// What the SMTP receiver promises its handler and its caller: the envelope and session a
// handler sees, the verdicts and replies it may give, the receiver's options and handle.
import type { Clock } from "../core/clock";
import type { Logger } from "../core/log";
import type { PierMetrics } from "../core/pier-metrics";
import type { TimeLimits } from "./time-limits";

/** What the handler learns about the client connection. */
export interface SmtpSessionInfo {
  id: string;
  remoteAddress: string;
  /** Reverse DNS name when known, otherwise `[ip]`. */
  clientHostname: string;
  /** The name the client gave in EHLO/HELO. */
  helo: string;
  /** True once the connection runs over TLS (STARTTLS). */
  tls: boolean;
}

export interface EnvelopeRecipient {
  address: string;
  /** Rate-limit key the handler returned for this address (e.g. a bucket id). */
  key: string;
}

export interface InboundEnvelope {
  /** Random, URL-safe id of this received message (also used in the Received header). */
  id: string;
  /** MAIL FROM; null for the null reverse-path `<>` (bounces). */
  mailFrom: string | null;
  recipients: EnvelopeRecipient[];
  /** Bytes of the raw message as stored (including the Received header we prepend). */
  size: number;
  receivedAt: Date;
  smtpUtf8: boolean;
}

export type RecipientVerdict = { ok: true; key?: string } | { ok: false; code: number; message: string };

export interface InboundHandler {
  /** Decide at RCPT TO. Refuse with a 5xx (no such mailbox, blocked) or 4xx (try later). */
  acceptRecipient(address: string, session: SmtpSessionInfo): RecipientVerdict | Promise<RecipientVerdict>;
  /**
   * Store the message durably, then resolve: the client is told 250 only after that. The file
   * at `rawMessagePath` is deleted when this settles; move or copy what you keep. Throw an
   * SmtpReply to choose the answer (e.g. 552 quota); any other error becomes 451 "try later".
   */
  deliver(envelope: InboundEnvelope, rawMessagePath: string, session: SmtpSessionInfo): Promise<void>;
  /**
   * Optional: a message of at most IN_MEMORY_MESSAGE_BYTES arrives here as its bytes, with no
   * temp file written at all (the same contract as deliver otherwise). Larger messages, and
   * every message for a handler without this method, go to deliver.
   */
  deliverBytes?(envelope: InboundEnvelope, raw: Uint8Array, session: SmtpSessionInfo): Promise<void>;
}

/**
 * Messages up to this size are held in memory instead of a temp file when the handler takes
 * bytes: a file costs a create, writes and an unlink, and most mail is this small. Bounded by
 * maxConnections x this size in the worst case (500 x 128 KB = 64 MB).
 */
export const IN_MEMORY_MESSAGE_BYTES = 128 * 1024;

/** An error carrying the SMTP reply a handler wants the client to see. */
export class SmtpReply extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface SmtpOptions {
  host: string;
  port: number;
  /** Our name in the greeting and the Received header (the mail domain or host name). */
  serverName: string;
  maxMessageBytes: number;
  maxRecipients: number;
  /** Messages (MAIL FROM) per minute per sending IP (senderKey: IPv6 by /64). */
  perIpPerMinute: number;
  /** Accepted RCPT TO per minute per recipient key. */
  perRecipientPerMinute: number;
  /** Concurrent connections per sending IP (senderKey: IPv6 by /64). */
  maxConnectionsPerIp?: number;
  /** Concurrent connections per IPv6 /48 (an end site's usual allocation), on top of the per-/64 limit. */
  maxConnectionsPerNetwork?: number;
  /** How long a connection may last outside DATA, and how slowly a DATA may come in (time-limits.ts). */
  timeLimits?: Partial<TimeLimits>;
  maxConnections?: number;
  /** PEM key and certificate for STARTTLS; null = STARTTLS not offered. */
  tls: { key: string; cert: string } | null;
  /** Exclusive directory for in-flight messages; emptied at start. */
  tempDir: string;
  log: Logger;
  clock?: Clock;
  socketTimeoutMs?: number;
  closeTimeoutMs?: number;
  /** Sessions, accepted and refused messages are counted here when given. */
  metrics?: PierMetrics;
}

export interface RunningSmtp {
  port: number;
  starttls: boolean;
  /** Present another certificate on STARTTLS from the next connection on (a renewed one); no effect when STARTTLS is off. */
  updateTls(tls: { key: string; cert: string }): void;
  /**
   * Stop accepting connections, let transactions in progress (a DATA being received or filed)
   * finish, close idle sessions at once; after `timeoutMs` every session is cut.
   */
  stop(timeoutMs?: number): Promise<void>;
}
