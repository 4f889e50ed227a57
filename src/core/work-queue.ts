// A bounded queue for work that holds a thread of Bun's work pool, such as an argon2id check
// (Bun.password). That pool also reads files for Bun.file(): ten password checks at once held
// a site file's read ~2.7 s on a two-core machine, forty ~11 s, for every site of the process.
// Running them `running` at a time leaves the pool's other threads to file reads; the queue is
// short, so a flood of checks is told to come back (null) instead of waiting for minutes.

export class WorkQueue {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly running: number,
    private readonly maxWaiting: number,
  ) {}

  /** `work()` once a slot is free, or null at once when `maxWaiting` calls already wait. */
  async run<T>(work: () => Promise<T>): Promise<T | null> {
    if (this.active < this.running) this.active++;
    else if (this.waiting.length >= this.maxWaiting) return null;
    else await new Promise<void>((resolve) => this.waiting.push(resolve)); // the slot is handed over
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
