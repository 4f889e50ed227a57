// Bucket rules: (deps, actor, input) -> result. No HTTP here.
import { and, count, desc, eq, inArray, isNotNull, isNull, sql, type Placeholder } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { newId } from "../../core/ids";
import { pageWindow, pagination, type Pagination } from "../../core/paging";
import { newestFirstPage, preparedPerDb } from "../../db/prepared";
import { buckets, deletedBuckets } from "../../db/schema";
import { transaction, type DbOrTx } from "../../db/tx";
import { planHelp, planLimitError } from "../accounts";
import { entitlementsOf, getAccount } from "../accounts";
import { hasAccountWideAdmin, loadBucket, loadMutableBucket, type BucketRow } from "./authorization";
import { BUCKET_PAGE, type BucketInput, type BucketPatch } from "./model";
import { setInboundEmail } from "./inbound-address";
import { checkMetadata } from "./metadata-rules";

export function normalizeTags(tags: string[] | undefined): string[] {
  return [...new Set((tags ?? []).map((t) => t.trim()).filter(Boolean))];
}

/**
 * A title as stored: trimmed, and still one non-empty line. The schema's length check runs before
 * the trim, so "   " would otherwise make a bucket titled ""; a title is shown on one line in the
 * dashboard, notifications and git sync's commit messages, where a line break or NUL has no place.
 */
function bucketTitle(raw: string): string {
  const title = raw.trim();
  if (!title) throw new ApiError("VALIDATION_FAILED", "title must not be blank.", { field: "title" });
  if (/[\u0000-\u001f\u007f-\u009f]/u.test(title)) {
    throw new ApiError("VALIDATION_FAILED", "title must be one line without control characters.", { field: "title" });
  }
  return title;
}

export function createBucket(deps: Deps, actor: Actor, input: BucketInput): BucketRow {
  if (!hasAccountWideAdmin(actor)) {
    throw new ApiError("FORBIDDEN", "Creating a bucket needs account-wide bucket_admin access.", { required_scope: "bucket_admin", bucket_access: "all" });
  }
  checkMetadata(input.metadata);
  const title = bucketTitle(input.title);
  return transaction(deps.db, (tx) => {
    const account = getAccount(deps, actor.accountId, tx);
    const max = entitlementsOf(deps, account).max_buckets;
    const n = tx.select({ n: count() }).from(buckets).where(eq(buckets.accountId, account.id)).get()!.n;
    if (n >= max) {
      const help = planHelp(deps, account, (e) => e.max_buckets > n);
      throw planLimitError(`The account has no room for another bucket (its plan allows ${max}).`, "max_buckets", help, { max_buckets: max });
    }
    const now = deps.clock.now().toISOString();
    const row = tx
      .insert(buckets)
      .values({
        id: freshBucketId(tx),
        accountId: account.id,
        title,
        description: input.description ?? "",
        tagPaths: normalizeTags(input.tag_paths),
        metadata: input.metadata ?? {},
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get();
    if (input.inbound_email) setInboundEmail(deps, row, input.inbound_email, tx);
    return row;
  });
}

/** A random id that no live or deleted bucket ever had (deleted ids stay tombstoned). */
function freshBucketId(db: DbOrTx): string {
  for (;;) {
    const id = newId("bkt");
    const taken =
      db.select({ id: buckets.id }).from(buckets).where(eq(buckets.id, id)).get() ??
      db.select({ id: deletedBuckets.id }).from(deletedBuckets).where(eq(deletedBuckets.id, id)).get();
    if (!taken) return id;
  }
}

// The plain list (no key selection, search or tag), prepared once per connection for active and
// for archived buckets: building the two queries through drizzle cost more than running them.
const plainListWhere = (accountId: string | Placeholder, archived: boolean) =>
  and(eq(buckets.accountId, accountId), archived ? isNotNull(buckets.archivedAt) : isNull(buckets.archivedAt));
const preparedPlainList = preparedPerDb((db) =>
  [false, true].map((archived) => newestFirstPage(db, buckets, plainListWhere(sql.placeholder("accountId"), archived))),
);

/** One page of the buckets the actor can see, newest first (a key's selection filters in SQL). */
export function listBucketPage(
  deps: Deps,
  actor: Actor,
  opts: { archived: boolean; limit?: number; offset?: number; titleContains?: string; tagPath?: string },
): { buckets: BucketRow[]; pagination: Pagination } {
  const { limit, offset } = pageWindow(opts, BUCKET_PAGE);
  const selected = actor.bucketAccess === "selected" ? Object.keys(actor.bucketPermissions) : null;
  if (!selected && !opts.titleContains && !opts.tagPath) {
    const q = preparedPlainList(deps.db)[opts.archived ? 1 : 0]!;
    const total = q.total.get({ accountId: actor.accountId })!.n;
    const rows = q.rows.all({ accountId: actor.accountId, limit, offset });
    return { buckets: rows, pagination: pagination(limit, offset, rows.length, total) };
  }
  const where = and(
    eq(buckets.accountId, actor.accountId),
    opts.archived ? isNotNull(buckets.archivedAt) : isNull(buckets.archivedAt),
    selected ? inArray(buckets.id, selected) : undefined,
    // instr, not LIKE: the dashboard's search text is matched literally (no % or _ wildcards).
    opts.titleContains ? sql`instr(lower(${buckets.title}), lower(${opts.titleContains})) > 0` : undefined,
    // Exact label match, as tag_paths stores labels (a JSON array per bucket).
    opts.tagPath ? sql`exists (select 1 from json_each(${buckets.tagPaths}) where json_each.value = ${opts.tagPath})` : undefined,
  );
  const total = deps.db.select({ n: count() }).from(buckets).where(where).get()!.n;
  // id breaks ties between buckets created in the same millisecond, so pages never overlap.
  const rows = deps.db.select().from(buckets).where(where).orderBy(desc(buckets.createdAt), desc(buckets.id)).limit(limit).offset(offset).all();
  return { buckets: rows, pagination: pagination(limit, offset, rows.length, total) };
}

/** The account's newest active (not archived, not being deleted) bucket with this exact title. */
export function findActiveBucketByTitle(accountId: string, title: string, db: DbOrTx): BucketRow | undefined {
  return db
    .select()
    .from(buckets)
    .where(and(eq(buckets.accountId, accountId), eq(buckets.title, title), isNull(buckets.archivedAt)))
    .orderBy(desc(buckets.updatedAt))
    .all()
    .find((b) => !b.deletion);
}

/** A bucket's revision (it grows with every change of its files), or undefined when it is gone. */
export function bucketRevision(bucketId: string, db: DbOrTx): number | undefined {
  return db.select({ revision: buckets.revision }).from(buckets).where(eq(buckets.id, bucketId)).get()?.revision;
}

export function getBucket(deps: Deps, actor: Actor, id: string): BucketRow {
  return loadBucket(deps, actor, id, "bucket_read");
}

export function updateBucket(deps: Deps, actor: Actor, id: string, patch: BucketPatch): BucketRow {
  checkMetadata(patch.metadata);
  const title = patch.title === undefined ? undefined : bucketTitle(patch.title);
  return transaction(deps.db, (tx) => {
    const bucket = loadMutableBucket(deps, actor, id, { need: "bucket_admin" }, tx);
    if (patch.inbound_email) setInboundEmail(deps, bucket, patch.inbound_email, tx);
    return tx
      .update(buckets)
      .set({
        ...(title !== undefined ? { title } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.tag_paths !== undefined ? { tagPaths: normalizeTags(patch.tag_paths) } : {}),
        ...(patch.metadata !== undefined ? { metadata: patch.metadata } : {}),
        updatedAt: deps.clock.now().toISOString(),
      })
      .where(eq(buckets.id, bucket.id))
      .returning()
      .get()!;
  });
}

/** A bucket's metadata by id, for serving-side readers (forms on a site host); undefined when gone. */
export function bucketMetadataOf(deps: Deps, bucketId: string): { accountId: string; title: string; metadata: Record<string, unknown> } | undefined {
  return deps.db
    .select({ accountId: buckets.accountId, title: buckets.title, metadata: buckets.metadata })
    .from(buckets)
    .where(eq(buckets.id, bucketId))
    .get() as { accountId: string; title: string; metadata: Record<string, unknown> } | undefined;
}
