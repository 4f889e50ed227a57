// What the bucket settings tab shows: details, tags, variables and secrets (secret values are
// never read, so never rendered), the bucket lock and the visibility lock. A refused form is
// shown again with its message next to the field it is about and what was typed kept, except
// a secret's value, which is never sent back to the browser.
import type { ApiError } from "../../../core/errors";
import { alertBox, html, shortTime, type SafeHtml } from "../../../http/pages/layout";
import { activeLock, getBucket, getVariables, presentBucket, presentLock } from "../../buckets";
import type { Session, Shell } from "../shell";
import { BUCKETS_PATH } from "./buckets-home";

export const settingsUrl = (id: string, query = "") => `${BUCKETS_PATH}/${encodeURIComponent(id)}/settings${query}`;

/** Outcome notices after a redirect: fixed texts chosen by a code, never text from the URL. */
const DONE: Record<string, string> = {
  details: "Title and description saved.",
  metadata: "Metadata saved.",
  "tag-added": "Tag added.",
  "tag-removed": "Tag removed.",
  "variable-saved": "Variable saved.",
  "variable-replaced": "Variable replaced: that name was already set, and now holds the new value.",
  "secret-replaced": "Secret replaced: that name was already set, and now holds the new value (stored encrypted, never shown again).",
  "variable-deleted": "Variable deleted.",
  "secret-saved": "Secret saved. Its value is stored encrypted and is never shown again.",
  "secret-deleted": "Secret deleted.",
  locked: "Bucket locked: other credentials cannot change it until the lock ends or you remove it.",
  unlocked: "Bucket lock removed.",
  "not-locked": "You held no lock on this bucket.",
  "visibility-locked": "Visibility locked: publishing, unpublishing, access and slug changes are refused until you unlock it here.",
  "visibility-already-locked": "Visibility was already locked.",
  "visibility-unlocked": "Visibility unlocked.",
  "visibility-not-locked": "Visibility was not locked.",
};

/** The metadata as the editor shows it: indented JSON, keys in stored order. */
export const metadataText = (metadata: Record<string, unknown>) => JSON.stringify(metadata, null, 2);

/**
 * What the editor was opened on: a save is refused when the metadata changed since (another tab,
 * an agent, the Forms or Site tab writing their keys), instead of overwriting that change.
 */
export const metadataVersion = (metadata: Record<string, unknown>) =>
  new Bun.CryptoHasher("sha256").update(JSON.stringify(metadata)).digest("base64url").slice(0, 22);

/** A refused settings form: which form (so its own fields show the error) and what was typed. */
export interface SettingsRefusal {
  error: ApiError;
  form: string;
  typed: Record<string, string>;
}

const LOCK_DURATIONS = [
  { seconds: 300, label: "5 minutes" },
  { seconds: 600, label: "10 minutes" },
  { seconds: 1800, label: "30 minutes" },
  { seconds: 3600, label: "1 hour" },
];

function fieldOf(r: SettingsRefusal | undefined): string | undefined {
  return (r?.error.details as { field?: string } | undefined)?.field;
}

/** The fields each form shows a refusal under; any other refusal is shown at the top of the page. */
const FIELDS_SHOWN: Record<string, string[]> = {
  details: ["title", "description"],
  metadata: ["metadata"],
  "tag-add": ["tag"],
  "variable-add": ["name", "value"],
  lock: ["message", "duration_seconds"],
  visibility: ["reason"],
};

function shownAtField(r: SettingsRefusal): boolean {
  const field = fieldOf(r);
  const shown = r.form.startsWith("variable:") ? ["value"] : r.form.startsWith("secret:") ? ["value", "confirm"] : (FIELDS_SHOWN[r.form] ?? []);
  return field !== undefined && shown.includes(field);
}

/** The message under `field` of `form` when the refusal is about it. */
function errorAt(r: SettingsRefusal | undefined, form: string, field: string, id: string): { message: SafeHtml; attrs: SafeHtml } {
  if (!r || r.form !== form || fieldOf(r) !== field) return { message: html``, attrs: html`` };
  return { message: html`<span class="field-error" id="${id}">${r.error.message}</span>`, attrs: html` aria-invalid="true" aria-describedby="${id}"` };
}

const typedIn = (r: SettingsRefusal | undefined, form: string, name: string, fallback: string) => (r?.form === form ? (r.typed[name] ?? fallback) : fallback);

function csrfField(csrfToken: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${csrfToken}">`;
}

function tagsSection(id: string, tags: string[], csrf: string, r?: SettingsRefusal): SafeHtml {
  const list = tags.length
    ? html`<ul class="chips">${tags.map(
        (t) =>
          html`<li><span class="badge">${t}</span> <form method="post" action="${settingsUrl(id, "/tags/remove")}" class="inline">${csrfField(csrf)}<input type="hidden" name="tag" value="${t}"><button type="submit" class="link" aria-label="Remove the tag ${t}">Remove</button></form></li>`,
      )}</ul>`
    : html`<p class="muted">No tags yet.</p>`;
  const e = errorAt(r, "tag-add", "tag", "tag-error");
  return html`${list}<form method="post" action="${settingsUrl(id, "/tags/add")}" class="row">${csrfField(csrf)}
<div><label for="tag">New tag <span class="hint">Letters, digits, space, . _ / - (e.g. website).</span></label><input id="tag" name="tag" type="text" maxlength="100" value="${typedIn(r, "tag-add", "tag", "")}"${e.attrs}>${e.message}</div>
<div class="grow0"><button type="submit" class="secondary">Add tag</button></div></form>`;
}

function variablesSection(
  id: string,
  vars: Record<string, string>,
  secrets: { name: string; updated_at: string }[],
  csrf: string,
  r?: SettingsRefusal,
): SafeHtml {
  // A secret's value is never shown, so a deleted one cannot be typed again from the page: its
  // Delete needs a box ticked, checked on the server too (D297). A public variable's value is on
  // the page and can be written again, as a form reply can (D273).
  const del = (kind: string, name: string, confirm: SafeHtml = html``) =>
    html`<form method="post" action="${settingsUrl(id, "/variables/delete")}" class="inline">${csrfField(csrf)}<input type="hidden" name="kind" value="${kind}"><input type="hidden" name="name" value="${name}">${confirm}<button type="submit" class="danger" aria-label="Delete ${name}">Delete</button></form>`;
  const confirmBox = (name: string, i: number) => {
    const e = errorAt(r, `secret:${name}`, "confirm", `secret-${i}-confirm-error`);
    return html`<input type="hidden" name="form" value="secret:${name}"><label class="check"><input type="checkbox" name="confirm" required${e.attrs}> Delete<span class="skip"> ${name}</span> for good</label>${e.message}`;
  };
  const publicRows = Object.entries(vars).map(([name, value], i) => {
    const form = `variable:${name}`;
    const e = errorAt(r, form, "value", `var-${i}-error`);
    return html`<tr><th scope="row"><code>${name}</code></th><td><form method="post" action="${settingsUrl(id, "/variables/set")}" class="row">${csrfField(csrf)}<input type="hidden" name="kind" value="variable"><input type="hidden" name="name" value="${name}"><input type="hidden" name="form" value="${form}">
<div><label for="var-${i}" class="skip">Value of ${name}</label><input id="var-${i}" name="value" type="text" value="${typedIn(r, form, "value", value)}"${e.attrs}>${e.message}</div><div class="grow0"><button type="submit" class="secondary">Save</button></div></form></td><td>${del("variable", name)}</td></tr>`;
  });
  const secretRows = secrets.map((s, i) => {
    const form = `secret:${s.name}`;
    const e = errorAt(r, form, "value", `secret-${i}-error`);
    // The value input is always empty: a secret is write-only, even after a refused save.
    return html`<tr><th scope="row"><code>${s.name}</code><br><span class="badge">secret · set</span> <span class="small muted">${shortTime(s.updated_at)}</span></th><td><form method="post" action="${settingsUrl(id, "/variables/set")}" class="row">${csrfField(csrf)}<input type="hidden" name="kind" value="secret"><input type="hidden" name="name" value="${s.name}"><input type="hidden" name="form" value="${form}">
<div><label for="secret-${i}" class="skip">New value of ${s.name}</label><input id="secret-${i}" name="value" type="password" autocomplete="off" placeholder="Replace the value"${e.attrs}>${e.message}</div><div class="grow0"><button type="submit" class="secondary">Replace</button></div></form></td><td>${del("secret", s.name, confirmBox(s.name, i))}</td></tr>`;
  });
  const table =
    publicRows.length + secretRows.length
      ? html`<table id="variables-table"><caption class="skip">Variables and secrets</caption><thead><tr><th scope="col">Name</th><th scope="col">Value</th><th scope="col"><span class="skip">Delete</span></th></tr></thead><tbody>${publicRows}${secretRows}</tbody></table>`
      : html`<p class="muted">No variables or secrets yet.</p>`;
  const nameErr = errorAt(r, "variable-add", "name", "new-name-error");
  const valueErr = errorAt(r, "variable-add", "value", "new-value-error");
  const kind = typedIn(r, "variable-add", "kind", "variable");
  const radio = (value: string, label: string) =>
    html`<label class="check"><input type="radio" name="kind" value="${value}"${kind === value ? html` checked` : ""}> ${label}</label>`;
  // A refused new secret keeps its name, never its value.
  const typedValue = kind === "secret" ? "" : typedIn(r, "variable-add", "value", "");
  return html`${table}<h3 id="add-variable-h">Add a variable or secret</h3><form method="post" action="${settingsUrl(id, "/variables/set")}" aria-labelledby="add-variable-h">${csrfField(csrf)}<input type="hidden" name="form" value="variable-add">
<div class="row"><div><label for="new-name">Name <span class="hint">UPPER_CASE letters, digits and _; not starting with PIER_.</span></label><input id="new-name" name="name" type="text" maxlength="64" autocomplete="off" spellcheck="false" value="${typedIn(r, "variable-add", "name", "")}"${nameErr.attrs}>${nameErr.message}</div>
<div><label for="new-value">Value</label><input id="new-value" name="value" type="text" autocomplete="off" spellcheck="false" value="${typedValue}"${valueErr.attrs}>${valueErr.message}</div></div>
<fieldset><legend>Kind</legend>${radio("variable", "Public variable (shown here and to the API)")}${radio("secret", "Secret (write-only: stored encrypted, never shown again)")}</fieldset>
<p><button type="submit">Add</button></p></form>`;
}

function bucketLockSection(shell: Shell, s: Session, id: string, csrf: string, r?: SettingsRefusal): SafeHtml {
  const row = activeLock(shell.deps, id);
  const lock = row ? presentLock(shell.deps, s.actor, row) : null;
  const state = lock
    ? html`<p id="lock-state"><span class="badge warn">locked</span> “${lock.message}”, until ${shortTime(lock.expires_at)}${
        lock.held_by_you
          ? html` (held by you in this browser session).`
          : html` by another credential (${lock.holder_kind}); only its holder can remove it before then.`
      }</p>`
    : html`<p id="lock-state" class="muted">Not locked.</p>`;
  const remove = lock?.held_by_you
    ? html`<form method="post" action="${settingsUrl(id, "/lock/remove")}">${csrfField(csrf)}<p><button type="submit" class="secondary">Remove the lock</button></p></form>`
    : html``;
  const msgErr = errorAt(r, "lock", "message", "lock-message-error");
  const durErr = errorAt(r, "lock", "duration_seconds", "lock-duration-error");
  const chosen = typedIn(r, "lock", "duration_seconds", "600");
  const options = LOCK_DURATIONS.map((d) =>
    String(d.seconds) === chosen ? html`<option value="${d.seconds}" selected>${d.label}</option>` : html`<option value="${d.seconds}">${d.label}</option>`,
  );
  const take =
    !lock || lock.held_by_you
      ? html`<form method="post" action="${settingsUrl(id, "/lock")}">${csrfField(csrf)}<div class="row">
<div><label for="lock-message">Message <span class="hint">Shown to whoever hits the lock.</span></label><input id="lock-message" name="message" type="text" maxlength="500" value="${typedIn(r, "lock", "message", "")}"${msgErr.attrs}>${msgErr.message}</div>
<div><label for="lock-duration">For</label><select id="lock-duration" name="duration_seconds"${durErr.attrs}>${options}</select>${durErr.message}</div></div>
<p><button type="submit" class="secondary">${lock ? "Renew the lock" : "Lock the bucket"}</button></p></form>`
      : html``;
  return html`${state}${remove}${take}`;
}

function visibilitySection(id: string, v: ReturnType<typeof presentBucket>["visibility_change_lock"], csrf: string, r?: SettingsRefusal): SafeHtml {
  if (v.locked) {
    return html`<p id="visibility-state"><span class="badge warn">locked</span> since ${shortTime(v.locked_at ?? null)}${v.reason ? html`: “${v.reason}”` : ""}.</p>
<p>Publishing, unpublishing, access-mode and slug changes are refused (by the API too) until it is unlocked. Only a person signed in here can unlock it.</p>
<form method="post" action="${settingsUrl(id, "/visibility/unlock")}">${csrfField(csrf)}<p><button type="submit">Unlock visibility</button></p></form>`;
  }
  const e = errorAt(r, "visibility", "reason", "visibility-reason-error");
  return html`<p id="visibility-state" class="muted">Not locked.</p>
<p>Freeze who can see the site: while locked, publishing, unpublishing, access-mode and slug changes are refused. Agents can lock it through the API, but only you can unlock it, here.</p>
<form method="post" action="${settingsUrl(id, "/visibility/lock")}">${csrfField(csrf)}
<label for="visibility-reason">Reason <span class="hint">Optional, at most 500 characters.</span></label><input id="visibility-reason" name="reason" type="text" maxlength="500" value="${typedIn(r, "visibility", "reason", "")}"${e.attrs}>${e.message}
<p><button type="submit" class="secondary">Lock visibility</button></p></form>`;
}

export async function settingsView(shell: Shell, s: Session, id: string, query: Record<string, string | undefined>, r?: SettingsRefusal) {
  const bucket = getBucket(shell.deps, s.actor, id);
  const p = presentBucket(shell.deps, bucket);
  const { variables, secrets } = getVariables(shell.deps, s.actor, bucket.id);
  const notice = r && !shownAtField(r) ? alertBox(r.error.message) : alertBox(DONE[query.done ?? ""], "ok");
  const titleErr = errorAt(r, "details", "title", "title-error");
  const descErr = errorAt(r, "details", "description", "description-error");
  const metaErr = errorAt(r, "metadata", "metadata", "metadata-error");
  const conflict = r?.form === "metadata" && r.error.code === "CONFLICT";
  return shell.render(s, {
    title: `Settings · ${bucket.title}`,
    template: "dashboard/bucket-settings.html",
    current: BUCKETS_PATH,
    error: r?.error,
    vars: (csrf: string) => ({
      notice,
      tabs: shell.bucketTabs(bucket.id, "settings"),
      id: bucket.id,
      title: bucket.title,
      archived: p.archived,
      deleting: "lock" in p && p.lock?.kind === "bucket_delete",
      typedTitle: typedIn(r, "details", "title", bucket.title),
      typedDescription: typedIn(r, "details", "description", bucket.description),
      titleError: titleErr.message,
      titleInvalid: titleErr.attrs,
      descriptionError: descErr.message,
      descriptionInvalid: descErr.attrs,
      typedMetadata: typedIn(r, "metadata", "metadata", metadataText(bucket.metadata)),
      // After a conflict the editor keeps the edit and stands on the version stored now, shown
      // beside it: saving again is a choice made knowing what it replaces.
      metadataSeen: conflict ? metadataVersion(bucket.metadata) : typedIn(r, "metadata", "seen", metadataVersion(bucket.metadata)),
      metadataStored: conflict
        ? html`<details open><summary>Stored now (saving again replaces it with the edit above)</summary><pre class="wrap">${metadataText(bucket.metadata)}</pre></details>`
        : html``,
      metadataError: metaErr.message,
      metadataInvalid: metaErr.attrs,
      tags: tagsSection(bucket.id, bucket.tagPaths, csrf, r),
      variables: variablesSection(bucket.id, variables, secrets, csrf, r),
      bucketLock: bucketLockSection(shell, s, bucket.id, csrf, r),
      visibility: visibilitySection(bucket.id, p.visibility_change_lock, csrf, r),
    }),
  });
}
