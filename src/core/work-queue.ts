// A bounded queue for work that holds a thread of Bun's work pool, such as an argon2id check
// (Bun.password). That pool also reads files for Bun.file(): ten password checks at once held
// a site file's read ~2.7 s on a two-core machine, forty ~11 s, for every site of the process.
// Running them `running` at a time leaves the pool's other threads to file reads; the queue is
// short, so a flood of checks is told to come back (null) instead of waiting for minutes.
// Callers of different kinds wait in lanes of their own, each `maxWaiting` long, and a freed slot
// goes to the lanes in turn: a flood of one kind (a site's gate) fills its own lane, not another's
// (the owner signing in to the dashboard).

export class WorkQueue<Lane extends string = string> {
  private active = 0;
  private readonly waiting = new Map<Lane, Array<() => void>>();
  /** The lane the last freed slot went to; the next one goes to the lane after it. */
  private lastLane: Lane | null = null;

  constructor(
    private readonly running: number,
    private readonly maxWaiting: number,
  ) {}

  /** `work()` once a slot is free, or null at once when `maxWaiting` calls already wait in `lane`. */
  async run<T>(work: () => Promise<T>, lane = "default" as Lane): Promise<T | null> {
    if (this.active < this.running) this.active++;
    else {
      let line = this.waiting.get(lane);
      if (line === undefined) this.waiting.set(lane, (line = []));
      if (line.length >= this.maxWaiting) return null;
      await new Promise<void>((resolve) => line.push(resolve)); // the slot is handed over
    }
    try {
      return await work();
    } finally {
      const next = this.nextWaiting();
      if (next) next();
      else this.active--;
    }
  }

  private nextWaiting(): (() => void) | undefined {
    const lanes = [...this.waiting.keys()];
    const start = this.lastLane === null ? 0 : lanes.indexOf(this.lastLane) + 1;
    for (let i = 0; i < lanes.length; i++) {
      const lane = lanes[(start + i) % lanes.length]!;
      const next = this.waiting.get(lane)!.shift();
      if (next) {
        this.lastLane = lane;
        return next;
      }
    }
    return undefined;
  }
}
