// Everything about a received message that happens before its filing transaction: verify and
// parse it (inbound.ts), decide which attachments become files, build each bucket's
// message.json, and store every blob (message.eml, message.json, attachments). What is left
// for the commit is plain data: per bucket, the changes and the message row's fields. It runs
// in the reading worker (inbound-worker.ts) with its own handle on the same blob directory, so
// the event loop that speaks SMTP and commits does none of the hashing and file writes.
import { createReadStream, readFileSync, statSync } from "node:fs";
import type { BlobStore, BlobInfo, PutOptions } from "../../blobs/store";
import { SMALL_BLOB_BYTES } from "../../blobs/store";
import type { InboundEnvelope, SmtpSessionInfo } from "../../smtp/server";
import type { BlobRef, Change } from "../files";
import { ExecutableScanner, forbiddenReason, guessContentType, normalizeContentType, normalizePath } from "../files";
import { messageFilesFor, readInboundMessage, type AttachmentPlan, type InboundMessage, type MessageFile, type ReadOptions } from "./inbound";

/** One bucket's copy, ready for commitChanges and the message row. */
export interface PreparedCopy {
  bucketId: string;
  changes: Change[];
  folder: string;
  messageId: string;
  receivedAt: string;
  from: string | null;
  subject: string | null;
  size: number;
  attachmentCount: number;
}

export interface PreparedMessage {
  /**
   * Every blob the copies refer to is durable (file and directory fsynced), or, with
   * `deferSync`, written and named: durable once the caller's syncfs barrier has passed.
   */
  copies: PreparedCopy[];
}

/**
 * Blobs of one message stored at the same time: enough for message.eml, message.json and a
 * couple of attachments; a message with hundreds of attachments still opens only this many
 * files at once (each large one streams through its own small buffer).
 */
const BLOB_LANES = 4;

/** `run` over `items`, at most `lanes` at a time; settles only once every started call has. */
async function inLanes<T, R>(items: T[], lanes: number, run: (item: T) => Promise<R>): Promise<Map<T, R>> {
  const out = new Map<T, R>();
  let next = 0;
  let failed = false;
  const settled = await Promise.allSettled(
    Array.from({ length: Math.min(lanes, items.length) }, async () => {
      while (next < items.length && !failed) {
        const item = items[next++]!;
        try {
          out.set(item, await run(item));
        } catch (e) {
          failed = true; // the other lanes start nothing new
          throw e;
        }
      }
    }),
  );
  const rejected = settled.find((r) => r.status === "rejected");
  if (rejected) throw (rejected as PromiseRejectedResult).reason;
  return out;
}

/** Which attachments become files, and with which content type. */
async function planAttachments(msg: InboundMessage): Promise<AttachmentPlan> {
  const plan: AttachmentPlan = [];
  for (const [i, a] of msg.decoded.attachments.entries()) {
    let path: string;
    try {
      path = normalizePath(`_email/attachments/${a.filename}`);
    } catch {
      plan.push({ store: false, reason: "invalid_name" });
      continue;
    }
    let contentType: string;
    try {
      contentType = normalizeContentType(a.content_type);
    } catch {
      contentType = guessContentType(path);
    }
    if (forbiddenReason(path, contentType)) {
      plan.push({ store: false, reason: "forbidden_file_type" });
      continue;
    }
    if (await scanFile(msg.attachmentFiles[i]!)) {
      plan.push({ store: false, reason: "executable_content" });
      continue;
    }
    plan.push({ store: true, contentType });
  }
  return plan;
}

/** The executable kind of a file on disk, read as a stream (a PE header may sit past any fixed head). */
async function scanFile(path: string): Promise<string | null> {
  const scanner = new ExecutableScanner();
  const reader = Bun.file(path).stream().getReader();
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      const kind = scanner.push(r.value);
      if (kind) return kind;
    }
  } finally {
    void reader.cancel();
  }
  return scanner.finish();
}

/**
 * Verify, parse and store the blobs of one message (throws SmtpReply(550) on DMARC enforcement,
 * see readInboundMessage). The message's scratch files are gone when this settles.
 */
export async function prepareMessage(
  blobs: BlobStore,
  envelope: InboundEnvelope,
  /** The raw message: its temp file, or its bytes (small messages). */
  raw: string | Uint8Array,
  session: SmtpSessionInfo,
  opts: ReadOptions,
  /** deferSync: the caller awaits a SyncBarrier before committing (filer.ts). */
  putOpts: PutOptions = {},
): Promise<PreparedMessage> {
  const msg = await readInboundMessage(envelope, raw, session, opts);
  try {
    const plan = await planAttachments(msg);
    // Recipients by bucket (the rate-limit key is the bucket id): one copy per bucket.
    const byBucket = new Map<string, string[]>();
    for (const r of envelope.recipients) byBucket.set(r.key, [...(byBucket.get(r.key) ?? []), r.address]);
    const copies = [...byBucket].map(([bucketId, rcpts]) => ({ bucketId, ...messageFilesFor(msg, raw, rcpts, plan) }));

    // Keyed by source: message.eml and attachments are shared by the copies and stored once
    // (message.json bytes are made per copy). A message's blobs are stored side by side. Each
    // is made durable here (its file, then its directory: two flushes one after the other),
    // unless the caller defers that to one syncfs for many messages (deferSync, D225).
    const stored = new Map<string | Uint8Array, Promise<BlobRef>>();
    const put = async (f: MessageFile): Promise<BlobRef> => {
      let info: BlobInfo;
      if ("bytes" in f.source) info = await blobs.putBytes(f.source.bytes, putOpts);
      else {
        const path = f.source.file;
        info =
          statSync(path).size <= SMALL_BLOB_BYTES ? await blobs.putBytes(readFileSync(path), putOpts) : await blobs.put(createReadStream(path), {}, putOpts);
      }
      return { sha256: info.sha256, size: info.size, md5: info.md5, contentType: f.contentType };
    };
    const blobOf = async (f: MessageFile): Promise<BlobRef> => {
      const key = "file" in f.source ? f.source.file : f.source.bytes;
      let ref = stored.get(key);
      if (!ref) stored.set(key, (ref = put(f)));
      return { ...(await ref), contentType: f.contentType };
    };
    const refs = await inLanes(
      copies.flatMap((c) => c.files),
      BLOB_LANES,
      blobOf,
    );
    const prepared: PreparedCopy[] = [];
    for (const c of copies) {
      const changes: Change[] = c.files.map((f) => ({ path: f.path, blob: refs.get(f)! }));
      prepared.push({
        bucketId: c.bucketId,
        changes,
        folder: c.json.folder,
        messageId: c.json.id,
        receivedAt: c.json.received_at,
        from: c.json.from?.address?.slice(0, 500) ?? null,
        subject: c.json.subject?.slice(0, 1000) ?? null,
        size: c.json.size,
        attachmentCount: c.json.attachments.filter((a) => a.path !== null).length,
      });
    }
    return { copies: prepared };
  } finally {
    await msg.cleanup();
  }
}
