// Account notifications (a large bucket delete finished or failed, ...): written by the
// features that raise them, read here by the account's credentials, newest first.
import { eq, sql } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { newId } from "../../core/ids";
import { pageWindow, pagination, type Pagination } from "../../core/paging";
import { newestFirstPage, preparedPerDb } from "../../db/prepared";
import { notifications } from "../../db/schema";
import type { DbOrTx } from "../../db/tx";

export const NOTIFICATIONS_PAGE_DEFAULT = 20;
export const NOTIFICATIONS_PAGE_MAX = 100;

const NOTIFICATIONS_PAGE = { defaultLimit: NOTIFICATIONS_PAGE_DEFAULT, maxLimit: NOTIFICATIONS_PAGE_MAX };

const preparedNotificationPage = preparedPerDb((db) => newestFirstPage(db, notifications, eq(notifications.accountId, sql.placeholder("accountId"))));

export function listNotifications(deps: Deps, actor: Actor, page: { limit?: number; offset?: number }) {
  // Notifications name buckets of the whole account: a key limited to selected buckets
  // must not learn about the others.
  if (actor.bucketAccess === "selected") {
    throw new ApiError("FORBIDDEN", "Account notifications need a credential with access to all buckets.", { reason: "selected_buckets" });
  }
  const { limit, offset } = pageWindow(page, NOTIFICATIONS_PAGE);
  const q = preparedNotificationPage(deps.db);
  const rows = q.rows.all({ accountId: actor.accountId, limit, offset });
  const total = q.total.get({ accountId: actor.accountId })!.n;
  return {
    notifications: rows.map((n) => ({ id: n.id, kind: n.kind, subject: n.subject, body: n.body, data: n.data, created_at: n.createdAt })),
    pagination: pagination(limit, offset, rows.length, total) satisfies Pagination,
  };
}

/** What a feature raises: `kind` names the event (bucket_deleted, publish_failed, ...). */
export interface NewNotification {
  accountId: string;
  kind: string;
  subject: string;
  body: string;
  data: Record<string, unknown>;
}

/** Record a notification for the account, in the caller's transaction. */
export function notifyAccount(deps: Deps, n: NewNotification, db: DbOrTx): void {
  db.insert(notifications)
    .values({
      id: newId("ntf"),
      accountId: n.accountId,
      kind: n.kind,
      subject: n.subject,
      body: n.body,
      data: n.data,
      createdAt: deps.clock.now().toISOString(),
    })
    .run();
}
