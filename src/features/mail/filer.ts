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
//
// Durability (D225): where Linux syncfs is available, a message held in memory has its blobs
// written and named without their own fsyncs, and waits for one shared syncfs of the blob
// store's file system (a SyncBarrier, src/blobs/barrier.ts) before it joins a commit: one
// syncfs covers the blobs of every message that reached it. The order is unchanged: blobs and
// their names durable, then COMMIT, then the WAL fsynced (D215), then 250. Elsewhere, for
// larger messages and while syncs are slow, every blob is fsynced with its directory as before.
import { rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { DNSResolver } from "mailauth";
import { commitChanges, type SystemWriter } from "../files";
import type { Deps } from "../../core/context";
import { SyncBarrier, type FileSystemSync } from "../../blobs/barrier";
import { DiskBlobStore } from "../../blobs/disk";
import { syncfsBarrier } from "../../blobs/syncfs";
import { transaction, type Tx } from "../../db/tx";
import type { InboundEnvelope, InboundHandler, SmtpSessionInfo } from "../../smtp/server";
import { accountReadOnly, lookupRecipient } from "../buckets";
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
  /**
   * What a syncfs barrier flushes (D225): `blobs` (the default; the WAL keeps its own fsync),
   * `blobs+wal` (the WAL too, when the database shares the blobs' file system: correct, and
   * measured no faster, so only a benchmark comparison), `off` (fsync every blob and its
   * directory, as where syncfs is unavailable).
   */
  syncfs?: "blobs" | "blobs+wal" | "off";
  /** The file-system sync the barrier runs: syncfs in its own thread unless given (tests inject a failing one). */
  fileSystemSync?: FileSystemSync;
}

export interface InboundFiler extends InboundHandler {
  committer: GroupCommitter;
  /** The syncfs barrier the blobs (and perhaps the WAL) wait for; null where every file is fsynced. */
  barrier: SyncBarrier | null;
  /** Stops the reading worker; messages still in flight get a 451. */
  close(): void;
}

export function createInboundHandler(deps: Deps, opts: InboundOptions = {}): InboundFiler {
  const tempDir = join(deps.config.dataDir, "tmp", "mail");
  // Attachment temp files of messages that were never answered 250: nobody needs them.
  rmSync(tempDir, { recursive: true, force: true });
  const blobDir = deps.blobs instanceof DiskBlobStore ? deps.blobs.dir : null; // the worker opens a disk store itself
  const mode = opts.syncfs ?? "blobs";
  const barrier = !blobDir || mode === "off" ? null : opts.fileSystemSync ? new SyncBarrier(opts.fileSystemSync) : syncfsBarrier(blobDir);
  const dbFile = deps.sqlite.filename;
  const walBarrier = barrier && mode === "blobs+wal" && dbFile && dbFile !== ":memory:" && sameFileSystem(blobDir!, dirname(dbFile)) ? barrier : null;
  // A WAL flush given by the caller (a test watching it) is used as given.
  const committer = new GroupCommitter(deps.db, deps.sqlite, { ...opts.groupCommit, walBarrier: opts.groupCommit?.syncWal ? null : walBarrier });
  const resolver = opts.noDnsCache ? opts.resolver : cachingResolver(opts.resolver);
  const reader = opts.inProcessReading || !blobDir ? null : new InboundReader(blobDir, resolver, !opts.noDnsCache);
  const filing = { resolver, tempDir, committer, reader, barrier };
  // Says which durability path this platform got (the fallback is silent otherwise).
  deps.log.info("inbound mail durability", { blobs: barrier ? "syncfs" : "fsync", wal: walBarrier && !opts.groupCommit?.syncWal ? "syncfs" : "fsync" });
  return {
    acceptRecipient(address) {
      const r = lookupRecipient(deps, address);
      return r.ok ? { ok: true, key: r.bucketId } : r;
    },
    deliver: (envelope, rawPath, session) => fileMessage(deps, envelope, rawPath, session, filing),
    deliverBytes: (envelope, raw, session) => fileMessage(deps, envelope, raw, session, filing),
    committer,
    barrier,
    close() {
      committer.flush();
      reader?.close();
      // Batches still syncing get their 451 (the sender retries): nothing unflushed is acknowledged.
      barrier?.close();
    },
  };
}

/** Same device: a syncfs through one directory flushes the other's files too. */
function sameFileSystem(a: string, b: string): boolean {
  try {
    return statSync(a).dev === statSync(b).dev;
  } catch {
    return false;
  }
}

export async function fileMessage(
  deps: Deps,
  envelope: InboundEnvelope,
  /** The raw message: its temp file, or its bytes (small messages). */
  raw: string | Uint8Array,
  session: SmtpSessionInfo,
  opts: { resolver?: DNSResolver; tempDir: string; committer?: GroupCommitter; reader?: InboundReader | null; barrier?: SyncBarrier | null },
): Promise<void> {
  const readOpts: ReadOptions = {
    tempDir: opts.tempDir,
    mta: deps.urls.mailDomain,
    resolver: opts.resolver,
    rejectDmarcFail: deps.config.smtpRejectDmarcFail,
  };
  const started = performance.now();
  // Only a message held in memory (up to 128 KB: most mail) waits for the shared syncfs. A
  // larger one sits in a temp file until its 250, which a syncfs would write to disk too, and
  // its flush is dominated by its bytes, which one sync for many files does not shrink
  // (measured: a 4 MB message took twice as long): its blobs are fsynced one by one. So are a
  // message's blobs while the barrier's syncs are slow (another writer's data, barrier.ts).
  const inMemory = typeof raw !== "string";
  const slow = inMemory && opts.barrier != null && !opts.barrier.worthWaiting();
  const barrier = inMemory && !slow ? (opts.barrier ?? null) : null;
  if (slow && opts.committer) opts.committer.stats.fsyncedWhileSlow++;
  const mark = barrier?.mark() ?? 0; // before any blob is written (see barrier.ts)
  const deferSync = barrier !== null;
  const { copies } = opts.reader
    ? await opts.reader.prepare(envelope, raw, session, readOpts, deferSync)
    : await prepareMessage(deps.blobs, envelope, raw, session, readOpts, { deferSync });
  const written = performance.now();
  if (barrier) {
    // The blobs are written and named but not flushed: nothing may refer to them before this.
    await barrier.flush(mark);
    if (opts.committer) opts.committer.stats.blobSyncMs += performance.now() - written;
  }

  const now = deps.clock.now().toISOString();
  const st = filingStatements(deps.sqlite);
  const write = (tx: Tx) => {
    for (const c of copies) {
      // Re-checked here: the address may have been switched off, or its account made read-only,
      // since RCPT TO (archiving and deletion are commitChanges' own checks).
      const row = st.address.get(c.bucketId);
      if (!row?.enabled || row.disabledByAdminAt || accountReadOnly(row.accountId, deps.db))
        throw new Error(`address of bucket ${c.bucketId} no longer accepts mail`);
      commitChanges(deps, INBOUND_WRITER, c.bucketId, c.changes, { kind: "write", comment: `inbound email ${envelope.id}` }, tx);
      st.countReceived.run(row.localPart, c.folder, c.receivedAt, now);
      st.insertMessage.run(c.bucketId, c.folder, c.messageId, c.receivedAt, c.from, c.subject, c.size, c.attachmentCount);
    }
  };
  if (opts.committer) {
    const prepared = performance.now();
    await opts.committer.commit(write);
    opts.committer.stats.prepareMs += written - started;
    opts.committer.stats.commitWaitMs += performance.now() - prepared;
  } else {
    transaction(deps.db, write);
  }
}
