// The InboundHandler `pier serve` runs: RCPT TO looks the address up (unknown, archived or
// blocked -> 550; the per-recipient rate limit is keyed by bucket id), DATA files one copy per
// recipient bucket. Blobs (message.eml, attachments, each bucket's message.json) are stored
// first, outside any transaction; then ONE transaction commits every bucket's copy (one new
// version per bucket, through commitChanges) together with received_count,
// last_received_path and the message row. Only after that COMMIT does the client get 250; any
// failure before it answers 451 and the sender retries, so nothing is half-filed or lost.
// Messages arriving together share that transaction (group-commit.ts), each in its own
// savepoint, and everything before the transaction (verification, parsing, message.json, the
// blobs: prepare.ts) runs in a worker thread (inbound-worker.ts).
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { DNSResolver } from "mailauth";
import { commitChanges, type SystemWriter } from "../files";
import type { Deps } from "../../core/context";
import { DiskBlobStore } from "../../blobs/disk";
import type { BlobStore } from "../../blobs/store";
import { transaction, type Tx } from "../../db/tx";
import type { InboundEnvelope, InboundHandler, SmtpSessionInfo } from "../../smtp/server";
import { lookupRecipient } from "../buckets";
import { GroupCommitter, type GroupCommitOptions } from "./group-commit";
import type { ReadOptions } from "./inbound";
import { prepareMessage } from "./prepare";
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
  const committer = new GroupCommitter(deps.db, deps.sqlite, opts.groupCommit);
  const resolver = opts.noDnsCache ? opts.resolver : cachingResolver(opts.resolver);
  const blobDir = deps.blobs instanceof DiskBlobStore ? deps.blobs.dir : null; // the worker opens a disk store itself
  const reader = opts.inProcessReading || !blobDir ? null : new InboundReader(blobDir, resolver, !opts.noDnsCache);
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
  const started = performance.now();
  const { copies } = opts.reader
    ? await opts.reader.prepare(envelope, raw, session, readOpts)
    : await prepareMessage(deps.blobs, envelope, raw, session, readOpts);

  const now = deps.clock.now().toISOString();
  const st = filingStatements(deps.sqlite);
  const write = (tx: Tx) => {
    for (const c of copies) {
      // Re-checked here: the address may have been switched off since RCPT TO.
      const row = st.address.get(c.bucketId);
      if (!row?.enabled || row.disabledByAdminAt) throw new Error(`address of bucket ${c.bucketId} no longer accepts mail`);
      commitChanges(deps, INBOUND_WRITER, c.bucketId, c.changes, { kind: "write", comment: `inbound email ${envelope.id}` }, tx);
      st.countReceived.run(row.localPart, c.folder, c.receivedAt, now);
      st.insertMessage.run(c.bucketId, c.folder, c.messageId, c.receivedAt, c.from, c.subject, c.size, c.attachmentCount);
    }
  };
  if (opts.committer) {
    const prepared = performance.now();
    await opts.committer.commit(write);
    opts.committer.stats.prepareMs += prepared - started;
    opts.committer.stats.commitWaitMs += performance.now() - prepared;
  } else {
    transaction(deps.db, write);
  }
}
