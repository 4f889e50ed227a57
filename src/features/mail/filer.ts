// The InboundHandler `pier serve` runs: RCPT TO looks the address up (unknown, archived or
// blocked -> 550; the per-recipient rate limit is keyed by bucket id), DATA files one copy per
// recipient bucket. Blobs (message.eml, attachments, each bucket's message.json) are stored
// first, outside any transaction; then ONE transaction commits every bucket's copy (one new
// version per bucket, through commitChanges) together with received_count,
// last_received_path and the message row. Only after that COMMIT does the client get 250; any
// failure before it answers 451 and the sender retries, so nothing is half-filed or lost.
// Messages arriving together share that transaction (group-commit.ts), each in its own
// savepoint, and verification and parsing run in a worker thread (inbound-worker.ts).
import { createReadStream, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { DNSResolver } from "mailauth";
import type { BlobRef, Change } from "../files";
import { commitChanges, type SystemWriter } from "../files";
import { forbiddenReason, normalizeContentType } from "../files";
import { normalizePath } from "../files";
import { ExecutableScanner } from "../files";
import { guessContentType } from "../files";
import type { Deps } from "../../core/context";
import { SMALL_BLOB_BYTES, type BlobInfo } from "../../blobs/store";
import { transaction, type Tx } from "../../db/tx";
import type { InboundEnvelope, InboundHandler, SmtpSessionInfo } from "../../smtp/server";
import { lookupRecipient } from "../buckets";
import { GroupCommitter, type GroupCommitOptions } from "./group-commit";
import { messageFilesFor, readInboundMessage, type AttachmentPlan, type InboundMessage, type MessageFile, type ReadOptions } from "./inbound";
import { cachingResolver } from "./dns-cache";
import { InboundReader } from "./inbound-reader";
import { filingStatements } from "./filing-statements";

export const INBOUND_WRITER: SystemWriter = { kind: "system", name: "inbound-mail" };

export interface InboundOptions {
  /** DNS for SPF/DKIM/DMARC; the system resolver when unset (tests pass tableResolver()). */
  resolver?: DNSResolver;
  groupCommit?: GroupCommitOptions;
  /** Verify and parse on the event loop instead of in a worker thread (benchmark comparison). */
  inProcessReading?: boolean;
  /** Ask DNS for every message instead of caching answers (benchmark comparison). */
  noDnsCache?: boolean;
}

export interface InboundFiler extends InboundHandler {
  committer: GroupCommitter;
  /** Stops the reading worker; messages still in flight get a 451. */
  close(): void;
}

export function createInboundHandler(deps: Deps, opts: InboundOptions = {}): InboundFiler {
  const tempDir = join(deps.config.dataDir, "tmp", "mail");
  // Attachment temp files of messages that were never answered 250: nobody needs them.
  rmSync(tempDir, { recursive: true, force: true });
  const committer = new GroupCommitter(deps.db, deps.sqlite, opts.groupCommit, (dirs) => deps.blobs.syncDirs(dirs));
  const resolver = opts.noDnsCache ? opts.resolver : cachingResolver(opts.resolver);
  const reader = opts.inProcessReading ? null : new InboundReader(resolver);
  return {
    acceptRecipient(address) {
      const r = lookupRecipient(deps, address);
      return r.ok ? { ok: true, key: r.bucketId } : r;
    },
    deliver: (envelope, rawPath, session) => fileMessage(deps, envelope, rawPath, session, { resolver, tempDir, committer, reader }),
    deliverBytes: (envelope, raw, session) => fileMessage(deps, envelope, raw, session, { resolver, tempDir, committer, reader }),
    committer,
    close() {
      committer.flush();
      reader?.close();
    },
  };
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

interface BucketCopy {
  bucketId: string;
  json: ReturnType<typeof messageFilesFor>["json"];
  files: MessageFile[];
}

export async function fileMessage(
  deps: Deps,
  envelope: InboundEnvelope,
  /** The raw message: its temp file, or its bytes (small messages). */
  raw: string | Uint8Array,
  session: SmtpSessionInfo,
  opts: { resolver?: DNSResolver; tempDir: string; committer?: GroupCommitter; reader?: InboundReader | null },
): Promise<void> {
  const readOpts: ReadOptions = {
    tempDir: opts.tempDir,
    mta: deps.urls.mailDomain,
    resolver: opts.resolver,
    rejectDmarcFail: deps.config.smtpRejectDmarcFail,
  };
  const msg = opts.reader ? await opts.reader.read(envelope, raw, session, readOpts) : await readInboundMessage(envelope, raw, session, readOpts);
  try {
    const plan = await planAttachments(msg);
    // Recipients by bucket (the rate-limit key is the bucket id): one copy per bucket.
    const byBucket = new Map<string, string[]>();
    for (const r of envelope.recipients) byBucket.set(r.key, [...(byBucket.get(r.key) ?? []), r.address]);
    const copies: BucketCopy[] = [...byBucket].map(([bucketId, rcpts]) => ({ bucketId, ...messageFilesFor(msg, raw, rcpts, plan) }));

    // Blobs first, outside the transaction. Keyed by source: message.eml and attachments are
    // shared by the copies and stored once (message.json bytes are made per copy). Small files
    // are stored in one write; their directory fsyncs are left to the commit, which runs the
    // whole batch's before COMMIT.
    const stored = new Map<string | Uint8Array, BlobRef>();
    const unsyncedDirs: string[] = [];
    const blobOf = async (f: MessageFile): Promise<BlobRef> => {
      const key = "file" in f.source ? f.source.file : f.source.bytes;
      const hit = stored.get(key);
      if (hit) return { ...hit, contentType: f.contentType };
      let info: BlobInfo & { unsyncedDir?: string };
      if ("bytes" in f.source) info = await deps.blobs.putBytes(f.source.bytes, { deferDirSync: true });
      else {
        const path = f.source.file;
        info =
          statSync(path).size <= SMALL_BLOB_BYTES
            ? await deps.blobs.putBytes(readFileSync(path), { deferDirSync: true })
            : await deps.blobs.put(createReadStream(path));
      }
      if (info.unsyncedDir) unsyncedDirs.push(info.unsyncedDir);
      const ref = { sha256: info.sha256, size: info.size, md5: info.md5, contentType: f.contentType };
      stored.set(key, ref);
      return ref;
    };
    const changes = new Map<string, Change[]>();
    for (const c of copies) {
      const list: Change[] = [];
      for (const f of c.files) list.push({ path: f.path, blob: await blobOf(f) });
      changes.set(c.bucketId, list);
    }

    const now = deps.clock.now().toISOString();
    const st = filingStatements(deps.sqlite);
    const write = (tx: Tx) => {
      for (const c of copies) {
        // Re-checked here: the address may have been switched off since RCPT TO.
        const row = st.address.get(c.bucketId);
        if (!row?.enabled || row.disabledByAdminAt) throw new Error(`address of bucket ${c.bucketId} no longer accepts mail`);
        commitChanges(deps, INBOUND_WRITER, c.bucketId, changes.get(c.bucketId)!, { kind: "write", comment: `inbound email ${envelope.id}` }, tx);
        st.countReceived.run(row.localPart, c.json.folder, c.json.received_at, now);
        st.insertMessage.run(
          c.bucketId,
          c.json.folder,
          c.json.id,
          c.json.received_at,
          c.json.from?.address?.slice(0, 500) ?? null,
          c.json.subject?.slice(0, 1000) ?? null,
          c.json.size,
          c.json.attachments.filter((a) => a.path !== null).length,
        );
      }
    };
    if (opts.committer) await opts.committer.commit(write, unsyncedDirs);
    else {
      await deps.blobs.syncDirs(unsyncedDirs);
      transaction(deps.db, write);
    }
  } finally {
    await msg.cleanup();
  }
}
