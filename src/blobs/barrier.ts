// One flush for many writes: a coalescing durability barrier over a sync of a whole file system
// (Linux syncfs(2), see syncfs.ts). Callers write their files without fsync, then await
// flush(); one sync in flight covers every write that completed before it started, and callers
// arriving while it runs share the next one (the group-flush pattern of wal-sync.ts). An fsync
// costs a journal commit and a device cache flush per file; a sync of the file system costs one
// for all the files written meanwhile (measured: 10 KB write + fsync ~0.3 ms each; one syncfs
// after 20 such writes ~1.4 ms in all).
//
// Errors: since Linux 5.8 syncfs reports a writeback error that happened on the file system
// since the descriptor last looked, once. A sync that fails may therefore be reporting the
// loss of a write whose caller waits for a later sync (it wrote while the failing one ran, or
// just before it), and that later sync would succeed. So a caller takes a mark() before its
// writes, and its flush fails if ANY sync finished with an error after that mark: a message
// is refused (451, the sender retries) rather than acknowledged on a lost write.
//
// A sync of the whole file system also writes every other program's unwritten data: while
// another writer streams gigabytes (a large upload), each sync takes that long (measured: a
// message's wait grew from ~2 ms to 120-140 ms, half the msg/s of an fsync per file). So a sync
// that runs longer than `slowMs` makes worthWaiting() false until `backoffMs` after it: callers
// then fsync their own files, and the next caller after that tries the barrier again.

/** The sync of the whole file system: resolves when done, rejects (with an errno code) when it failed. */
export type FileSystemSync = () => Promise<void>;

export interface SyncBarrierOptions {
  /** A sync longer than this is flushing other writers' data too (quiet syncs here: 1-3 ms). */
  slowMs?: number;
  /** How long after a slow sync callers keep to their own fsyncs. */
  backoffMs?: number;
  /** Milliseconds, monotonic (tests pass their own). */
  now?: () => number;
}

export class SyncBarrier {
  private running: Promise<void> | null = null;
  private runningSince = 0;
  private next: Promise<void> | null = null;
  private failures = 0;
  private lastError: unknown = null;
  private slowUntil = Number.NEGATIVE_INFINITY;
  private readonly slowMs: number;
  private readonly backoffMs: number;
  private readonly now: () => number;
  /** Syncs run, flushes asked for, syncs that failed, slow syncs, milliseconds spent syncing (tests, benchmark). */
  readonly stats = { syncs: 0, flushes: 0, failures: 0, slow: 0, syncMs: 0 };

  constructor(
    private readonly sync: FileSystemSync,
    private readonly onClose: () => void = () => {},
    opts: SyncBarrierOptions = {},
  ) {
    this.slowMs = opts.slowMs ?? 20;
    this.backoffMs = opts.backoffMs ?? 1_000;
    this.now = opts.now ?? (() => performance.now());
  }

  /** False while a sync is slow (other writers' data) and for backoffMs after: fsync your own files. */
  worthWaiting(): boolean {
    const t = this.now();
    if (this.running && t - this.runningSince > this.slowMs) this.slowUntil = Math.max(this.slowUntil, t + this.backoffMs);
    return t >= this.slowUntil;
  }

  /** Take this before the writes a later flush(mark) must cover. */
  mark(): number {
    return this.failures;
  }

  /**
   * Resolves once every write completed before this call is durable; rejects if the sync that
   * covers it failed, or if any sync failed after `mark` (see the top of this file).
   */
  async flush(mark: number): Promise<void> {
    this.stats.flushes++;
    await this.coalesced();
    if (this.failures !== mark) throw this.lastError;
  }

  close(): void {
    this.onClose();
  }

  /**
   * The sync running now covers only writes before it started: a newcomer waits for the next
   * one. If the running one fails, the newcomers fail with it at once: they asked while it ran,
   * so its error may be about their writes (they would fail their mark check anyway).
   */
  private coalesced(): Promise<void> {
    if (!this.running) return this.start();
    this.next ??= this.running.then(
      () => {
        this.next = null;
        return this.start();
      },
      (e: unknown) => {
        this.next = null;
        throw e;
      },
    );
    return this.next;
  }

  private start(): Promise<void> {
    const started = this.now();
    this.runningSince = started;
    this.stats.syncs++;
    const ended = () => {
      const t = this.now();
      this.stats.syncMs += t - started;
      if (t - started > this.slowMs) {
        this.stats.slow++;
        this.slowUntil = Math.max(this.slowUntil, t + this.backoffMs);
      }
    };
    const p = this.sync().then(
      () => {
        ended();
      },
      (e: unknown) => {
        ended();
        this.stats.failures++;
        this.failures++;
        this.lastError = e;
        throw e;
      },
    );
    const settled = p.finally(() => {
      if (this.running === settled) this.running = null;
    });
    this.running = settled;
    return settled;
  }
}
