// Built-in forms: visitor submissions and the owner's replies, sealed at rest.
import { index, sqliteTable, text, type AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import { buckets } from "./buckets";

/**
 * A root row is one visitor submission; a reply row points at its root (parent_id). Field
 * values, context and reply text live only in `sealed` (AES-256-GCM under the form-submissions
 * key, bound to the row id): a copy of the database alone does not reveal what visitors wrote.
 */
export const formSubmissions = sqliteTable(
  "form_submissions",
  {
    id: text("id").primaryKey(),
    bucketId: text("bucket_id")
      .notNull()
      .references(() => buckets.id, { onDelete: "cascade" }),
    /** The bucket's account, for the plan's submission quota (counted per calendar month). */
    accountId: text("account_id").notNull(),
    formName: text("form_name").notNull(),
    parentId: text("parent_id").references((): AnySQLiteColumn => formSubmissions.id, { onDelete: "cascade" }),
    /** Replies only: `team` (owner side) or `public` (shown to the site's signed-in visitors). */
    audience: text("audience", { enum: ["team", "public"] }),
    sealed: text("sealed").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    /** Set once the owner's notification mail covered this submission. */
    notifiedAt: text("notified_at"),
  },
  (t) => [
    index("form_submissions_bucket").on(t.bucketId, t.createdAt),
    index("form_submissions_account").on(t.accountId, t.createdAt),
    index("form_submissions_parent").on(t.parentId),
  ],
);
