// Attempt limits for site gates, kept in SQLite so a restart does not reset them. Guesses
// (passwords, codes) follow the shared guess policy (src/core/guess-limits.ts): each client
// address gets a few failures per site and window, then waits; while a site collects failures
// from many addresses each address gets fewer (down to a floor), but a fresh address always gets
// its tries, so the right password still works for the people it was given to. The site-wide
// row only measures the attack; it never locks the site. Code mail is also limited per site and
// per recipient (gateMailRetryAfter), so a gate cannot be used to mail strangers, and without
// locking anyone out: over the budget a code already mailed stays usable.
import { and, asc, eq, gt, lte, sql, type SQL } from "drizzle-orm";
import type { Deps } from "../core/context";
import { addressKey, pairAllowance, pendingWait, type GuessPolicy } from "../core/guess-limits";
import { siteEmailCodes, siteGateAttempts } from "../db/schema";
import { transaction } from "../db/tx";
import { isoBefore } from "../core/clock";

export type GateKind = "password" | "email_send" | "code";

export const GATE_LIMITS: Record<GateKind, { perClient: number; windowMs: number }> = {
  password: { perClient: 10, windowMs: 15 * 60_000 },
  email_send: { perClient: 5, windowMs: 15 * 60_000 },
  code: { perClient: 10, windowMs: 15 * 60_000 },
};
/** Every 50 failures on a site halve each address's allowance there, down to 3. */
const ATTACK_STEP = 50;
const FLOOR = 3;
const SITE_WIDE = "*";

const policyOf = (kind: GateKind): GuessPolicy => {
  const l = GATE_LIMITS[kind];
  return { perPair: l.perClient, perAddress: Number.MAX_SAFE_INTEGER, attackStep: ATTACK_STEP, floor: Math.min(FLOOR, l.perClient), windowMs: l.windowMs };
};

/**
 * Seconds until this client may try again on this site, or 0 when allowed now. `pending`: this
 * client's guesses still being verified, counted as failures.
 */
export function gateRetryAfter(deps: Deps, publicationId: string, kind: GateKind, client: string, pending = 0): number {
  const limit = GATE_LIMITS[kind];
  const now = deps.clock.now().getTime();
  const live = (key: string) => {
    const row = deps.db
      .select()
      .from(siteGateAttempts)
      .where(and(eq(siteGateAttempts.publicationId, publicationId), eq(siteGateAttempts.kind, kind), eq(siteGateAttempts.clientKey, key)))
      .get();
    const ends = row ? Date.parse(row.windowStartedAt) + limit.windowMs : 0;
    return row && ends > now ? { failures: row.failures, ends } : { failures: 0, ends: now };
  };
  // Sending a code is not a guess: its per-address count is a plain cap.
  const allowed = kind === "email_send" ? limit.perClient : pairAllowance(policyOf(kind), live(SITE_WIDE).failures);
  const mine = live(addressKey(client));
  if (mine.failures >= allowed) return Math.max(1, Math.ceil((mine.ends - now) / 1000));
  return pendingWait(mine.failures, pending, allowed);
}

/** Count one failed (or, for email sends, one spent) attempt for the client and the site. */
export function recordGateAttempt(deps: Deps, publicationId: string, kind: GateKind, client: string): void {
  const limit = GATE_LIMITS[kind];
  const now = deps.clock.now();
  const windowStart = isoBefore(now, limit.windowMs);
  transaction(deps.db, (tx) => {
    for (const key of [addressKey(client), SITE_WIDE]) {
      tx.insert(siteGateAttempts)
        .values({ publicationId, kind, clientKey: key, failures: 1, windowStartedAt: now.toISOString() })
        .onConflictDoUpdate({
          target: [siteGateAttempts.publicationId, siteGateAttempts.kind, siteGateAttempts.clientKey],
          // An expired window starts over at 1.
          set: {
            failures: sql`CASE WHEN ${siteGateAttempts.windowStartedAt} <= ${windowStart} THEN 1 ELSE ${siteGateAttempts.failures} + 1 END`,
            windowStartedAt: sql`CASE WHEN ${siteGateAttempts.windowStartedAt} <= ${windowStart} THEN ${now.toISOString()} ELSE ${siteGateAttempts.windowStartedAt} END`,
          },
        })
        .run();
    }
  });
}

/** A success clears the client's own failures (not the site-wide count). */
export function clearGateAttempts(deps: Deps, publicationId: string, kind: GateKind, client: string): void {
  transaction(deps.db, (tx) => {
    tx.delete(siteGateAttempts)
      .where(and(eq(siteGateAttempts.publicationId, publicationId), eq(siteGateAttempts.kind, kind), eq(siteGateAttempts.clientKey, addressKey(client))))
      .run();
  });
}

/** Providers that ignore dots in the local part (and their second domain name). */
const DOTLESS_DOMAINS = new Set(["gmail.com", "googlemail.com"]);

/**
 * The inbox an address reaches, as the site_email_codes `mailbox` column keeps it: the local part
 * without its `+tag` (most providers deliver `name+anything@domain` to `name@domain`), and for
 * Gmail without dots and with googlemail.com as gmail.com. Counted per spelling, each variant had
 * a mail budget of its own, and a gate could flood one inbox at will. `email` is lowercase.
 */
export function mailboxOf(email: string): string {
  const at = email.lastIndexOf("@");
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  const plus = local.indexOf("+");
  const name = plus === -1 ? local : local.slice(0, plus);
  return DOTLESS_DOMAINS.has(domain) ? `${name.replaceAll(".", "")}@gmail.com` : `${name}@${domain}`;
}

/** The codes mailed to `email`'s inbox, whichever spelling they were asked for. */
export function sameMailbox(email: string): SQL {
  return eq(siteEmailCodes.mailbox, mailboxOf(email));
}

/**
 * Code mail per hour: a site sends at most `perSite`; one recipient gets at most
 * `perSiteRecipient` from one site and `perRecipient` from all sites together (no gate becomes a
 * way to flood a stranger's inbox; a recipient is an inbox: see sameMailbox). Over a budget no mail goes out, but a code already mailed to
 * that recipient for that site stays usable (gates.ts answers "sent before"), so strangers who
 * use a recipient's budget up cannot lock the recipient out.
 */
export const GATE_MAIL_LIMITS = { perSite: 100, perSiteRecipient: 5, perRecipient: 20, windowMs: 3600_000 };

/**
 * Seconds until another access-code mail may go to `email` from this site, or 0. Counted from
 * the codes already issued (site_email_codes), so nothing more is stored.
 */
export function gateMailRetryAfter(deps: Deps, publicationId: string, email: string): number {
  const { perSite, perSiteRecipient, perRecipient, windowMs } = GATE_MAIL_LIMITS;
  const now = deps.clock.now().getTime();
  const since = isoBefore(deps.clock.now(), windowMs);
  const budgets = [
    [eq(siteEmailCodes.publicationId, publicationId), perSite],
    [and(eq(siteEmailCodes.publicationId, publicationId), sameMailbox(email)), perSiteRecipient],
    [sameMailbox(email), perRecipient],
  ] as const;
  let wait = 0;
  for (const [where, max] of budgets) {
    const times = deps.db
      .select({ at: siteEmailCodes.createdAt })
      .from(siteEmailCodes)
      .where(and(where, gt(siteEmailCodes.createdAt, since)))
      .orderBy(asc(siteEmailCodes.createdAt))
      .all();
    if (times.length >= max) wait = Math.max(wait, Math.ceil((Date.parse(times[times.length - max]!.at) + windowMs - now) / 1000));
  }
  return wait > 0 ? Math.max(1, wait) : 0;
}

/**
 * Periodic task: forget gate rows nothing reads any more, so the tables do not grow with every
 * visitor. Attempt rows are dead once their window ended; a code row once it has expired AND
 * left the mail-cap window (gateMailRetryAfter counts codes by their creation time).
 */
export function pruneGateRecords(deps: Deps): { attempts: number; codes: number } {
  const now = deps.clock.now();
  const longestWindow = Math.max(...Object.values(GATE_LIMITS).map((l) => l.windowMs));
  const attemptsBefore = isoBefore(now, longestWindow);
  const codesBefore = isoBefore(now, GATE_MAIL_LIMITS.windowMs);
  return transaction(deps.db, (tx) => ({
    attempts: tx.delete(siteGateAttempts).where(lte(siteGateAttempts.windowStartedAt, attemptsBefore)).returning({ k: siteGateAttempts.clientKey }).all()
      .length,
    codes: tx
      .delete(siteEmailCodes)
      .where(and(lte(siteEmailCodes.createdAt, codesBefore), lte(siteEmailCodes.expiresAt, now.toISOString())))
      .returning({ id: siteEmailCodes.id })
      .all().length,
  }));
}
