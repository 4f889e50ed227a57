// Background work of the accounts feature: expired sessions (normally removed when next seen,
// but abandoned browsers never come back) and long-expired unused invites are deleted.
import { and, isNull, lte } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { invites, sessions } from "../../db/schema";
import { isoBefore } from "../../core/clock";

export function purgeExpiredSessionsAndInvites(deps: Deps): { sessions: number; invites: number } {
  const now = deps.clock.now();
  const s = deps.db.delete(sessions).where(lte(sessions.expiresAt, now.toISOString())).returning({ id: sessions.id }).all().length;
  // Unused invites are kept 30 days past expiry so an operator can still see what happened.
  const cutoff = isoBefore(now, 30 * 86400_000);
  const i = deps.db
    .delete(invites)
    .where(and(isNull(invites.usedAt), lte(invites.expiresAt, cutoff)))
    .returning({ id: invites.id })
    .all().length;
  return { sessions: s, invites: i };
}
