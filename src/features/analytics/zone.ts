// Calendar days in an account's time zone (IANA names, from the runtime's own time-zone data).
// Analytics keys daily rows by the local date of each hit and answers day windows in local dates;
// hours stay UTC hours. Every offset in use since the 1970s is a multiple of 15 minutes, and time
// zones change their offsets at local times on a quarter-hour too, so a local date never changes
// inside a UTC quarter-hour: ZoneDays asks Intl once per quarter-hour, not once per hit.

export const UTC = "UTC";
const QUARTER_MS = 900_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterOf(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The wall-clock fields of an instant in `zone`, as if they were a UTC time (ms). */
function wallClock(zone: string, ms: number): number {
  const p: Record<string, number> = {};
  for (const part of formatterOf(zone).formatToParts(ms)) if (part.type !== "literal") p[part.type] = Number(part.value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour! % 24, p.minute!, p.second!);
}

/** The UTC date ("YYYY-MM-DD") of an instant. */
export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The local date ("YYYY-MM-DD") of an instant in `zone`. */
export function localDay(zone: string, ms: number): string {
  return zone === UTC ? utcDay(ms) : utcDay(wallClock(zone, ms));
}

/** The UTC offset of `zone` at an instant, in ms (east positive). */
function offsetAt(zone: string, ms: number): number {
  if (zone === UTC) return 0;
  const whole = Math.floor(ms / 1000) * 1000;
  return wallClock(zone, whole) - whole;
}

/** The day after a "YYYY-MM-DD" date (calendar arithmetic, the same in every zone). */
export const nextDate = (day: string) => utcDay(Date.parse(`${day}T00:00:00Z`) + DAY_MS);

/**
 * The first instant of a local date in `zone` (epoch ms): local midnight, or the end of a DST gap
 * when a zone springs forward at midnight. Local days last 23, 24 or 25 hours.
 */
export function dayStart(zone: string, day: string): number {
  const midnight = Date.parse(`${day}T00:00:00Z`);
  if (zone === UTC) return midnight;
  const key = `${zone} ${day}`;
  const known = dayStarts.get(key);
  if (known !== undefined) return known;
  if (dayStarts.size >= DAY_STARTS_MAX) dayStarts.clear();
  const at = findDayStart(zone, day, midnight);
  dayStarts.set(key, at);
  return at;
}

/** Answers of dayStart (a query asks a few; they never change), bounded. */
const dayStarts = new Map<string, number>();
const DAY_STARTS_MAX = 4096;

function findDayStart(zone: string, day: string, midnight: number): number {
  let at = midnight - offsetAt(zone, midnight);
  at = midnight - offsetAt(zone, at);
  // Midnight skipped by a DST change (a zone springing forward at 00:00): the day starts later.
  for (let i = 0; i < 16 && localDay(zone, at) < day; i++) at += QUARTER_MS;
  for (let i = 0; i < 16 && localDay(zone, at - QUARTER_MS) === day; i++) at -= QUARTER_MS;
  return at;
}

/**
 * Local dates of instants in one zone, remembered per quarter-hour: the recorder asks it for
 * every hour it counts (and every quarter of an hour that holds a local midnight).
 */
export class ZoneDays {
  private quarter = -1;
  private day = "";
  private hour = -1;
  private wholeHour = true;

  constructor(readonly zone: string) {}

  of(ms: number): string {
    const q = Math.floor(ms / QUARTER_MS);
    if (q !== this.quarter) {
      this.quarter = q;
      this.day = localDay(this.zone, q * QUARTER_MS);
    }
    return this.day;
  }

  /**
   * The local date of `ms` and the instants [from, until) around it that share that date and
   * its UTC hour: the whole hour, or the quarter-hour when a local date begins inside the hour
   * (zones at :30 and :45 offsets, some DST changes).
   */
  segment(ms: number): { day: string; fromMs: number; untilMs: number } {
    const hour = Math.floor(ms / HOUR_MS) * HOUR_MS;
    const day = this.of(ms);
    if (hour !== this.hour) {
      this.hour = hour;
      this.wholeHour = this.zone === UTC || localDay(this.zone, hour) === localDay(this.zone, hour + HOUR_MS - 1);
    }
    if (this.wholeHour) return { day, fromMs: hour, untilMs: hour + HOUR_MS };
    const q = Math.floor(ms / QUARTER_MS) * QUARTER_MS;
    return { day, fromMs: q, untilMs: q + QUARTER_MS };
  }
}
