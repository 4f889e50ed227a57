// Bucket receiving addresses: allocation (unguessable, unique, never reused), the owner's
// on/off switch, the `inbound_email` state every bucket response carries, and the RCPT TO
// lookup. Readiness has one definition (blockedReason) shared by the API and the receiver, so
// `ready: true` means exactly "the receiver accepts mail for this address now".
import { eq, sql, type Placeholder } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { randomToken } from "../../core/ids";
import type { Db } from "../../db/client";
import { accounts, buckets, mailAddresses } from "../../db/schema";
import { transaction, type DbOrTx } from "../../db/tx";
import { isConnection, preparedPerDb } from "../../db/prepared";
import type { BucketRow } from "./authorization";

export type AddressRow = typeof mailAddresses.$inferSelect;

/** Why an address does not accept mail (documented in docs/inbound-email.md). */
export type BlockedReason = "not_enabled" | "smtp_disabled" | "bucket_archived" | "bucket_deleting" | "account_read_only" | "disabled_by_admin";

export const ADDRESS_RANDOM_CHARS = 10;
const SLUG_MAX = 24;

/** A readable prefix from the bucket title: lower-case ASCII letters, digits and dashes. */
export function addressSlug(title: string): string {
  const s = title
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, SLUG_MAX)
    .replace(/-+$/, "");
  return s || "bucket";
}

/** `<slug>-<10 random base32 chars>` (50 random bits): enumeration is hopeless, the slug is for humans. */
export function newLocalPart(title: string): string {
  return `${addressSlug(title)}-${randomToken(ADDRESS_RANDOM_CHARS)}`;
}

export const fullAddress = (deps: Pick<Deps, "urls">, row: AddressRow) => `${row.localPart}@${deps.urls.mailDomain}`;

const addressQuery = (db: DbOrTx, bucketId: string | Placeholder) => db.select().from(mailAddresses).where(eq(mailAddresses.bucketId, bucketId));
const preparedAddress = preparedPerDb((db) => addressQuery(db, sql.placeholder("bucketId")).prepare());

export function addressOfBucket(deps: Deps, bucketId: string, db: DbOrTx = deps.db): AddressRow | undefined {
  return isConnection(db) ? preparedAddress(db).get({ bucketId }) : addressQuery(db, bucketId).get();
}

/**
 * Apply `bucket.inbound_email` from POST/PATCH /buckets in the caller's transaction. Enabling
 * a bucket that never had an address allocates one; disabling keeps it (re-enabling restores
 * the same address). Local parts are primary keys of rows that are never deleted, so a
 * collision (or an address of a deleted bucket) is simply skipped.
 */
export function setInboundEmail(deps: Deps, bucket: BucketRow, input: { enabled: boolean }, tx: DbOrTx): void {
  transaction(tx, (t) => {
    const now = deps.clock.now().toISOString();
    const existing = addressOfBucket(deps, bucket.id, t);
    if (existing) {
      if (existing.enabled !== input.enabled)
        t.update(mailAddresses).set({ enabled: input.enabled, updatedAt: now }).where(eq(mailAddresses.localPart, existing.localPart)).run();
      return;
    }
    if (!input.enabled) return;
    for (;;) {
      const localPart = newLocalPart(bucket.title);
      const taken = t.select({ l: mailAddresses.localPart }).from(mailAddresses).where(eq(mailAddresses.localPart, localPart)).get();
      if (taken) continue;
      t.insert(mailAddresses).values({ localPart, bucketId: bucket.id, accountId: bucket.accountId, enabled: true, createdAt: now, updatedAt: now }).run();
      return;
    }
  });
}

/** First reason, in this order, that mail to the bucket's address is refused; null = ready. */
export function blockedReason(deps: Deps, bucket: BucketRow, row: AddressRow | undefined, accountReadOnly: boolean): BlockedReason | null {
  if (!row || !row.enabled) return "not_enabled";
  if (row.disabledByAdminAt) return "disabled_by_admin";
  if (bucket.deletion) return "bucket_deleting";
  if (bucket.archivedAt) return "bucket_archived";
  if (accountReadOnly) return "account_read_only";
  if (deps.config.smtpPort === null) return "smtp_disabled";
  return null;
}

const readOnlyQuery = (db: DbOrTx, accountId: string | Placeholder) => db.select({ r: accounts.readOnly }).from(accounts).where(eq(accounts.id, accountId));
const preparedReadOnly = preparedPerDb((db) => readOnlyQuery(db, sql.placeholder("accountId")).prepare());

/**
 * Whether the account is read-only now. The filer asks again as it commits a message accepted at
 * RCPT TO (inside its transaction), so an account made read-only meanwhile gets nothing filed.
 */
export const accountReadOnly = (accountId: string, db: DbOrTx) =>
  Boolean((isConnection(db) ? preparedReadOnly(db).get({ accountId }) : readOnlyQuery(db, accountId).get())?.r);

/** The `inbound_email` object of a bucket response and of GET /buckets/:id/inbound_email. */
export function inboundEmailState(deps: Deps, bucket: BucketRow, db: DbOrTx = deps.db) {
  const row = addressOfBucket(deps, bucket.id, db);
  const reason = blockedReason(deps, bucket, row, accountReadOnly(bucket.accountId, db));
  return {
    enabled: Boolean(row?.enabled),
    ready: reason === null,
    address: row ? fullAddress(deps, row) : null,
    blocked_reason: reason,
    received_count: row?.receivedCount ?? 0,
    last_received_path: row?.lastReceivedPath ?? null,
    last_received_at: row?.lastReceivedAt ?? null,
  };
}

export type RecipientLookup = { ok: true; bucketId: string; localPart: string } | { ok: false; code: number; message: string };

// RCPT TO runs this for every recipient of every message, on the event loop that speaks SMTP:
// built through drizzle each time, its three queries cost that loop a fifth of its CPU while
// mail streamed in (bench/README.md). Prepared once per database (the account's read-only flag
// is accountReadOnly's); primary-key lookups, not one join, which SQLite ran 5-8x slower
// (measured: 16 µs against 1-2 µs each).
const prepareRecipientQueries = (db: Db) => ({
  address: db
    .select()
    .from(mailAddresses)
    .where(eq(mailAddresses.localPart, sql.placeholder("localPart")))
    .prepare(),
  bucket: db
    .select()
    .from(buckets)
    .where(eq(buckets.id, sql.placeholder("id")))
    .prepare(),
});
const recipientQueries = preparedPerDb(prepareRecipientQueries);

/** RCPT TO: which bucket an address files into, or the SMTP refusal. */
export function lookupRecipient(deps: Deps, address: string): RecipientLookup {
  const at = address.lastIndexOf("@");
  const domain = address.slice(at + 1).toLowerCase();
  if (at < 1 || domain !== deps.urls.mailDomain)
    return { ok: false, code: 550, message: "Relaying denied: this server only receives mail for its own addresses" };
  const localPart = address.slice(0, at).toLowerCase();
  const q = recipientQueries(deps.db);
  const row = q.address.get({ localPart });
  if (!row) return { ok: false, code: 550, message: "No such mailbox" };
  const bucket = q.bucket.get({ id: row.bucketId });
  if (!bucket) return { ok: false, code: 550, message: "Mailbox no longer exists" };
  const reason = blockedReason(deps, bucket, row, accountReadOnly(bucket.accountId, deps.db));
  if (reason === "not_enabled") return { ok: false, code: 550, message: "No such mailbox" };
  if (reason === "bucket_deleting") return { ok: false, code: 550, message: "Mailbox no longer exists" };
  if (reason) return { ok: false, code: 550, message: `Mailbox disabled, not accepting messages (${reason})` };
  return { ok: true, bucketId: bucket.id, localPart };
}

/** Operator switch (`pier admin mail disable|enable ADDRESS`). */
export function setDisabledByAdmin(deps: Deps, address: string, disabled: boolean): AddressRow | null {
  const localPart = address.toLowerCase().split("@")[0]!;
  const now = deps.clock.now().toISOString();
  return (
    deps.db
      .update(mailAddresses)
      .set({ disabledByAdminAt: disabled ? now : null, updatedAt: now })
      .where(eq(mailAddresses.localPart, localPart))
      .returning()
      .get() ?? null
  );
}
