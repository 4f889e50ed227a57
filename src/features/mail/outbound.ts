// Outbound mail behind a small interface: an SMTP relay (nodemailer) when PIER_SMTP_RELAY_URL is
// set, otherwise an outbox table the instance admin reads (a log line says a message is waiting,
// never its content: it may hold a one-time code).
import type { Transporter } from "nodemailer";
import type { Deps } from "../../core/context";
import { newId } from "../../core/ids";
import { mailOutbox } from "../../db/schema";
import { transaction } from "../../db/tx";
import { isStartTlsFailure, RelayTlsRequiredError, relayRequiresStartTls, type RelayTlsMode } from "./relay-tls";

export interface OutboundMessage {
  to: string;
  subject: string;
  text: string;
  /** What sent it, for the outbox listing (site-email-code, publish-failed, ...). */
  kind: string;
}

export interface Mailer {
  readonly via: "relay" | "outbox";
  send(msg: OutboundMessage): Promise<{ id: string }>;
}

export class OutboxMailer implements Mailer {
  readonly via = "outbox" as const;
  constructor(private readonly deps: Deps) {}

  async send(msg: OutboundMessage): Promise<{ id: string }> {
    const id = newId("msg");
    transaction(this.deps.db, (tx) => {
      tx.insert(mailOutbox)
        .values({ id, toAddress: msg.to, subject: msg.subject, textBody: msg.text, kind: msg.kind, createdAt: this.deps.clock.now().toISOString() })
        .run();
    });
    this.deps.log.info("outbound message stored in the outbox (no SMTP relay configured; read it with `pier admin mail outbox`)", {
      message_id: id,
      kind: msg.kind,
    });
    return { id };
  }
}

/**
 * How long the relay may keep Pier waiting (ms). Mail is sent from jobs, which run one at a time:
 * nodemailer's own defaults (2 minutes to connect, 10 minutes of silence) let one stalled relay
 * hold publishes and renewals that long per message. Tests shorten them.
 */
export const relayTimeouts = { connectMs: 30_000, greetingMs: 30_000, silenceMs: 60_000 };

export class SmtpRelayMailer implements Mailer {
  readonly via = "relay" as const;
  private transport: Promise<Transporter> | null = null;
  private readonly requireTls: boolean;
  constructor(
    private readonly deps: Deps,
    private readonly relayUrl: string,
    private readonly from: string,
    tls: RelayTlsMode = "auto",
  ) {
    this.requireTls = relayRequiresStartTls(relayUrl, tls);
  }

  async send(msg: OutboundMessage): Promise<{ id: string }> {
    // nodemailer is loaded with the first message: most processes (every serving worker) never
    // send one, and it is the largest module Pier would otherwise load at start.
    this.transport ??= import("nodemailer").then((m) =>
      m.createTransport({
        url: this.relayUrl,
        requireTLS: this.requireTls,
        connectionTimeout: relayTimeouts.connectMs,
        greetingTimeout: relayTimeouts.greetingMs,
        socketTimeout: relayTimeouts.silenceMs,
      }),
    );
    let info: { messageId?: string };
    try {
      info = await (await this.transport).sendMail({ from: this.from, to: msg.to, subject: msg.subject, text: msg.text });
    } catch (e) {
      if (this.requireTls && isStartTlsFailure(e)) {
        const relay = new URL(this.relayUrl).host;
        throw new RelayTlsRequiredError(
          `not sent: the SMTP relay ${relay} did not give an encrypted connection (STARTTLS: ${e instanceof Error ? e.message : String(e)}), and --smtp-relay-tls requires one, so neither the relay's credentials nor the message were sent. Turn STARTTLS on at the relay (with a certificate valid for ${new URL(this.relayUrl).hostname}), use an smtps:// URL, or set --smtp-relay-tls opportunistic for a relay on a network you trust.`,
          { cause: e },
        );
      }
      throw e;
    }
    this.deps.log.info("outbound message relayed", { kind: msg.kind, message_id: info.messageId });
    return { id: String(info.messageId ?? newId("msg")) };
  }
}

/**
 * Text a stranger chose (a site title) made fit for a mail Pier sends in its own name: no
 * control, bidi or invisible characters, no line breaks (which could fake headers or paragraphs),
 * at most `max` characters, and in quotes so it reads as the name it is, not as Pier's words.
 */
export function quotedForMail(text: string, max = 60): string {
  const clean = text
    .replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}"]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  const chars = [...clean];
  return `"${
    chars.length > max
      ? `${chars
          .slice(0, max - 1)
          .join("")
          .trimEnd()}…`
      : clean
  }"`;
}

/** Built once with Deps (a field), so the relay connection pool is shared by the process. */
export function newMailer(deps: Deps): Mailer {
  return deps.config.smtpRelayUrl
    ? new SmtpRelayMailer(deps, deps.config.smtpRelayUrl, `Pier <no-reply@${deps.urls.mailDomain}>`, deps.config.smtpRelayTls)
    : new OutboxMailer(deps);
}

/** The process's mailer. */
export function mailerFor(deps: Deps): Mailer {
  return deps.mailer;
}

/** How long the outbox keeps a message: its codes expire in minutes, its notices are in the notifications too. */
export const OUTBOX_KEEP_MS = 14 * 24 * 3600_000;

/**
 * Forget outbox messages older than `keepMs`. They hold who asked for a code to which site, in
 * clear (the operator reads them as they are); kept for ever they became a visitor log.
 */
export function pruneOutbox(deps: Deps, keepMs = OUTBOX_KEEP_MS): number {
  const before = new Date(deps.clock.now().getTime() - keepMs).toISOString();
  return deps.sqlite.query("DELETE FROM mail_outbox WHERE created_at < ?").run(before).changes;
}

/** Newest outbox messages first (admin CLI and tests). */
export function listOutbox(deps: Deps, limit = 50) {
  return deps.sqlite
    .query<{ id: string; to_address: string; subject: string; text_body: string; kind: string; created_at: string }, [number]>(
      "SELECT id, to_address, subject, text_body, kind, created_at FROM mail_outbox ORDER BY created_at DESC, rowid DESC LIMIT ?",
    )
    .all(limit);
}

/** One outbox message by id, or undefined. */
export function getOutboxMessage(deps: Deps, id: string) {
  return (
    deps.sqlite
      .query<{ id: string; to_address: string; subject: string; text_body: string; kind: string; created_at: string }, [string]>(
        "SELECT id, to_address, subject, text_body, kind, created_at FROM mail_outbox WHERE id = ?",
      )
      .get(id) ?? undefined
  );
}
