import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Automatic (ACME) certificates, one row per host name. The PEM files live in
 * <data-dir>/acme/certs/<host>/; this row is the state an operator sees and the scheduler reads.
 */
export const certificates = sqliteTable(
  "certificates",
  {
    /** Lower-case ASCII host name, no trailing dot. */
    host: text("host").primaryKey(),
    status: text("status", { enum: ["pending", "issued", "failed"] }).notNull(),
    /** The served certificate's expiry (ISO 8601); null until one was issued. */
    notAfter: text("not_after"),
    /** Why the last attempt failed, readable; null after a success. */
    lastError: text("last_error"),
    /** Failed attempts in a row (drives the backoff); 0 after a success. */
    attempts: integer("attempts").notNull().default(0),
    /** When the scheduler next orders (a retry, or the renewal at two thirds of the lifetime). */
    nextAttemptAt: text("next_attempt_at"),
    issuedAt: text("issued_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("certificates_next_attempt").on(t.nextAttemptAt)],
);
