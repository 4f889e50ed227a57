// When the re-check job looks at a pending domain again: fast at first (records are usually
// created minutes after the domain), then hourly, and it gives up after seven days of checks
// (status failed; refresh starts a new seven days). docs/custom-domains.md has the table.
const MINUTE = 60_000;
export const RECHECK_DELAYS_MS = [1, 2, 5, 10, 30].map((m) => m * MINUTE);
export const RECHECK_LATER_MS = 60 * MINUTE;
export const GIVE_UP_AFTER_MS = 7 * 24 * 60 * MINUTE;

/** Delay before the check that follows `attempts` scheduled checks. */
export const recheckDelay = (attempts: number): number => RECHECK_DELAYS_MS[attempts] ?? RECHECK_LATER_MS;

/** Time the schedule has spent once `attempts` scheduled checks are done. */
export function scheduledElapsed(attempts: number): number {
  let total = 0;
  for (let i = 0; i < attempts; i++) total += recheckDelay(i);
  return total;
}

/** Whether, after `attempts` scheduled checks without success, the job stops. */
export const givesUp = (attempts: number): boolean => scheduledElapsed(attempts) >= GIVE_UP_AFTER_MS;
