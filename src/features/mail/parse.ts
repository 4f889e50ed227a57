// Raw message file -> the decoded fields of message.json, with mailparser's streaming
// MailParser: attachments are piped to temp files (never buffered), only the text and HTML
// bodies are held in memory, and those are capped. A message mailparser cannot parse (a header
// bomb, broken MIME) is not an error: the fields stay empty and `parse_error` says why; the raw
// message.eml remains the source of truth.
import { createReadStream, createWriteStream, mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { MailParser, type AddressObject, type AttachmentStream, type HeaderLines, type MessageText } from "mailparser";
import { safeAttachmentName, uniqueNamer } from "./paths";
import { settlesWithin } from "../../core/deadline";

export interface MailAddress {
  name: string;
  address: string;
}

export interface AttachmentMeta {
  /** Safe, unique-within-the-message file name (see paths.ts). */
  filename: string;
  /** The name the sender gave, as decoded (may be unsafe; for display only). */
  original_filename: string | null;
  content_type: string;
  size: number;
  sha256: string;
  disposition: "attachment" | "inline";
  content_id: string | null;
  /** Bucket-relative path once filed; null until then, or when not stored (see not_stored). */
  path: string | null;
  /** Why the attachment was not stored as its own file (it remains in message.eml). */
  not_stored?: string;
}

export interface DecodedMessage {
  from: MailAddress | null;
  to: MailAddress[];
  cc: MailAddress[];
  reply_to: MailAddress[];
  subject: string | null;
  date: string | null;
  message_id: string | null;
  in_reply_to: string | null;
  references: string[];
  text: string | null;
  html: string | null;
  text_truncated: boolean;
  html_truncated: boolean;
  headers: Record<string, string>;
  attachments: AttachmentMeta[];
  /** Attachments past the per-message limit: counted, not stored (they remain in message.eml). */
  attachments_omitted: number;
  parse_error: string | null;
}

export interface ParsedMessage {
  message: DecodedMessage;
  /** Temp file of each entry of message.attachments, same order. */
  attachmentFiles: string[];
}

export interface ParseOptions {
  /** Where attachment temp files go (created with the first attachment; the caller removes it, a failed parse itself). */
  tempDir: string;
  maxBodyChars?: number;
  maxAttachments?: number;
}

export const DEFAULT_MAX_BODY_CHARS = 2_000_000;
export const DEFAULT_MAX_ATTACHMENTS = 200;

/** Headers worth keeping for agents: threading, mailing lists, auto-replies, client. */
export const KEPT_HEADERS = [
  "sender",
  "return-path",
  "delivered-to",
  "list-id",
  "list-unsubscribe",
  "list-post",
  "auto-submitted",
  "precedence",
  "x-auto-response-suppress",
  "x-mailer",
  "user-agent",
  "importance",
  "x-priority",
  "content-language",
  "thread-topic",
  "thread-index",
];
const MAX_HEADER_VALUE = 2000;

function addresses(v: AddressObject | AddressObject[] | undefined): MailAddress[] {
  const out: MailAddress[] = [];
  const walk = (list: { name: string; address?: string; group?: { name: string; address?: string }[] }[]) => {
    for (const a of list) {
      if (a.group) walk(a.group);
      else if (a.address) out.push({ name: a.name ?? "", address: a.address });
    }
  };
  for (const obj of v === undefined ? [] : Array.isArray(v) ? v : [v]) walk(obj.value);
  return out;
}

function keptHeaders(lines: HeaderLines | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { key, line } of lines ?? []) {
    if (!KEPT_HEADERS.includes(key) || key in out) continue;
    const value = line
      .slice(line.indexOf(":") + 1)
      .replace(/\r?\n[ \t]+/g, " ")
      .trim();
    out[key] = value.slice(0, MAX_HEADER_VALUE);
  }
  return out;
}

const cap = (s: string | undefined, max: number): [string | null, boolean] =>
  s === undefined ? [null, false] : s.length > max ? [s.slice(0, max), true] : [s, false];

/** `raw`: the message's file (streamed) or its bytes. */
export async function parseMessageFile(raw: string | Buffer, opts: ParseOptions): Promise<ParsedMessage> {
  const maxBody = opts.maxBodyChars ?? DEFAULT_MAX_BODY_CHARS;
  const maxAttachments = opts.maxAttachments ?? DEFAULT_MAX_ATTACHMENTS;
  const message: DecodedMessage = {
    from: null,
    to: [],
    cc: [],
    reply_to: [],
    subject: null,
    date: null,
    message_id: null,
    in_reply_to: null,
    references: [],
    text: null,
    html: null,
    text_truncated: false,
    html_truncated: false,
    headers: {},
    attachments: [],
    attachments_omitted: 0,
    parse_error: null,
  };
  const attachmentFiles: string[] = [];
  const uniqueName = uniqueNamer();

  const parser = new MailParser({
    checksumAlgo: "sha256",
    skipImageLinks: true, // do not inline cid: images into the HTML as data URLs (memory)
    skipTextToHtml: true,
    skipTextLinks: true,
    maxHtmlLengthToParse: maxBody,
  });
  let headerLines: HeaderLines | undefined;
  parser.on("headerLines", (l: HeaderLines) => (headerLines = l));

  // Every attachment file created, finished or not, and every store still running: a parse
  // that fails mid-way waits for them and removes the files.
  // Each file with the moment its stream closed: a stream destroyed before its lazy open still
  // creates the file afterwards, so removal must wait for the close, not just for the pipeline.
  const created: { file: string; closed: Promise<unknown> }[] = [];
  const pending: Promise<void>[] = [];
  // Attachment streams still being written. When the MIME splitter fails (too many parts, a
  // header over its limit) mailparser stops without ending the attachment it was streaming, and
  // destroying the parser does not end it either: its file would stay open for good and its
  // store never settle. A failed parse destroys these itself.
  const streaming = new Set<AttachmentStream["content"]>();
  const storeAttachment = async (a: AttachmentStream) => {
    streaming.add(a.content);
    try {
      if (message.attachments.length >= maxAttachments) {
        message.attachments_omitted++;
        a.content.resume();
        return;
      }
      // Created with the first attachment: most messages have none.
      mkdirSync(opts.tempDir, { recursive: true, mode: 0o700 });
      const file = join(opts.tempDir, `attachment-${message.attachments.length}`);
      const out = createWriteStream(file, { mode: 0o600 });
      created.push({ file, closed: new Promise<void>((r) => out.once("close", () => r())) });
      await pipeline(a.content, out);
      const n = message.attachments.length + 1;
      message.attachments.push({
        filename: uniqueName(safeAttachmentName(a.filename, `attachment-${n}`)),
        original_filename: a.filename ?? null,
        content_type: a.contentType || "application/octet-stream",
        size: a.size ?? 0,
        sha256: a.checksum ?? "",
        disposition: a.contentDisposition === "inline" || (a.related && a.contentDisposition !== "attachment") ? "inline" : "attachment",
        content_id: a.cid ?? null,
        path: null,
      });
      attachmentFiles.push(file);
    } finally {
      streaming.delete(a.content);
      a.release?.();
    }
  };

  const done = new Promise<void>((resolve, reject) => {
    parser.on("data", (d: AttachmentStream | MessageText) => {
      if (d.type === "attachment") pending.push(storeAttachment(d));
      else {
        [message.text, message.text_truncated] = cap(d.text, maxBody);
        [message.html, message.html_truncated] = cap(d.html, maxBody);
      }
    });
    parser.on("end", () => Promise.all(pending).then(() => resolve(), reject));
    parser.on("error", reject);
  });
  const input = typeof raw === "string" ? createReadStream(raw) : null;
  if (input) {
    input.on("error", (e) => parser.destroy(e));
    input.pipe(parser);
  } else parser.end(raw);

  try {
    await done;
  } catch (e) {
    input?.destroy();
    parser.destroy();
    // Ends an attachment that was mid-way: its pipeline fails and closes its file.
    for (const s of streaming) s.destroy(e as Error);
    message.parse_error = (e as Error).message || String(e);
  }

  // Header fields are available even when the body failed to parse.
  message.from = addresses(parser.from)[0] ?? null;
  message.to = addresses(parser.to);
  message.cc = addresses(parser.cc);
  message.reply_to = addresses(parser.replyTo);
  message.subject = parser.subject ?? null;
  message.date = parser.date instanceof Date && !Number.isNaN(parser.date.getTime()) ? parser.date.toISOString() : null;
  message.message_id = parser.messageId ?? null;
  message.in_reply_to = parser.inReplyTo ?? null;
  message.references =
    parser.references === undefined ? [] : Array.isArray(parser.references) ? parser.references : parser.references.split(/\s+/).filter(Boolean);
  message.headers = keptHeaders(headerLines);
  if (message.parse_error) {
    // Attachments of a message that failed halfway are not trustworthy: keep only the .eml.
    // Let stores still writing settle first (bounded), or a late file would outlive the rm.
    await settlesWithin(Promise.allSettled([...pending, ...created.map((c) => c.closed)]), 5_000);
    // The whole scratch directory, not only its files: with no attachment files left the caller
    // has nothing to clean up and would leave the directory behind (one per such message).
    if (created.length > 0) await rm(opts.tempDir, { recursive: true, force: true });
    attachmentFiles.length = 0;
    message.attachments = [];
  }
  return { message, attachmentFiles };
}
