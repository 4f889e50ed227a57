// Inbound email: bucket receiving addresses and the messages filed into buckets.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { buckets } from "./buckets";

/**
 * One receiving address per bucket, `<local_part>@<mail domain>`. No foreign key to buckets on
 * purpose: the row outlives its bucket so an address is never handed out again after the bucket
 * is deleted (the local part is the primary key and rows are never deleted); mail to it is
 * refused at RCPT TO. The counters live here so filing updates them in the filing transaction.
 */
export const mailAddresses = sqliteTable(
  "mail_addresses",
  {
    /** Lower-case local part, `<slug>-<10 random base32 chars>`. */
    localPart: text("local_part").primaryKey(),
    bucketId: text("bucket_id").notNull(),
    accountId: text("account_id").notNull(),
    /** Owner's switch (bucket.inbound_email.enabled); turning it back on restores the same address. */
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    /** Set by an operator (`pier admin mail disable`): refuses mail whatever the owner says. */
    disabledByAdminAt: text("disabled_by_admin_at"),
    receivedCount: integer("received_count").notNull().default(0),
    lastReceivedPath: text("last_received_path"),
    lastReceivedAt: text("last_received_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("mail_addresses_bucket").on(t.bucketId)],
);

/**
 * One row per message filed into a bucket (written in the filing transaction), carrying the
 * shared read status: the first deliberate read of its message.json through the by-path
 * endpoint sets read_at/read_by; later reads move last_read_at.
 */
export const mailMessages = sqliteTable(
  "mail_messages",
  {
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id, { onDelete: "cascade" }),
    /** Message folder, `_email/YYYY/MM/DD/<stamp>-<id>/` (sorts in arrival order). */
    folder: text("folder").notNull(),
    messageId: text("message_id").notNull(),
    receivedAt: text("received_at").notNull(),
    fromAddress: text("from_address"),
    subject: text("subject"),
    size: integer("size").notNull(),
    attachmentCount: integer("attachment_count").notNull(),
    readAt: text("read_at"),
    readBy: text("read_by"),
    lastReadAt: text("last_read_at"),
    readCount: integer("read_count").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.bucketId, t.folder] }), index("mail_messages_received").on(t.bucketId, t.receivedAt)],
);
