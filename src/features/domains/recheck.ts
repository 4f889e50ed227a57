// The re-check job: every minute, the pending domains whose next check is due are looked at
// (DNS for unverified ones, the certificate state for verified ones) on the schedule.ts backoff.
import { and, asc, eq, isNotNull, lte } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { customDomains } from "../../db/schema";
import { checkDomain } from "./service";

/** At most this many per run, so one run stays short; the rest are due in the next. */
const BATCH = 50;

export async function recheckDueDomains(deps: Deps): Promise<{ checked: number; activated: number; failed: number }> {
  const now = deps.clock.now().toISOString();
  const due = deps.db
    .select({ id: customDomains.id })
    .from(customDomains)
    .where(and(eq(customDomains.status, "pending_validation"), isNotNull(customDomains.nextCheckAt), lte(customDomains.nextCheckAt, now)))
    .orderBy(asc(customDomains.nextCheckAt))
    .limit(BATCH)
    .all();
  let activated = 0;
  let failed = 0;
  for (const { id } of due) {
    const row = await checkDomain(deps, id, "scheduled");
    if (row?.status === "active") activated++;
    if (row?.status === "failed") failed++;
  }
  return { checked: due.length, activated, failed };
}
