// Owner side of form submissions: (deps, actor, input) -> result. Submissions are readable only
// with bucket write access; values are unsealed on read and never stored in the clear.
import { and, asc, count, desc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { newId } from "../../core/ids";
import { pageWindow, pagination, type Pagination } from "../../core/paging";
import { formSubmissions } from "../../db/schema";
import { transaction } from "../../db/tx";
import { loadBucket } from "../buckets";
import { FORMS, isFormName } from "./definitions";
import { quotaOf, seal, unseal, type Quota, type SealedReply, type SealedSubmission, type SubmissionRow } from "./store";
import { newestFirstPage, preparedPerDb } from "../../db/prepared";

export const SUBMISSION_PAGE = { defaultLimit: 50, maxLimit: 200 };
export const REPLY_MAX = 5000;

export interface ReplyView {
  id: string;
  parent_id: string;
  message: string;
  audience: "team" | "public";
  author: string;
  created_at: string;
}

export interface SubmissionView {
  id: string;
  form_name: string;
  fields: Record<string, string>;
  context: SealedSubmission["context"];
  created_at: string;
  updated_at: string;
  replies: ReplyView[];
}

export interface QuotaView {
  form_submission_quota: number;
  used_this_month: number;
  remaining_this_month: number;
  period_start: string;
}

const quotaView = (q: Quota): QuotaView => ({
  form_submission_quota: q.limit,
  used_this_month: q.used,
  remaining_this_month: q.remaining,
  period_start: q.period_start,
});

function presentReply(deps: Deps, row: SubmissionRow): ReplyView {
  const r = unseal<SealedReply>(deps, row);
  return { id: row.id, parent_id: row.parentId!, message: r.message, audience: row.audience ?? "team", author: r.author, created_at: row.createdAt };
}

function present(deps: Deps, row: SubmissionRow, replies: SubmissionRow[]): SubmissionView {
  const s = unseal<SealedSubmission>(deps, row);
  return {
    id: row.id,
    form_name: row.formName,
    fields: s.fields,
    context: s.context,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    replies: replies.map((r) => presentReply(deps, r)),
  };
}

function repliesOf(deps: Deps, rootIds: string[]): Map<string, SubmissionRow[]> {
  const out = new Map<string, SubmissionRow[]>();
  if (rootIds.length === 0) return out;
  const rows = deps.db.select().from(formSubmissions).where(inArray(formSubmissions.parentId, rootIds)).orderBy(asc(formSubmissions.createdAt)).all();
  for (const r of rows) out.set(r.parentId!, [...(out.get(r.parentId!) ?? []), r]);
  return out;
}

function loadRow(deps: Deps, bucketId: string, id: string): SubmissionRow {
  const row = deps.db
    .select()
    .from(formSubmissions)
    .where(and(eq(formSubmissions.id, id), eq(formSubmissions.bucketId, bucketId)))
    .get();
  if (!row) throw new ApiError("FORM_SUBMISSION_NOT_FOUND", `No form submission ${id} in this bucket.`);
  return row;
}

// A page of root submissions and their count, of every form or of one (`formName` placeholder),
// prepared once per database (D230).
const preparedSubmissionPages = preparedPerDb((db) =>
  [false, true].map((oneForm) => {
    const where = and(
      eq(formSubmissions.bucketId, sql.placeholder("bucketId")),
      isNull(formSubmissions.parentId),
      oneForm ? eq(formSubmissions.formName, sql.placeholder("formName")) : undefined,
    );
    return newestFirstPage(db, formSubmissions, where);
  }),
);

export function listSubmissions(
  deps: Deps,
  actor: Actor,
  bucketId: string,
  q: { form_name?: string; limit?: number; offset?: number },
): { form_submissions: SubmissionView[]; pagination: Pagination; quota: QuotaView } {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_write");
  if (q.form_name !== undefined && !isFormName(q.form_name)) {
    throw new ApiError("VALIDATION_FAILED", `form_name must be one of ${Object.keys(FORMS).join(", ")}.`, { field: "form_name" });
  }
  const { limit, offset } = pageWindow(q, SUBMISSION_PAGE);
  const page = preparedSubmissionPages(deps.db)[q.form_name ? 1 : 0]!;
  const params = { bucketId: bucket.id, formName: q.form_name ?? "" };
  const total = page.total.get(params)!.n;
  const rows = page.rows.all({ ...params, limit, offset });
  const replies = repliesOf(
    deps,
    rows.map((r) => r.id),
  );
  return {
    form_submissions: rows.map((r) => present(deps, r, replies.get(r.id) ?? [])),
    pagination: pagination(limit, offset, rows.length, total),
    quota: quotaView(quotaOf(deps, bucket.accountId)),
  };
}

/** A root submission with its replies (a reply id answers with its root). */
export function getSubmission(deps: Deps, actor: Actor, bucketId: string, id: string): { form_submission: SubmissionView; quota: QuotaView } {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_write");
  let row = loadRow(deps, bucket.id, id);
  if (row.parentId) row = loadRow(deps, bucket.id, row.parentId);
  return { form_submission: present(deps, row, repliesOf(deps, [row.id]).get(row.id) ?? []), quota: quotaView(quotaOf(deps, bucket.accountId)) };
}

/** Correct stored values: only fields the submission already has; each within its form's limit. */
export function patchSubmission(
  deps: Deps,
  actor: Actor,
  bucketId: string,
  id: string,
  input: { fields: Record<string, unknown> },
): { form_submission: SubmissionView } {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_write");
  return transaction(deps.db, (tx) => {
    const row = loadRow(deps, bucket.id, id);
    if (row.parentId) throw new ApiError("VALIDATION_FAILED", "Replies cannot be edited; delete the reply and write a new one.", { field: "id" });
    const value = unseal<SealedSubmission>(deps, row);
    // Own keys only: `in` also finds what every object inherits (constructor, toString, __proto__).
    const unknown = Object.keys(input.fields).filter((k) => !Object.hasOwn(value.fields, k));
    if (unknown.length > 0) {
      throw new ApiError(
        "VALIDATION_FAILED",
        `Only stored fields can be updated; this submission has no ${unknown.join(", ")} (it has ${Object.keys(value.fields).join(", ")}).`,
        {
          field: "fields",
          unknown_fields: unknown,
        },
      );
    }
    const defs = isFormName(row.formName) ? FORMS[row.formName].fields : [];
    for (const [k, v] of Object.entries(input.fields)) {
      const max = defs.find((f) => f.name === k)?.maxLength ?? 5000;
      if (typeof v !== "string" || v.length > max)
        throw new ApiError("VALIDATION_FAILED", `fields.${k} must be a string of at most ${max} characters.`, { field: `fields.${k}` });
      value.fields[k] = v;
    }
    const updated = tx
      .update(formSubmissions)
      .set({ sealed: seal(deps, row.id, value), updatedAt: deps.clock.now().toISOString() })
      .where(eq(formSubmissions.id, row.id))
      .returning()
      .get()!;
    return { form_submission: present(deps, updated, repliesOf(deps, [row.id]).get(row.id) ?? []) };
  });
}

export function replyToSubmission(
  deps: Deps,
  actor: Actor,
  bucketId: string,
  id: string,
  input: { message: string; audience?: "team" | "public" },
): { form_submission: SubmissionView; reply: ReplyView } {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_write");
  const message = input.message.trim();
  if (!message) throw new ApiError("VALIDATION_FAILED", "message must not be empty.", { field: "message" });
  if (message.length > REPLY_MAX) throw new ApiError("VALIDATION_FAILED", `message is limited to ${REPLY_MAX} characters.`, { field: "message" });
  const audience = input.audience ?? "team";
  return transaction(deps.db, (tx) => {
    let root = loadRow(deps, bucket.id, id);
    if (root.parentId) root = loadRow(deps, bucket.id, root.parentId);
    // Only the shared comments form shows replies to visitors; elsewhere a reply stays with the team.
    if (audience === "public" && root.formName !== "comments") {
      throw new ApiError(
        "VALIDATION_FAILED",
        `A public reply is possible only on comments submissions; this is a ${root.formName} submission (use audience "team").`,
        {
          field: "audience",
        },
      );
    }
    const replyId = newId("fsub");
    const now = deps.clock.now().toISOString();
    const reply = tx
      .insert(formSubmissions)
      .values({
        id: replyId,
        bucketId: bucket.id,
        accountId: bucket.accountId,
        formName: root.formName,
        parentId: root.id,
        audience,
        sealed: seal(deps, replyId, { message, author: actor.userId ? `user:${actor.userId}` : "owner" }),
        createdAt: now,
        updatedAt: now,
        // Replies are the owner's own: nobody needs to be told about them.
        notifiedAt: now,
      })
      .returning()
      .get();
    return { form_submission: present(deps, root, repliesOf(deps, [root.id]).get(root.id) ?? []), reply: presentReply(deps, reply) };
  });
}

/** Delete one reply, or a root submission with all its replies (the foreign key cascades). */
export function deleteSubmission(deps: Deps, actor: Actor, bucketId: string, id: string): { deleted: { id: string; replies_deleted: number } } {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_write");
  return transaction(deps.db, (tx) => {
    const row = loadRow(deps, bucket.id, id);
    const replies = row.parentId ? 0 : tx.select({ n: count() }).from(formSubmissions).where(eq(formSubmissions.parentId, row.id)).get()!.n;
    tx.delete(formSubmissions).where(eq(formSubmissions.id, row.id)).run();
    return { deleted: { id: row.id, replies_deleted: replies } };
  });
}

export interface PublicComment {
  id: string;
  name: string | null;
  message: string;
  created_at: string;
  replies: { message: string; created_at: string }[];
}

/**
 * The comments a gated site shows its signed-in visitors: the newest first, each with the owner's
 * public replies only (team replies never leave the owner side). The caller checked the gate.
 */
export function publicComments(deps: Deps, bucketId: string, limit = 100): PublicComment[] {
  const roots = deps.db
    .select()
    .from(formSubmissions)
    .where(and(eq(formSubmissions.bucketId, bucketId), eq(formSubmissions.formName, "comments"), isNull(formSubmissions.parentId)))
    .orderBy(desc(formSubmissions.createdAt), desc(formSubmissions.id))
    .limit(limit)
    .all();
  const replies = repliesOf(
    deps,
    roots.map((r) => r.id),
  );
  return roots.map((row) => {
    const s = unseal<SealedSubmission>(deps, row);
    return {
      id: row.id,
      name: s.fields.name ?? null,
      message: s.fields.message ?? "",
      created_at: row.createdAt,
      replies: (replies.get(row.id) ?? [])
        .filter((r) => r.audience === "public")
        .map((r) => ({ message: unseal<SealedReply>(deps, r).message, created_at: r.createdAt })),
    };
  });
}
