// How long an SMTP client may hold a connection (D277). smtp-server's only timeout is idle time
// per read, which every byte resets, so a client trickling a byte a minute held its slot (and
// in DATA a temp file) for ever. A connection now gets a budget of time outside DATA, and each
// DATA must keep up an average rate after a grace period (Postfix's smtpd_min_data_rate model:
// a slow but steady sender is never cut, whatever the size; a trickle is cut at once).
// The receiver answers 421 and closes when either runs out. Tests shorten them.

export interface TimeLimits {
  /** Time a connection may spend outside DATA transfers, over its whole life. */
  commandPhaseMs: number;
  /** A DATA transfer may take this long, plus the time its bytes need at dataMinBytesPerSecond. */
  dataGraceMs: number;
  dataMinBytesPerSecond: number;
}

export const DEFAULT_TIME_LIMITS: TimeLimits = {
  // RFC 5321 §4.5.3.2 gives each command 5 minutes; a whole session of commands gets 10.
  commandPhaseMs: 10 * 60_000,
  dataGraceMs: 60_000,
  // 32 kbit/s: a 30 MiB message may take 2 h 8 min, a trickle gets the grace period only.
  dataMinBytesPerSecond: 4096,
};

export type Overrun = "session" | "data";

/** One connection's clocks; `onOverrun` is called at most once, when the client ran out of time. */
export class SessionClock {
  private left: number;
  private since = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private data: { start: number; bytes: number } | null = null;
  private done = false;

  constructor(
    private readonly limits: TimeLimits,
    /** Bytes past the message size limit are drained, not counted: they buy no more time. */
    private readonly maxDataBytes: number,
    private readonly onOverrun: (why: Overrun) => void,
  ) {
    this.left = limits.commandPhaseMs;
    this.runCommands();
  }

  /** DATA began: the command budget stops, the transfer's deadline starts. */
  dataStarted(): void {
    if (this.done) return;
    this.clear();
    this.left -= performance.now() - this.since;
    this.data = { start: performance.now(), bytes: 0 };
    this.arm(this.limits.dataGraceMs, () => this.checkData());
  }

  dataBytes(n: number): void {
    if (this.data) this.data.bytes = Math.min(this.maxDataBytes, this.data.bytes + n);
  }

  /** All of DATA's bytes are in: filing may take what it takes (the client waits for us). */
  dataReceived(): void {
    if (!this.data) return;
    this.data = null;
    this.clear();
  }

  /** DATA was answered: back to the command budget. */
  dataAnswered(): void {
    if (this.done) return;
    this.dataReceived();
    this.runCommands();
  }

  stop(): void {
    this.done = true;
    this.clear();
  }

  private runCommands(): void {
    this.since = performance.now();
    this.arm(Math.max(0, this.left), () => this.overrun("session"));
  }

  private checkData(): void {
    if (!this.data) return;
    const deadline = this.data.start + this.limits.dataGraceMs + (this.data.bytes * 1000) / this.limits.dataMinBytesPerSecond;
    const wait = deadline - performance.now();
    if (wait <= 0) this.overrun("data");
    else this.arm(wait, () => this.checkData());
  }

  private overrun(why: Overrun): void {
    if (this.done) return;
    this.stop();
    this.onOverrun(why);
  }

  private arm(ms: number, fn: () => void): void {
    this.clear();
    this.timer = setTimeout(fn, ms);
    this.timer.unref?.();
  }

  private clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
