// One publication's counts for one UTC hour, as the fold builds them between flushes: totals,
// capped top lists (the rest of the hour is "(other)") and the visitors seen, with the bounds that
// keep memory and stored rows flat under any traffic.
import type { DimensionKind } from "../../db/schema";

/** Distinct values kept per publication, hour and list; further values count as OTHER. */
export const CAPS: Record<DimensionKind, number> = { path: 500, referrer: 200, not_found: 200, country: 300, bot: 100 };
export const OTHER = "(other)";

/** Distinct visitors held per publication-hour between flushes (beyond: uncounted, never unbounded). */
const VISITORS_MAX = 100_000;
/**
 * Visitor hashes stored per publication and hour (the day's "seen" set that makes a returning
 * reader not count twice). Beyond it the hour's further visitors are still counted, distinct
 * within a flush interval, but not remembered: a flood of random clients costs at most this many
 * rows an hour, and a reader returning later that day after the cap counts again.
 */
export const VISITOR_HASHES_PER_HOUR = 10_000;

const HOUR_MS = 3_600_000;
// Hits arrive in time order: the last hour's key is almost always the answer (no Date per hit).
let lastHour = -1;
let lastHourKey = "";
let lastDayKey = "";
export const hourKey = (ms: number) => {
  const h = Math.floor(ms / HOUR_MS);
  if (h !== lastHour) {
    lastHourKey = new Date(h * HOUR_MS).toISOString().slice(0, 13);
    lastDayKey = lastHourKey.slice(0, 10);
    lastHour = h;
  }
  return lastHourKey;
};
export const dayKey = (ms: number) => {
  hourKey(ms);
  return lastDayKey;
};

const KINDS: DimensionKind[] = ["path", "referrer", "country", "bot", "not_found"];
const newDims = <V>(make: () => V) => Object.fromEntries(KINDS.map((k) => [k, make()])) as Record<DimensionKind, V>;

/** One publication's counts for one UTC hour (and one local date: an hour can hold a local midnight) since the last flush. */
export class HourCounts {
  hits = 0;
  hitsBots = 0;
  hitsAssets = 0;
  hitsNotFound = 0;
  clicks = 0;
  downloads = 0;
  firstAt = Number.POSITIVE_INFINITY;
  lastAt = 0;
  /** Hashes to store (and count when new for the day). */
  visitors = new Set<string>();
  /** Visitors beyond the hour's stored-hash cap: counted, not stored. */
  overflowVisitors = new Set<string>();
  /** New visitors of hashes already written by an earlier step of this flush. */
  visitorsWritten = 0;
  /**
   * Hashes admitted for storage this hour, kept across flushes: the cap holds for the hour, and a
   * reader seen again in a later flush is neither admitted again nor counted over the cap (it is
   * stored for the day already).
   */
  private admittedHashes = new Set<string>();
  dims = newDims(() => new Map<string, number>());
  /** Values that got their own row this hour; kept across flushes so the cap holds for the hour. */
  private admitted = newDims(() => new Set<string>());

  /**
   * The instants [fromMs, untilMs) of the hour that share `day` as last looked up: the fold
   * reuses these counts without asking again while hits stay inside.
   */
  fromMs = 0;
  untilMs = 0;

  constructor(
    readonly publicationId: string,
    readonly hour: string,
    /** The local date of the account's time zone the counts belong to (daily rows are keyed by it). */
    readonly day: string = hour.slice(0, 10),
  ) {}

  count(kind: DimensionKind, value: string, n = 1): void {
    const m = this.dims[kind];
    const counted = m.get(value);
    // Already counted since the last flush: admitted (or it is OTHER), one lookup instead of three.
    if (counted !== undefined) {
      m.set(value, counted + n);
      return;
    }
    const seen = this.admitted[kind];
    if (!seen.has(value)) {
      if (seen.size >= CAPS[kind]) value = OTHER;
      else seen.add(value);
    }
    m.set(value, (m.get(value) ?? 0) + n);
  }

  addVisitor(hash: string): void {
    const admitted = this.admittedHashes;
    if (admitted.has(hash)) return;
    if (admitted.size < VISITOR_HASHES_PER_HOUR) {
      admitted.add(hash);
      this.visitors.add(hash);
    } else if (this.overflowVisitors.size < VISITORS_MAX) this.overflowVisitors.add(hash);
  }

  touch(at: number): void {
    if (at < this.firstAt) this.firstAt = at;
    if (at > this.lastAt) this.lastAt = at;
  }

  get empty(): boolean {
    return this.lastAt === 0;
  }

  /**
   * After a failed flush: the batch goes, except the visitors whose hashes the flush's first steps
   * already stored for the day. Only a later flush can still count them (a number and the time
   * range they were seen in, kept).
   */
  dropBatch(): void {
    const { visitorsWritten, firstAt, lastAt } = this;
    this.reset();
    if (visitorsWritten === 0) return;
    this.visitorsWritten = visitorsWritten;
    this.firstAt = firstAt;
    this.lastAt = lastAt;
  }

  /** After a flush: counts start again from zero, the hour's admitted values stay. */
  reset(): void {
    this.hits = this.hitsBots = this.hitsAssets = this.hitsNotFound = this.clicks = this.downloads = 0;
    this.firstAt = Number.POSITIVE_INFINITY;
    this.lastAt = 0;
    this.visitors = new Set();
    this.overflowVisitors = new Set();
    this.visitorsWritten = 0;
    for (const k of KINDS) this.dims[k].clear();
  }
}
