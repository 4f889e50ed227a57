// A bucket's Forms tab (/dashboard/buckets/<id>/forms): which built-in forms the site offers
// and how (saved as bucket.metadata.publication_forms through updateBucket, checked by the same
// rule as a REST PATCH), the submissions newest first (paged, filtered by form), and one
// submission with its context and replies: reply (team or public), delete a reply or the whole.
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { csvHeaders } from "../../../http/content-disposition";
import { alertBox, html, shortTime, type SafeHtml } from "../../../http/pages/layout";
import { UNLIMITED } from "../../accounts";
import { getBucket, updateBucket } from "../../buckets";
import {
  deleteSubmission,
  FORMS,
  FORM_NAMES,
  getSubmission,
  listSubmissions,
  parseFormsConfig,
  patchSubmission,
  replyToSubmission,
  submissionsCsv,
  WIDGET_POSITIONS,
  type FormName,
  type FormsConfig,
} from "../../forms";
import { fieldError, formList, invalidAttrs, requireConfirmed } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { BUCKETS_PATH } from "./buckets-home";

const PAGE = 25;
const formsUrl = (id: string, rest = "") => `${BUCKETS_PATH}/${encodeURIComponent(id)}/forms${rest}`;

const DONE: Record<string, string> = {
  saved: "The form settings are saved. Site pages show them within a few seconds.",
  replied: "Your reply is saved.",
  deleted: "The submission and its replies are deleted.",
  "reply-deleted": "The reply is deleted.",
  corrected: "The corrected values are saved.",
};

/** The stored configuration as the page shows it (a bucket without one: nothing offered yet). */
function currentConfig(metadata: unknown): FormsConfig | null {
  const raw = metadata && typeof metadata === "object" ? (metadata as Record<string, unknown>).publication_forms : undefined;
  if (raw === undefined) return null;
  try {
    return parseFormsConfig(raw);
  } catch {
    return null;
  }
}

/** The configuration the posted form describes, in the API's shape (checked by updateBucket). */
function configFromForm(body: unknown): Record<string, unknown> {
  const offered = new Set(formList(body, "forms"));
  const forms = FORM_NAMES.filter((n) => offered.has(n)).map((name) => ({
    name,
    hosted: formField(body, `hosted_${name}`) === "on",
    required_fields: formList(body, `required_${name}`),
    widget_position: { desktop: formField(body, `desktop_${name}`) || "bottom-right", mobile: formField(body, `mobile_${name}`) || "bottom-right" },
  }));
  return { enabled: formField(body, "enabled") === "on", forms, turnstile: formField(body, "turnstile") === "auto" ? "auto" : "off" };
}

function positionSelect(id: string, name: string, label: string, value: string): SafeHtml {
  return html`<label for="${id}">${label}</label><select id="${id}" name="${name}">${WIDGET_POSITIONS.map(
    (p) => html`<option value="${p}"${p === value ? html` selected` : ""}>${p}</option>`,
  )}</select>`;
}

function settingsForm(id: string, csrf: string, config: FormsConfig | null, error?: ApiError): SafeHtml {
  const rows = FORM_NAMES.map((name) => {
    const def = FORMS[name];
    const f = config?.forms.get(name);
    const required = f?.requiredFields ?? def.defaultRequired;
    const fields = def.fields.map(
      (field) =>
        html`<label class="inline"><input type="checkbox" name="required_${name}" value="${field.name}"${required.includes(field.name) ? html` checked` : ""}> ${field.label}</label>`,
    );
    return html`<fieldset class="form-choice"><legend>${def.label} <code>${name}</code></legend>
<label class="inline"><input type="checkbox" name="forms" value="${name}"${f ? html` checked` : ""}> Offer this form</label>
<label class="inline"><input type="checkbox" name="hosted_${name}"${!f || f.hosted ? html` checked` : ""}> Hosted (Pier renders it on the site's pages)</label>
<p class="small muted">Required fields:</p><div>${fields}</div>
<div class="positions">${positionSelect(`desktop-${name}`, `desktop_${name}`, "Position on wide screens", f?.position.desktop ?? "bottom-right")}
${positionSelect(`mobile-${name}`, `mobile_${name}`, "Position on phones", f?.position.mobile ?? "bottom-right")}</div>
${name === "comments" ? html`<p class="small muted">Shown to the site's other visitors; works only on password or require_email sites.</p>` : ""}</fieldset>`;
  });
  const enabled = config ? config.enabled : true;
  return html`<form method="post" action="${formsUrl(id, "/settings")}"><input type="hidden" name="csrf" value="${csrf}">
<label class="inline"><input type="checkbox" name="enabled"${enabled ? html` checked` : ""}> Forms are on (untick to turn every form off)</label>
${fieldError(error, "settings", "settings-error")}
${rows}
<label for="turnstile">Cloudflare Turnstile</label><select id="turnstile" name="turnstile"${invalidAttrs(error, "settings", "settings-error")}>
<option value="off"${config?.turnstile !== "auto" ? html` selected` : ""}>off</option><option value="auto"${config?.turnstile === "auto" ? html` selected` : ""}>auto (when the operator configured its keys)</option></select>
<p><button type="submit">Save form settings</button></p></form>`;
}

const selectionText = (
  sel: { type: string; coordinates: number[]; coordinate_space: { width: number; height: number; unit: string }; color?: string } | null,
) =>
  sel
    ? `${sel.type} [${sel.coordinates.join(", ")}] in ${sel.coordinate_space.width} × ${sel.coordinate_space.height} ${sel.coordinate_space.unit}${sel.color ? `, ${sel.color}` : ""}`
    : "none";

async function listView(shell: Shell, s: Session, id: string, query: Record<string, string | undefined>, error?: ApiError) {
  const bucket = getBucket(shell.deps, s.actor, id);
  const config = currentConfig(bucket.metadata);
  const offset = Math.max(0, Number.parseInt(query.offset ?? "0", 10) || 0);
  const formName = query.form && (FORM_NAMES as readonly string[]).includes(query.form) ? (query.form as FormName) : undefined;
  const { form_submissions, pagination, quota } = listSubmissions(shell.deps, s.actor, bucket.id, { limit: PAGE, offset, form_name: formName });
  const rows = form_submissions.map((sub) => {
    const first = Object.values(sub.fields)[0] ?? "";
    const summary = first.length > 80 ? `${first.slice(0, 80)}…` : first;
    return html`<tr><td>${FORMS[sub.form_name as FormName]?.label ?? sub.form_name}</td><td class="wrap"><a href="${formsUrl(bucket.id, `/${sub.id}`)}">${summary || "(empty)"}</a></td>
<td class="wrap small">${sub.context.document_path ?? ""}</td><td class="small">${sub.replies.length}</td><td class="small">${shortTime(sub.created_at)}</td></tr>`;
  });
  const filter = formName ? `&form=${formName}` : "";
  const link = (o: number) => formsUrl(bucket.id, `?offset=${o}${filter}#submissions`);
  const prev = offset > 0 ? html`<a href="${link(Math.max(0, offset - PAGE))}">← Newer</a>` : html`<span></span>`;
  const next = pagination.next_offset !== null ? html`<a href="${link(pagination.next_offset)}">Older →</a>` : html``;
  const list = form_submissions.length
    ? html`<table><caption class="skip">Form submissions, newest first</caption><thead><tr><th scope="col">Form</th><th scope="col">Submission</th><th scope="col">Page</th><th scope="col">Replies</th><th scope="col">Received</th></tr></thead><tbody>${rows}</tbody></table>
<div class="pager small"><span class="muted">${pagination.total_count.toLocaleString("en")} submission(s)</span></div><div class="pager">${prev}${next}</div>`
    : html`<p class="muted">No submissions${formName ? " on this form" : ""} yet.</p>`;
  const filterForm = html`<form method="get" action="${formsUrl(bucket.id)}" class="row"><label for="form-filter">Form</label>
<select id="form-filter" name="form"><option value="">All forms</option>${FORM_NAMES.map(
    (n) => html`<option value="${n}"${n === formName ? html` selected` : ""}>${FORMS[n].label}</option>`,
  )}</select> <button type="submit" class="secondary">Show</button>${
    pagination.total_count > 0
      ? html` <a id="submissions-csv" href="${formsUrl(bucket.id, `/submissions.csv${formName ? `?form=${formName}` : ""}`)}" download>Download ${formName ? "these" : "all"} as CSV</a>`
      : html``
  }</form>`;
  return shell.render(s, {
    title: `Forms · ${bucket.title}`,
    template: "dashboard/forms.html",
    current: BUCKETS_PATH,
    error,
    vars: {
      notice: error ? alertBox(error.message) : alertBox(DONE[query.done ?? ""], "ok"),
      tabs: shell.bucketTabs(bucket.id, "forms"),
      id: bucket.id,
      title: bucket.title,
      settings: settingsForm(bucket.id, shell.formToken(s), config, error),
      filter: filterForm,
      macro: "{{PIER_FORM:contact}}",
      submissions: list,
      quota: quotaLine(quota),
    },
  });
}

/** The month's use; the plans' "no limit" is a huge number, said in words as the Account page does. */
function quotaLine(q: { used_this_month: number; form_submission_quota: number; period_start: string }): string {
  const used = q.used_this_month.toLocaleString("en");
  const since = shortTime(q.period_start);
  if (q.form_submission_quota >= UNLIMITED) return `${used} submissions this month (no limit; since ${since}).`;
  return `${used} of ${q.form_submission_quota.toLocaleString("en")} submissions used this month (since ${since}).`;
}

/** The correction form's fields are named `field:<stored name>`, so any stored name round-trips. */
const FIELD_PREFIX = "field:";
function typedFields(body: unknown): Record<string, string> {
  const all = body && typeof body === "object" ? (body as Record<string, unknown>) : {};
  return Object.fromEntries(
    Object.entries(all)
      .filter(([k, v]) => k.startsWith(FIELD_PREFIX) && typeof v === "string")
      .map(([k, v]) => [k.slice(FIELD_PREFIX.length), v as string]),
  );
}

/**
 * Correct the stored values (the REST PATCH of a submission): one box per stored field, so the
 * form cannot add a field, and the service refuses one it does not know, as it does for the API.
 */
function correctionForm(
  shell: Shell,
  s: Session,
  bucketId: string,
  sub: { id: string; fields: Record<string, unknown> },
  def: (typeof FORMS)[FormName] | undefined,
  error?: ApiError,
  typed?: Record<string, string>,
): SafeHtml {
  const boxes = Object.entries(sub.fields).map(([k, v], i) => {
    const id = `fix-${i}`;
    const value = typed?.[k] ?? (typeof v === "string" ? v : JSON.stringify(v));
    return html`<label for="${id}">${def?.fields.find((f) => f.name === k)?.label ?? k}</label>
<textarea id="${id}" name="${FIELD_PREFIX}${k}" rows="2"${invalidAttrs(error, `fields.${k}`, `${id}-error`)}>${value}</textarea>${fieldError(error, `fields.${k}`, `${id}-error`)}`;
  });
  if (!boxes.length) return html`<p class="muted">This submission has no stored fields.</p>`;
  return html`<form method="post" action="${formsUrl(bucketId, `/${sub.id}/fields`)}"><input type="hidden" name="csrf" value="${shell.formToken(s)}">${boxes}
<p><button type="submit" class="secondary">Save the corrections</button></p></form>`;
}

async function submissionView(
  shell: Shell,
  s: Session,
  id: string,
  sid: string,
  query: Record<string, string | undefined>,
  error?: ApiError,
  typed?: string,
  typedFix?: Record<string, string>,
) {
  const bucket = getBucket(shell.deps, s.actor, id);
  const { form_submission: sub } = getSubmission(shell.deps, s.actor, bucket.id, sid);
  const def = FORMS[sub.form_name as FormName];
  const fields = Object.entries(sub.fields).map(([k, v]) => html`<dt>${def?.fields.find((f) => f.name === k)?.label ?? k}</dt><dd class="wrap pre">${v}</dd>`);
  const deleteButton = (target: string, label: string, confirm?: SafeHtml) =>
    html`<form method="post" action="${formsUrl(bucket.id, `/${target}/delete`)}" class="inline"><input type="hidden" name="csrf" value="${shell.formToken(s)}">${confirm ?? ""}<button type="submit" class="danger">${label}</button></form>`;
  // The visitor's submission cannot be brought back (no version, no trash): a box to tick first, checked on the server too (D273).
  const confirmBox = html`<label class="check"><input type="checkbox" name="confirm" required${invalidAttrs(error, "confirm", "confirm-error")}> Delete this submission and its replies for good</label>${fieldError(error, "confirm", "confirm-error")}`;
  const replies = sub.replies.map(
    (r) =>
      html`<li><p class="small muted">${r.audience === "public" ? "Public reply" : "Team reply"} · ${shortTime(r.created_at)}</p><p class="wrap pre">${r.message}</p>${deleteButton(r.id, "Delete this reply")}</li>`,
  );
  const sel = sub.context.document_selection as Parameters<typeof selectionText>[0];
  // A refusal shown next to its field is not repeated at the top of the page.
  const field = (error?.details as { field?: string } | undefined)?.field ?? "";
  const byItsField = ["message", "audience", "confirm"].includes(field) || (field.startsWith("fields.") && field.slice(7) in sub.fields);
  return shell.render(s, {
    title: `${def?.label ?? sub.form_name} submission · ${bucket.title}`,
    template: "dashboard/form-submission.html",
    current: BUCKETS_PATH,
    error,
    vars: {
      notice: error ? (byItsField ? html`` : alertBox(error.message)) : alertBox(DONE[query.done ?? ""], "ok"),
      tabs: shell.bucketTabs(bucket.id, "forms"),
      id: bucket.id,
      title: bucket.title,
      back: formsUrl(bucket.id),
      form: def?.label ?? sub.form_name,
      received: shortTime(sub.created_at),
      fields: html`<dl class="facts">${fields}</dl>`,
      path: sub.context.document_path ?? "unknown",
      page: sub.context.document_page === null ? "none" : String(sub.context.document_page),
      selection: selectionText(sel),
      replies: replies.length ? html`<ol class="replies">${replies}</ol>` : html`<p class="muted">No replies yet.</p>`,
      replyAction: formsUrl(bucket.id, `/${sub.id}/reply`),
      typed: typed ?? "",
      messageError: fieldError(error, "message", "message-error"),
      messageInvalid: invalidAttrs(error, "message", "message-error"),
      audienceError: fieldError(error, "audience", "audience-error"),
      publicAllowed: sub.form_name === "comments",
      deleteAll: deleteButton(sub.id, "Delete the submission and its replies", confirmBox),
      correction: correctionForm(shell, s, bucket.id, sub, def, error, typedFix),
    },
  });
}

const refusedOrMissing = (shell: Shell, s: Session, error: ApiError) =>
  error.code === "BUCKET_NOT_FOUND" || error.code === "FORBIDDEN" || error.code === "FORM_SUBMISSION_NOT_FOUND"
    ? shell.notFound(s, error.code === "BUCKET_NOT_FOUND" ? error : undefined)
    : null;

export const formsPage: DashboardPage = {
  bucketTab: { label: "Forms", path: "forms" },
  routes: (app, shell) =>
    app
      .get(
        `${BUCKETS_PATH}/:id/forms`,
        shell.view((s, { params, query }) => listView(shell, s, params.id!, query)),
        { detail: { hide: true } },
      )
      .post(
        `${BUCKETS_PATH}/:id/forms/settings`,
        shell.action(
          (s, { params, body }) => {
            const bucket = getBucket(shell.deps, s.actor, params.id!);
            // The rest of the metadata stays as it is: only publication_forms changes.
            updateBucket(shell.deps, s.actor, bucket.id, {
              metadata: { ...(bucket.metadata as Record<string, unknown>), publication_forms: configFromForm(body) },
            });
            return formsUrl(bucket.id, "?done=saved");
          },
          (s, error, { params }) =>
            refusedOrMissing(shell, s, error) ??
            listView(shell, s, params.id!, {}, new ApiError(error.code, error.message, { ...(error.details as object), field: "settings" })),
        ),
        { detail: { hide: true } },
      )
      // Before /forms/:sid: the file's name is not a submission id.
      .get(
        `${BUCKETS_PATH}/:id/forms/submissions.csv`,
        shell.view((s, { params, query }) => {
          try {
            const csv = submissionsCsv(shell.deps, s.actor, params.id!, { form_name: query.form });
            const day = shell.deps.clock.now().toISOString().slice(0, 10);
            return new Response(csv.body, { headers: csvHeaders(`${csv.bucketTitle} ${query.form || "forms"} ${day}.csv`) });
          } catch (e) {
            if (e instanceof ApiError && e.code === "VALIDATION_FAILED") return listView(shell, s, params.id!, {}, e);
            throw e;
          }
        }),
        { detail: { hide: true } },
      )
      .get(
        `${BUCKETS_PATH}/:id/forms/:sid`,
        shell.view((s, { params, query }) => submissionView(shell, s, params.id!, params.sid!, query)),
        { detail: { hide: true } },
      )
      .post(
        `${BUCKETS_PATH}/:id/forms/:sid/reply`,
        shell.action(
          (s, { params, body }) => {
            const audience = formField(body, "audience") === "public" ? "public" : "team";
            const { form_submission } = replyToSubmission(shell.deps, s.actor, params.id!, params.sid!, { message: formField(body, "message"), audience });
            return formsUrl(params.id!, `/${form_submission.id}?done=replied`);
          },
          (s, error, { params, body }) =>
            refusedOrMissing(shell, s, error) ?? submissionView(shell, s, params.id!, params.sid!, {}, error, formField(body, "message")),
        ),
        { detail: { hide: true } },
      )
      .post(
        `${BUCKETS_PATH}/:id/forms/:sid/fields`,
        shell.action(
          (s, { params, body }) => {
            const { form_submission } = patchSubmission(shell.deps, s.actor, params.id!, params.sid!, { fields: typedFields(body) });
            return formsUrl(params.id!, `/${form_submission.id}?done=corrected`);
          },
          (s, error, { params, body }) =>
            refusedOrMissing(shell, s, error) ?? submissionView(shell, s, params.id!, params.sid!, {}, error, undefined, typedFields(body)),
        ),
        { detail: { hide: true } },
      )
      .post(
        `${BUCKETS_PATH}/:id/forms/:sid/delete`,
        shell.action(
          (s, { params, body }) => {
            // A reply's page is its root's: after deleting a reply, go back there.
            const { form_submission } = getSubmission(shell.deps, s.actor, params.id!, params.sid!);
            // A whole submission goes only with its box ticked (D273); a reply is the team's own words.
            if (form_submission.id === params.sid) requireConfirmed(body, "a deleted submission cannot be brought back.");
            deleteSubmission(shell.deps, s.actor, params.id!, params.sid!);
            return form_submission.id === params.sid
              ? formsUrl(params.id!, "?done=deleted")
              : formsUrl(params.id!, `/${form_submission.id}?done=reply-deleted`);
          },
          (s, error, { params }) =>
            refusedOrMissing(shell, s, error) ??
            // A delete left unconfirmed shows the submission again, the message next to its box.
            ((error.details as { field?: string } | undefined)?.field === "confirm"
              ? submissionView(shell, s, params.id!, params.sid!, {}, error)
              : listView(shell, s, params.id!, {}, error)),
        ),
        { detail: { hide: true } },
      ) as unknown as Elysia,
};
