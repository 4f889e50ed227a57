// Custom domains: a bucket's published site served on a hostname its owner controls. A domain is
// proved twice through DNS (an ownership TXT record with a token of its own, and a traffic record
// pointing at Pier) before it serves; docs/custom-domains.md has the states and the re-check schedule.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sql } from "drizzle-orm";
import { accounts } from "./accounts";
import { buckets } from "./buckets";

export type CustomDomainStatus = "pending_validation" | "active" | "failed";

/** One required DNS record's last check: what Pier looked for and what it saw. */
export interface DnsRecordCheck {
  purpose: "ownership" | "traffic";
  found: boolean;
  /** The values the resolver answered (TXT strings, CNAME target, A/AAAA addresses). */
  seen: string[];
  /** A resolver failure other than "no such record" (timeout, SERVFAIL), in words; null otherwise. */
  error: string | null;
  /** Apex traffic: the Pier host's addresses, which A/AAAA records must equal. */
  expected_addresses?: string[];
}

export const customDomains = sqliteTable(
  "custom_domains",
  {
    id: text("id").primaryKey(),
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** Lower-case ASCII (punycode for IDN), no trailing dot. */
    hostname: text("hostname").notNull(),
    status: text("status", { enum: ["pending_validation", "active", "failed"] }).notNull(),
    /** Why the domain failed (gave up re-checking); null otherwise. */
    failureReason: text("failure_reason"),
    /** The value the ownership TXT record must hold; random per domain, so a second claimant cannot reuse it. */
    ownershipToken: text("ownership_token").notNull(),
    /** Set once both DNS records were seen; from then on nobody else may add the hostname. */
    verifiedAt: text("verified_at"),
    activatedAt: text("activated_at"),
    /** The last check of each required record. */
    checks: text("checks", { mode: "json" }).$type<DnsRecordCheck[]>().notNull().default(sql`'[]'`),
    lastCheckedAt: text("last_checked_at"),
    /** When the re-check job looks at this pending domain again (null: not scheduled). */
    nextCheckAt: text("next_check_at"),
    checkAttempts: integer("check_attempts").notNull().default(0),
    /**
     * A claim on a name another site verified: when its DNS was first seen holding this claim's
     * value and no longer the holder's. The name moves only if that still holds a grace period
     * later (D319); null while it does not.
     */
    contestedSince: text("contested_since"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("custom_domains_bucket").on(t.bucketId),
    index("custom_domains_account").on(t.accountId),
    index("custom_domains_hostname").on(t.hostname),
    index("custom_domains_next_check").on(t.nextCheckAt),
    // A verified hostname belongs to one domain row; pending claims may coexist until one verifies.
    uniqueIndex("custom_domains_verified_hostname").on(t.hostname).where(sql`verified_at IS NOT NULL`),
  ],
);
