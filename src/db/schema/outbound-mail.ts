// Outbound messages kept for the admin when no SMTP relay is configured (PIER_SMTP_RELAY_URL).
import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const mailOutbox = sqliteTable(
  "mail_outbox",
  {
    id: text("id").primaryKey(),
    toAddress: text("to_address").notNull(),
    subject: text("subject").notNull(),
    textBody: text("text_body").notNull(),
    /** What sent it (site-email-code, publish-failed, ...), for filtering. */
    kind: text("kind").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("mail_outbox_created").on(t.createdAt)],
);
