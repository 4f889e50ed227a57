// Group commit for inbound mail: messages whose blobs are stored wait a few milliseconds for
// company, then ONE write transaction files them all (one BEGIN/COMMIT and one WAL write instead
// of one per message). Each message runs inside its own savepoint, so a message refused inside
// the batch (its address switched off meanwhile, a locked path) is rolled back alone and only it
// fails; the others still commit. Every caller's promise settles only after the COMMIT returned:
// the SMTP 250 still means "committed", exactly as with one transaction per message. And
// committed means durable: the WAL is fsynced after the COMMIT (wal-sync.ts) before any of the
// batch's promises resolve, so a power cut after a 250 loses nothing. Optionally (a benchmark
// comparison, D225) the mail filer's syncfs barrier is the WAL's flush instead: one syncfs then
// covers this batch's COMMIT and the blobs of the messages that arrived meanwhile.
import type { Database } from "bun:sqlite";
import type { Db } from "../../db/client";
import { transaction, type Tx } from "../../db/tx";
import type { SyncBarrier } from "../../blobs/barrier";
import { filingStatements } from "./filing-statements";
import { walSyncer, type DurableSync } from "./wal-sync";

export interface GroupCommitOptions {
  /** Longest a message waits for others before its batch is committed. */
  maxWaitMs?: number;
  /** A batch this large is committed at once, without waiting. */
  maxBatch?: number;
  /**
   * How a batch's COMMIT is made durable before its messages are acknowledged: `fsync-wal` (the
   * default: an fsync of the WAL file on the thread pool, merged across batches),
   * `synchronous-full` (SQLite's own fsync inside COMMIT, on the event loop), or `none` (only
   * for the benchmark's comparison: survives a process crash, not a power cut).
   */
  durability?: "fsync-wal" | "synchronous-full" | "none";
  /** The `fsync-wal` flush; walSyncer(the database file) unless given (tests watch it). */
  syncWal?: DurableSync;
  /**
   * With `fsync-wal`: flush the WAL with this barrier (a syncfs of the file system holding the
   * database) instead of syncWal. Only for a barrier over the database's own file system.
   */
  walBarrier?: SyncBarrier | null;
}

export const DEFAULT_MAX_WAIT_MS = 2;
export const DEFAULT_MAX_BATCH = 64;

interface Pending {
  write: (tx: Tx) => void;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class GroupCommitter {
  private queue: Pending[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly maxWaitMs: number;
  private readonly maxBatch: number;
  private readonly durability: NonNullable<GroupCommitOptions["durability"]>;
  private readonly syncWal: DurableSync;
  private readonly walBarrier: SyncBarrier | null;
  /**
   * Batch sizes committed so far, and where a message's wait for its 250 goes (for the
   * benchmark and tests), in milliseconds: per batch the transaction and the WAL fsync; per
   * message, summed by the filer, its wait for the reading worker, for its blobs' syncfs
   * barrier (D225) and for this committer; `fsyncedWhileSlow`: messages that fsynced their
   * own blobs because the syncs were slow (the barrier counts its own syncs).
   */
  readonly stats = {
    batches: 0,
    messages: 0,
    largest: 0,
    transactionMs: 0,
    walSyncMs: 0,
    prepareMs: 0,
    blobSyncMs: 0,
    commitWaitMs: 0,
    fsyncedWhileSlow: 0,
  };

  constructor(
    private readonly db: Db,
    private readonly sqlite: Database,
    opts: GroupCommitOptions = {},
  ) {
    this.maxWaitMs = opts.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    this.maxBatch = Math.max(1, opts.maxBatch ?? DEFAULT_MAX_BATCH);
    this.durability = opts.durability ?? "fsync-wal";
    this.walBarrier = this.durability === "fsync-wal" ? (opts.walBarrier ?? null) : null;
    this.syncWal = this.durability === "fsync-wal" && !this.walBarrier ? (opts.syncWal ?? walSyncer(sqlite.filename)) : async () => {};
  }

  /**
   * Run `write` (synchronous, in the shared transaction) and resolve once it is committed and
   * durable. Whatever `write` refers to (the message's blobs) must be durable already.
   */
  commit(write: (tx: Tx) => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      if (this.queue.length >= this.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.maxWaitMs);
    });
  }

  /** Commit everything queued now (also called on shutdown). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.queue.length > 0) void this.commitThenSync(this.queue.splice(0, this.maxBatch));
  }

  private async commitThenSync(batch: Pending[]): Promise<void> {
    // Taken before the transaction writes: a sync failing after this may report its pages.
    const mark = this.walBarrier?.mark() ?? 0;
    const started = performance.now();
    const failed = this.commitBatch(batch);
    const t = performance.now();
    this.stats.transactionMs += t - started;
    if (!failed) return;
    try {
      if (this.walBarrier) await this.walBarrier.flush(mark);
      else await this.syncWal();
      this.stats.walSyncMs += performance.now() - t;
    } catch (e) {
      // Committed, but whether it would survive a power cut is unknown: no 250. The sender
      // retries, and a duplicate copy is better than a lost message.
      for (const p of batch) p.reject(e);
      return;
    }
    for (const p of batch) {
      const e = failed.get(p);
      if (failed.has(p)) p.reject(e);
      else p.resolve();
    }
  }

  /** Null when nothing was committed (every message rejected); else the messages refused inside. */
  private commitBatch(batch: Pending[]): Map<Pending, unknown> | null {
    const failed = new Map<Pending, unknown>();
    const st = filingStatements(this.sqlite);
    const full = this.durability === "synchronous-full";
    if (full) st.synchronousFull.run();
    try {
      transaction(this.db, (tx) => {
        for (const p of batch) {
          st.savepoint.run();
          try {
            p.write(tx);
            st.release.run();
          } catch (e) {
            // Undo this message's writes only; the savepoint must still be released.
            st.rollbackTo.run();
            st.release.run();
            failed.set(p, e);
          }
        }
      });
    } catch (e) {
      // BEGIN or COMMIT failed (e.g. the database is busy): nothing of the batch is filed.
      for (const p of batch) p.reject(e);
      return null;
    } finally {
      if (full) st.synchronousNormal.run();
    }
    this.stats.batches++;
    this.stats.messages += batch.length - failed.size;
    this.stats.largest = Math.max(this.stats.largest, batch.length);
    return failed;
  }
}
