// Owner notifications: a periodic task mails each bucket's owner once for all submissions that
// arrived since the last run, so a burst of fifty posts is one mail, not fifty. The mail says
// how many arrived on which form and where to read them, never what visitors wrote: the outbox
// keeps mail in the clear, and submissions are sealed at rest for a reason.
import type { Deps } from "../../core/context";
import { accountOwnerEmail } from "../accounts";
import { bucketMetadataOf } from "../buckets";
import { mailerFor, quotedForMail } from "../mail";
import { FORMS, isFormName } from "./definitions";

export const FORMS_NOTIFY_JOB = "forms.notify";

/**
 * Submissions not yet announced, counted per bucket and form by SQLite: a few rows whatever the
 * backlog. `last` bounds what the mail announced (a new row's rowid is above every row there is),
 * so a submission stored while the mail is being sent stays for the next run.
 */
const PENDING =
  "SELECT bucket_id AS bucketId, account_id AS accountId, form_name AS formName, count(*) AS n, max(rowid) AS last " +
  "FROM form_submissions WHERE notified_at IS NULL AND parent_id IS NULL GROUP BY bucket_id, account_id, form_name";
const MARK = "UPDATE form_submissions SET notified_at = ? WHERE bucket_id = ? AND notified_at IS NULL AND parent_id IS NULL AND rowid <= ?";

/**
 * Mail owners about submissions not yet announced; returns the number of mails sent. Every
 * bucket with news is looked at each run: a bucket whose mail keeps failing (a refused address)
 * stays pending without holding back anyone else's.
 */
export async function notifyNewSubmissions(deps: Deps): Promise<number> {
  const pending = deps.sqlite.query(PENDING).all() as { bucketId: string; accountId: string; formName: string; n: number; last: number }[];
  const byBucket = new Map<string, typeof pending>();
  for (const p of pending) {
    const rows = byBucket.get(p.bucketId);
    if (rows) rows.push(p);
    else byBucket.set(p.bucketId, [p]);
  }
  let sent = 0;
  for (const [bucketId, perForm] of byBucket) {
    const bucket = bucketMetadataOf(deps, bucketId);
    const to = accountOwnerEmail(perForm[0]!.accountId, deps.db);
    const total = perForm.reduce((sum, f) => sum + f.n, 0);
    const last = Math.max(...perForm.map((f) => f.last));
    if (bucket && to) {
      // The bucket title is the owner's (or a teammate's) text, no visitor's, but it is still typed
      // text in a mail Pier sends: no control, bidi or invisible characters, no line breaks, quoted.
      const title = quotedForMail(bucket.title);
      const lines = perForm.map((f) => `  ${f.n} × ${isFormName(f.formName) ? FORMS[f.formName].label : f.formName}`);
      try {
        await mailerFor(deps).send({
          to,
          kind: "form-submissions",
          // No visitor input reaches the mail.
          subject: `Pier: ${total} new form submission${total === 1 ? "" : "s"} on ${title}`,
          text:
            `New form submissions on your site ${title}:\n\n${lines.join("\n")}\n\n` +
            `Read them in the dashboard (${deps.urls.baseUrl}/dashboard/buckets/${bucketId}) or with ` +
            `GET ${deps.urls.baseUrl}/api/v1/buckets/${bucketId}/form_submissions.\n`,
        });
        sent++;
      } catch (e) {
        deps.log.warn("form notification mail could not be sent", { bucket_id: bucketId, error: (e as Error).message });
        continue; // left pending: the next run tries again
      }
    }
    deps.sqlite.query(MARK).run(deps.clock.now().toISOString(), bucketId, last);
  }
  return sent;
}
