// Account notifications written by the buckets feature (large background deletes). They land
// in the `notifications` table; delivering them (dashboard, email) belongs to the mail feature.
import type { Deps } from "../../core/context";
import { newId } from "../../core/ids";
import { notifications } from "../../db/schema";
import type { DbOrTx } from "../../db/tx";

export type BucketNotificationKind = "bucket_deleted" | "bucket_delete_failed";

export function notifyAccount(
  deps: Deps,
  n: { accountId: string; kind: BucketNotificationKind; subject: string; body: string; data: Record<string, unknown> },
  db: DbOrTx,
): void {
  db.insert(notifications).values({
    id: newId("ntf"), accountId: n.accountId, kind: n.kind, subject: n.subject, body: n.body, data: n.data,
    createdAt: deps.clock.now().toISOString(),
  }).run();
}
