// Attempt limits for site gates, per site and client address, plus a site-wide cap against
// brute force spread over many addresses. Stored in SQLite so a restart does not reset them.
import { and, eq, sql } from "drizzle-orm";
import type { Deps } from "../core/context";
import { siteGateAttempts } from "../db/schema";
import { transaction } from "../db/tx";
import { isoBefore } from "../core/clock";

export type GateKind = "password" | "email_send" | "code";

export const GATE_LIMITS: Record<GateKind, { perClient: number; perSite: number; windowMs: number }> = {
  password: { perClient: 10, perSite: 200, windowMs: 15 * 60_000 },
  email_send: { perClient: 5, perSite: 200, windowMs: 15 * 60_000 },
  code: { perClient: 10, perSite: 200, windowMs: 15 * 60_000 },
};
const SITE_WIDE = "*";

/** Seconds until another attempt is allowed, or 0 when allowed now. */
export function gateRetryAfter(deps: Deps, publicationId: string, kind: GateKind, client: string): number {
  const limit = GATE_LIMITS[kind];
  const now = deps.clock.now().getTime();
  let wait = 0;
  for (const [key, max] of [[client, limit.perClient], [SITE_WIDE, limit.perSite]] as const) {
    const row = deps.db.select().from(siteGateAttempts)
      .where(and(eq(siteGateAttempts.publicationId, publicationId), eq(siteGateAttempts.kind, kind), eq(siteGateAttempts.clientKey, key))).get();
    if (!row) continue;
    const ends = Date.parse(row.windowStartedAt) + limit.windowMs;
    if (ends > now && row.failures >= max) wait = Math.max(wait, Math.ceil((ends - now) / 1000));
  }
  return wait;
}

/** Count one failed (or, for email sends, one spent) attempt for the client and the site. */
export function recordGateAttempt(deps: Deps, publicationId: string, kind: GateKind, client: string): void {
  const limit = GATE_LIMITS[kind];
  const now = deps.clock.now();
  const windowStart = isoBefore(now, limit.windowMs);
  transaction(deps.db, (tx) => {
    for (const key of [client, SITE_WIDE]) {
      tx.insert(siteGateAttempts).values({ publicationId, kind, clientKey: key, failures: 1, windowStartedAt: now.toISOString() })
        .onConflictDoUpdate({
          target: [siteGateAttempts.publicationId, siteGateAttempts.kind, siteGateAttempts.clientKey],
          // An expired window starts over at 1.
          set: {
            failures: sql`CASE WHEN ${siteGateAttempts.windowStartedAt} <= ${windowStart} THEN 1 ELSE ${siteGateAttempts.failures} + 1 END`,
            windowStartedAt: sql`CASE WHEN ${siteGateAttempts.windowStartedAt} <= ${windowStart} THEN ${now.toISOString()} ELSE ${siteGateAttempts.windowStartedAt} END`,
          },
        }).run();
    }
  });
}

/** A success clears the client's own failures (not the site-wide count). */
export function clearGateAttempts(deps: Deps, publicationId: string, kind: GateKind, client: string): void {
  transaction(deps.db, (tx) => {
    tx.delete(siteGateAttempts).where(and(eq(siteGateAttempts.publicationId, publicationId), eq(siteGateAttempts.kind, kind), eq(siteGateAttempts.clientKey, client))).run();
  });
}
