// A bucket's form submissions as one CSV download (the dashboard's "Download CSV"): every root
// submission of one form or of all, newest first, one column per visitor field. Read and
// decrypted a page at a time (src/core/csv.ts), with the same access as the API's list.
import { and, desc, eq, isNull, lt, or } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { CSV_PAGE, csvStream } from "../../core/csv";
import { ApiError } from "../../core/errors";
import { formSubmissions } from "../../db/schema";
import { loadBucket } from "../buckets";
import { FORM_NAMES, FORMS, isFormName, type FormName } from "./definitions";
import { unseal, type SealedSubmission } from "./store";

interface Cursor {
  createdAt: string;
  id: string;
}

export interface SubmissionsCsv {
  /** The bucket's title, for the download's name. */
  bucketTitle: string;
  body: ReadableStream<Uint8Array>;
}

/** The visitor fields of one form, or of all forms (each field once, in the forms' order). */
function columnsOf(formName: FormName | undefined): { name: string; label: string }[] {
  const seen = new Map<string, string>();
  for (const name of formName ? [formName] : FORM_NAMES) for (const f of FORMS[name].fields) if (!seen.has(f.name)) seen.set(f.name, f.label);
  return [...seen].map(([name, label]) => ({ name, label }));
}

export function submissionsCsv(deps: Deps, actor: Actor, bucketId: string, q: { form_name?: string }): SubmissionsCsv {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_write");
  const formName = q.form_name || undefined;
  if (formName !== undefined && !isFormName(formName)) {
    throw new ApiError("VALIDATION_FAILED", `form_name must be one of ${FORM_NAMES.join(", ")}.`, { field: "form_name" });
  }
  const columns = columnsOf(formName);
  const header = ["Submitted at (UTC)", "Form", ...columns.map((c) => c.label), "Document path", "Document page", "Submission id"];
  const body = csvStream<Cursor>(header, (after) => {
    // Newest first by (created_at, id): a submission arriving during the download shifts no page.
    const rows = deps.db
      .select()
      .from(formSubmissions)
      .where(
        and(
          eq(formSubmissions.bucketId, bucket.id),
          isNull(formSubmissions.parentId),
          formName ? eq(formSubmissions.formName, formName) : undefined,
          after
            ? or(lt(formSubmissions.createdAt, after.createdAt), and(eq(formSubmissions.createdAt, after.createdAt), lt(formSubmissions.id, after.id)))
            : undefined,
        ),
      )
      .orderBy(desc(formSubmissions.createdAt), desc(formSubmissions.id))
      .limit(CSV_PAGE)
      .all();
    const last = rows.at(-1);
    return {
      rows: rows.map((row) => {
        const { fields, context } = unseal<SealedSubmission>(deps, row);
        return [
          row.createdAt,
          FORMS[row.formName as FormName]?.label ?? row.formName,
          ...columns.map((c) => fields[c.name] ?? ""),
          context.document_path ?? "",
          context.document_page === null ? "" : String(context.document_page),
          row.id,
        ];
      }),
      next: rows.length === CSV_PAGE && last ? { createdAt: last.createdAt, id: last.id } : null,
    };
  });
  return { bucketTitle: bucket.title, body };
}
