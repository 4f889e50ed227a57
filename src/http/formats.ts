// JSON Schema formats, tightened where Elysia's are loose. Its date-time accepts whatever
// `new Date` can read, and Date rolls a day past the month's end over: "2099-02-30T00:00:00Z"
// was taken as 2 March, silently. A date-time whose calendar date does not exist is refused.
import { FormatRegistry } from "@sinclair/typebox";
import "elysia"; // registers its formats at load; the one below wraps its date-time

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeapYear = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);

/** The leading YYYY-MM-DD, when there is one, names a day that exists. */
export function realCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  if (!m) return true;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= (month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!);
}

const elysiaDateTime = FormatRegistry.Get("date-time");
FormatRegistry.Set("date-time", (value) => realCalendarDate(value) && (elysiaDateTime ? elysiaDateTime(value) : true));
