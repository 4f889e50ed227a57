// Received messages as agents see them: the shared read status (recorded when message.json is
// read through GET /files/by_path) and a paged list in arrival order that carries it.
import { and, asc, count, desc, eq, isNull, sql, type Placeholder } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { files, mailMessages } from "../../db/schema";
import { loadBucket } from "../buckets";
import { inboundEmailState } from "../buckets";
import { EMAIL_ROOT } from "./paths";
import type { Db } from "../../db/client";
import { preparedPerDb } from "../../db/prepared";

const MESSAGE_JSON = /^(_email\/\d{4}\/\d{2}\/\d{2}\/[0-9TZ]+-[a-z0-9]+\/)message\.json$/;

/**
 * Hook of the by-path read: reading a message's message.json is a deliberate read and marks
 * the message read for everyone (first reader and time kept, last read time and count move).
 * Any other path is ignored. Never fails the read it is called from.
 */
export function recordMessageRead(deps: Deps, actor: Actor, bucketId: string, path: string): void {
  if (!path.startsWith(EMAIL_ROOT)) return;
  const m = MESSAGE_JSON.exec(path);
  if (!m) return;
  const now = deps.clock.now().toISOString();
  try {
    deps.db
      .update(mailMessages)
      .set({
        readAt: sql`coalesce(${mailMessages.readAt}, ${now})`,
        readBy: sql`coalesce(${mailMessages.readBy}, ${actor.credentialId})`,
        lastReadAt: now,
        readCount: sql`${mailMessages.readCount} + 1`,
      })
      .where(and(eq(mailMessages.bucketId, bucketId), eq(mailMessages.folder, m[1]!)))
      .run();
  } catch (e) {
    deps.log.warn("could not record a message read", { error: e, bucket_id: bucketId, path });
  }
}

/** Whether anyone has read the message filed in `folder` (the dashboard's message page shows it). */
export function isMessageRead(deps: Deps, actor: Actor, bucketId: string, folder: string): boolean {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_read");
  const row = deps.db
    .select({ readAt: mailMessages.readAt })
    .from(mailMessages)
    .where(and(eq(mailMessages.bucketId, bucket.id), eq(mailMessages.folder, folder)))
    .get();
  return row?.readAt != null;
}

export function getInboundEmail(deps: Deps, actor: Actor, bucketId: string) {
  return inboundEmailState(deps, loadBucket(deps, actor, bucketId, "bucket_read"));
}

export const MESSAGES_PAGE_DEFAULT = 50;
export const MESSAGES_PAGE_MAX = 500;

/** A page of messages and their count, for all or only unread messages, oldest or newest first. */
function messagePageQueries(db: Db, unread: boolean, newestFirst: boolean) {
  const bucketId: Placeholder = sql.placeholder("bucketId");
  const where = and(eq(mailMessages.bucketId, bucketId), unread ? isNull(mailMessages.readAt) : undefined);
  const joined = and(eq(files.bucketId, mailMessages.bucketId), eq(files.path, sql`${mailMessages.folder} || 'message.json'`));
  return {
    rows: db
      .select({ m: mailMessages, fileId: files.id })
      .from(mailMessages)
      .innerJoin(files, joined)
      .where(where)
      .orderBy(newestFirst ? desc(mailMessages.folder) : asc(mailMessages.folder))
      .limit(sql.placeholder("limit"))
      .offset(sql.placeholder("offset"))
      .prepare(),
    total: db.select({ n: count() }).from(mailMessages).innerJoin(files, joined).where(where).prepare(),
  };
}
// An agent polls its inbox: the four forms are prepared once per database (D230).
const preparedMessagePages = preparedPerDb((db) =>
  [false, true].map((unread) => [false, true].map((newestFirst) => messagePageQueries(db, unread, newestFirst))),
);

/**
 * Messages whose message.json is still in the bucket, oldest first (arrival order), with the
 * shared read status. `unread: true` lists only messages nobody has read yet; `newestFirst`
 * reverses the order (the dashboard's inbox).
 */
export function listMessages(deps: Deps, actor: Actor, bucketId: string, q: { limit?: number; offset?: number; unread?: boolean; newestFirst?: boolean }) {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_read");
  const limit = Math.min(Math.max(q.limit ?? MESSAGES_PAGE_DEFAULT, 1), MESSAGES_PAGE_MAX);
  const offset = Math.max(q.offset ?? 0, 0);
  const page = preparedMessagePages(deps.db)[q.unread ? 1 : 0]![q.newestFirst ? 1 : 0]!;
  const rows = page.rows.all({ bucketId: bucket.id, limit, offset });
  const total = page.total.get({ bucketId: bucket.id })!.n;
  const next = offset + rows.length < total ? offset + rows.length : null;
  return {
    messages: rows.map(({ m, fileId }) => ({
      id: m.messageId,
      folder: m.folder,
      message_json_path: `${m.folder}message.json`,
      message_json_file_id: fileId,
      received_at: m.receivedAt,
      from: m.fromAddress,
      subject: m.subject,
      size: m.size,
      attachment_count: m.attachmentCount,
      read: m.readAt !== null,
      read_at: m.readAt,
      read_by: m.readBy,
      last_read_at: m.lastReadAt,
      read_count: m.readCount,
    })),
    pagination: { limit, offset, total_count: total, has_more: next !== null, next_offset: next },
  };
}
