// From a received raw message to what gets filed: authentication verdicts, decoded fields,
// attachment temp files, and the message.json object and file list for one bucket. The filer
// (filer.ts) puts these into buckets.
import { existsSync, readFileSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { DNSResolver } from "mailauth";
import { SmtpReply, type InboundEnvelope, type SmtpSessionInfo } from "../../smtp/server";
import { shouldRejectForDmarc, verifyAuthentication, type AuthenticationResults } from "./sender-auth";
import { parseMessageFile, type DecodedMessage } from "./parse";
import { attachmentPath, messageEmlPath, messageFolder, messageJsonPath } from "./paths";

export const MESSAGE_JSON_VERSION = 1;

/** Messages up to this size are read whole for verification and parsing. */
export const IN_MEMORY_READ_BYTES = 1024 * 1024;

/** A message's scratch directory exists only once it had an attachment. */
export function removeScratch(dir: string): Promise<void> {
  return existsSync(dir) ? rm(dir, { recursive: true, force: true }) : Promise.resolve();
}

export interface MessageJson extends DecodedMessage {
  version: number;
  id: string;
  received_at: string;
  /** Bucket-relative folder holding message.eml, message.json and attachments/. */
  folder: string;
  size: number;
  envelope: {
    mail_from: string | null;
    /** Only the recipients this copy was delivered to (other buckets' addresses stay private). */
    rcpt_to: string[];
    remote_ip: string;
    helo: string;
    tls: boolean;
  };
  authentication: AuthenticationResults;
}

export interface InboundMessage {
  envelope: InboundEnvelope;
  session: SmtpSessionInfo;
  decoded: DecodedMessage;
  auth: AuthenticationResults;
  /** Temp file per decoded.attachments entry. */
  attachmentFiles: string[];
  /** Removes the attachment temp files. */
  cleanup(): Promise<void>;
}

export interface ReadOptions {
  /** Scratch space; each message gets its own subdirectory. */
  tempDir: string;
  /** Our host name for Authentication-Results. */
  mta: string;
  resolver?: DNSResolver;
  rejectDmarcFail: boolean;
}

/**
 * Verify, then parse. Throws SmtpReply(550) when DMARC enforcement is on and the message fails
 * it; otherwise always resolves (a message that cannot be parsed still gets a message.json).
 */
export async function readInboundMessage(
  envelope: InboundEnvelope,
  rawMessage: string | Uint8Array,
  session: SmtpSessionInfo,
  opts: ReadOptions,
): Promise<InboundMessage> {
  // A small message is read once, synchronously, and both checkers work on the bytes; a large
  // one is streamed from its file by each, so memory stays flat.
  const raw =
    typeof rawMessage !== "string"
      ? Buffer.from(rawMessage.buffer, rawMessage.byteOffset, rawMessage.byteLength)
      : statSync(rawMessage).size <= IN_MEMORY_READ_BYTES
        ? readFileSync(rawMessage)
        : rawMessage;
  const auth = await verifyAuthentication(raw, {
    ip: session.remoteAddress,
    helo: session.helo,
    mailFrom: envelope.mailFrom,
    mta: opts.mta,
    resolver: opts.resolver,
  });
  if (shouldRejectForDmarc(auth, opts.rejectDmarcFail))
    throw new SmtpReply(550, `Message rejected: DMARC policy of ${auth.dmarc.domain ?? "the sender domain"} says reject`);
  const dir = join(opts.tempDir, envelope.id);
  try {
    const { message, attachmentFiles } = await parseMessageFile(raw, { tempDir: dir });
    // The scratch directory is made with the first attachment: without one there is nothing to
    // look up (one system call less per message).
    const cleanup = () => (attachmentFiles.length > 0 ? removeScratch(dir) : Promise.resolve());
    return { envelope, session, decoded: message, auth, attachmentFiles, cleanup };
  } catch (e) {
    await removeScratch(dir);
    throw e;
  }
}

/**
 * Per attachment (same order as decoded.attachments): stored with this content type, or not
 * stored and why (forbidden file type, executable content, a name no bucket path can have).
 * Attachments not stored stay in message.eml; message.json says `path: null, not_stored: <why>`.
 */
export type AttachmentPlan = ({ store: true; contentType: string } | { store: false; reason: string })[];

/** The message.json object for the copy delivered to `recipients`, with attachment paths filled. */
export function messageJsonFor(msg: InboundMessage, recipients: string[], plan?: AttachmentPlan): MessageJson {
  const folder = messageFolder(msg.envelope.receivedAt, msg.envelope.id);
  return {
    version: MESSAGE_JSON_VERSION,
    id: msg.envelope.id,
    received_at: msg.envelope.receivedAt.toISOString(),
    folder,
    size: msg.envelope.size,
    envelope: {
      mail_from: msg.envelope.mailFrom,
      rcpt_to: recipients,
      remote_ip: msg.session.remoteAddress,
      helo: msg.session.helo,
      tls: msg.session.tls,
    },
    ...msg.decoded,
    attachments: msg.decoded.attachments.map((a, i) => {
      const p = plan?.[i];
      return p && !p.store ? { ...a, path: null, not_stored: p.reason } : { ...a, path: attachmentPath(folder, a.filename) };
    }),
    authentication: msg.auth,
  };
}

/** One file of a filed message: bytes come from a local file or from memory. */
export interface MessageFile {
  path: string;
  contentType: string;
  source: { file: string } | { bytes: Uint8Array };
}

/**
 * Everything to write into one bucket for this message, in one version: message.eml (from the
 * raw temp file), message.json, and each attachment. The filer feeds this to the files service.
 */
export function messageFilesFor(
  msg: InboundMessage,
  raw: string | Uint8Array,
  recipients: string[],
  plan?: AttachmentPlan,
): { json: MessageJson; files: MessageFile[] } {
  const json = messageJsonFor(msg, recipients, plan);
  const files: MessageFile[] = [
    { path: messageEmlPath(json.folder), contentType: "message/rfc822", source: typeof raw === "string" ? { file: raw } : { bytes: raw } },
    { path: messageJsonPath(json.folder), contentType: "application/json", source: { bytes: new TextEncoder().encode(JSON.stringify(json, null, 2) + "\n") } },
    ...json.attachments.flatMap((a, i) => {
      const p = plan?.[i];
      if (a.path === null || (p && !p.store)) return [];
      return [{ path: a.path, contentType: p?.store ? p.contentType : a.content_type, source: { file: msg.attachmentFiles[i]! } }];
    }),
  ];
  return { json, files };
}
