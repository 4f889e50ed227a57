/** Time source, injectable so tests can move time (preview expiry, lock expiry, renewal). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** The ISO 8601 UTC time `ms` after `from`: how Pier stores expiries and leases. */
export const isoAfter = (from: Date, ms: number): string => new Date(from.getTime() + ms).toISOString();

/** The ISO 8601 UTC time `ms` before `from`: cutoffs for windows and retention. */
export const isoBefore = (from: Date, ms: number): string => new Date(from.getTime() - ms).toISOString();

/** A clock tests can advance. */
export class ManualClock implements Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}
