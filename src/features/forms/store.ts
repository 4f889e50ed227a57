// Submissions at rest: sealed with the form-submissions key (bound to the row id), counted
// against the plan's monthly quota in the same transaction that stores them.
import { and, count, eq, gte, isNull, sql, type Placeholder } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { newId } from "../../core/ids";
import { formSubmissions } from "../../db/schema";
import { isConnection, preparedPerDb } from "../../db/prepared";
import { transaction, type DbOrTx } from "../../db/tx";
import { entitlementsOf, getAccount } from "../accounts";
import type { FormName } from "./definitions";

export type SubmissionRow = typeof formSubmissions.$inferSelect;

export interface DocumentSelection {
  version: number;
  type: "rect";
  coordinates: [number, number, number, number];
  coordinate_space: { width: number; height: number; unit: "pdf_point" | "image_pixel" | "element_ratio" | "document_ratio" };
  color?: string;
}

export interface SubmissionContext {
  document_path: string | null;
  document_page: number | null;
  document_selection: DocumentSelection | null;
}

/** What a root row seals: the visitor's fields and the immutable context. */
export interface SealedSubmission {
  fields: Record<string, string>;
  context: SubmissionContext;
}
/** What a reply row seals. */
export interface SealedReply {
  message: string;
  author: string;
}

export interface Quota {
  /** Root submissions a month (the plan's form_submission_quota). */
  limit: number;
  used: number;
  remaining: number;
  period_start: string;
}

const monthStart = (now: Date): string => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();

const usedQuery = (db: DbOrTx, accountId: string | Placeholder, since: string | Placeholder) =>
  db
    .select({ n: count() })
    .from(formSubmissions)
    .where(and(eq(formSubmissions.accountId, accountId), isNull(formSubmissions.parentId), gte(formSubmissions.createdAt, since)));
const preparedUsed = preparedPerDb((db) => usedQuery(db, sql.placeholder("accountId"), sql.placeholder("since")).prepare());

export function quotaOf(deps: Deps, accountId: string, db: DbOrTx = deps.db): Quota {
  const limit = entitlementsOf(deps, getAccount(deps, accountId, db)).form_submission_quota;
  const since = monthStart(deps.clock.now());
  const used = (isConnection(db) ? preparedUsed(db).get({ accountId, since }) : usedQuery(db, accountId, since).get())!.n;
  return { limit, used, remaining: Math.max(0, limit - used), period_start: since };
}

export const seal = (deps: Deps, id: string, value: SealedSubmission | SealedReply): string => deps.secrets.seal("form-submissions", JSON.stringify(value), id);

export function unseal<T extends SealedSubmission | SealedReply>(deps: Deps, row: SubmissionRow): T {
  return JSON.parse(deps.secrets.open("form-submissions", row.sealed, row.id)) as T;
}

/** Store a visitor's submission unless the account's quota for this month is used up. */
export function storeSubmission(
  deps: Deps,
  input: { bucketId: string; accountId: string; formName: FormName; value: SealedSubmission },
): { row: SubmissionRow; quota: Quota } {
  return transaction(deps.db, (tx) => {
    // Counted inside the (immediate) write transaction: two concurrent posts cannot both take the last slot.
    const quota = quotaOf(deps, input.accountId, tx);
    if (quota.remaining <= 0) {
      throw new ApiError("FORM_QUOTA_EXCEEDED", "This site cannot take more submissions this month. Please try again later or contact the owner another way.", {
        form_submission_quota: quota.limit,
      });
    }
    const id = newId("fsub");
    const now = deps.clock.now().toISOString();
    const row = tx
      .insert(formSubmissions)
      .values({
        id,
        bucketId: input.bucketId,
        accountId: input.accountId,
        formName: input.formName,
        sealed: seal(deps, id, input.value),
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get();
    return { row, quota: { ...quota, used: quota.used + 1, remaining: quota.remaining - 1 } };
  });
}
