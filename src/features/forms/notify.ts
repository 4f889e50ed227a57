// Owner notifications: a periodic task mails each bucket's owner once for all submissions that
// arrived since the last run, so a burst of fifty posts is one mail, not fifty. The mail says
// how many arrived on which form and where to read them, never what visitors wrote: the outbox
// keeps mail in the clear, and submissions are sealed at rest for a reason.
import { and, inArray, isNull } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { formSubmissions } from "../../db/schema";
import { accountOwnerEmail } from "../accounts";
import { bucketMetadataOf } from "../buckets";
import { mailerFor } from "../mail";
import { FORMS, isFormName } from "./definitions";

export const FORMS_NOTIFY_JOB = "forms.notify";

/** Mail owners about submissions not yet announced; returns the number of mails sent. */
export async function notifyNewSubmissions(deps: Deps): Promise<number> {
  const pending = deps.db
    .select({ id: formSubmissions.id, bucketId: formSubmissions.bucketId, accountId: formSubmissions.accountId, formName: formSubmissions.formName })
    .from(formSubmissions)
    .where(and(isNull(formSubmissions.notifiedAt), isNull(formSubmissions.parentId)))
    .limit(10_000)
    .all();
  const byBucket = new Map<string, typeof pending>();
  for (const p of pending) byBucket.set(p.bucketId, [...(byBucket.get(p.bucketId) ?? []), p]);
  let sent = 0;
  for (const [bucketId, rows] of byBucket) {
    const bucket = bucketMetadataOf(deps, bucketId);
    const to = accountOwnerEmail(rows[0]!.accountId, deps.db);
    const ids = rows.map((r) => r.id);
    if (bucket && to) {
      const perForm = new Map<string, number>();
      for (const r of rows) perForm.set(r.formName, (perForm.get(r.formName) ?? 0) + 1);
      const lines = [...perForm].map(([name, n]) => `  ${n} × ${isFormName(name) ? FORMS[name].label : name}`);
      try {
        await mailerFor(deps).send({
          to,
          kind: "form-submissions",
          // The bucket title is the owner's own text; no visitor input reaches the mail.
          subject: `Pier: ${rows.length} new form submission${rows.length === 1 ? "" : "s"} on ${bucket.title.replace(/[\r\n]+/g, " ")}`,
          text:
            `New form submissions on your site "${bucket.title}":\n\n${lines.join("\n")}\n\n` +
            `Read them in the dashboard (${deps.urls.baseUrl}/dashboard/buckets/${bucketId}) or with ` +
            `GET ${deps.urls.baseUrl}/api/v1/buckets/${bucketId}/form_submissions.\n`,
        });
        sent++;
      } catch (e) {
        deps.log.warn("form notification mail could not be sent", { bucket_id: bucketId, error: (e as Error).message });
        continue; // left pending: the next run tries again
      }
    }
    deps.db.update(formSubmissions).set({ notifiedAt: deps.clock.now().toISOString() }).where(inArray(formSubmissions.id, ids)).run();
  }
  return sent;
}
