// The bucket settings tab (/dashboard/buckets/<id>/settings, the visibility lock's unlock_url):
// title and description, free-form metadata (JSON), tags, variables and secrets, the bucket lock
// and the visibility lock.
// Every form calls the buckets service the REST routes call; unlocking visibility is the one
// action with no REST route (a person lifts it here, as the spec says).
import { t, type Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import {
  BucketPatch,
  getBucket,
  getVariables,
  LockBody,
  lockBucket,
  lockVisibility,
  mergeVariables,
  TagPath,
  unlockBucket,
  unlockVisibility,
  updateBucket,
  VisibilityLockBody,
} from "../../buckets";
import { requireSudo } from "../../accounts";
import { sudoOr } from "./account-common";
import { checkForm, requireConfirmed } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { BUCKETS_PATH } from "./buckets-home";
import { metadataVersion, settingsUrl, settingsView, type SettingsRefusal } from "./bucket-settings-view";

const TagForm = t.Object({ tag: TagPath });
/** The editor's text: within the route's 1 MiB body limit once URL-encoded (http/body-limit.ts). */
const METADATA_MAX_CHARS = 100_000;

/** Run `fn`; a validation refusal it throws is reported next to `field` of the form. */
function onField<T>(field: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ApiError && e.code === "VALIDATION_FAILED") throw new ApiError(e.code, e.message, { ...(e.details as object), field });
    throw e;
  }
}

/** The variables service names its refusals by list ("variables"/"secrets"); the form has name and value. */
function variableField<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== "VALIDATION_FAILED") throw e;
    const d = (e.details ?? {}) as Record<string, unknown>;
    const aboutValue = d.max_bytes !== undefined || /NUL/.test(e.message);
    const field = d.max !== undefined ? undefined : aboutValue ? "value" : "name";
    throw new ApiError(e.code, e.message, { ...d, field });
  }
}

function typedFields(body: unknown): Record<string, string> {
  const typed: Record<string, string> = {};
  if (!body || typeof body !== "object") return typed;
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) if (typeof v === "string" && k !== "csrf") typed[k] = v;
  // A secret's value is write-only: a refused save does not send it back to the page.
  if (typed.kind === "secret") delete typed.value;
  return typed;
}

function refusedOnSettings(shell: Shell, s: Session, id: string, r: SettingsRefusal) {
  return sudoOr(s, r.error, settingsUrl(id, "#visibility"), async () => {
    if (r.error.code === "BUCKET_NOT_FOUND" || r.error.code === "FORBIDDEN")
      return shell.notFound(s, r.error.code === "BUCKET_NOT_FOUND" ? r.error : undefined);
    try {
      return await settingsView(shell, s, id, {}, r);
    } catch (e) {
      if (e instanceof ApiError && e.code === "BUCKET_NOT_FOUND") return shell.notFound(s, e);
      throw e;
    }
  });
}

// One name at a time, merged into what is there in one transaction: two tabs editing different
// names keep both changes.
function setVariable(shell: Shell, s: Session, id: string, body: unknown): string {
  const kind = formField(body, "kind") === "secret" ? "secret" : "variable";
  const name = formField(body, "name").trim();
  const value = formField(body, "value");
  // "Add" with a name already there replaces its value: the page says so rather than "saved"
  // (a row's own Save form changes its value on purpose).
  const before = formField(body, "form") === "variable-add" ? getVariables(shell.deps, s.actor, id) : null;
  const existed = before !== null && (kind === "secret" ? before.secrets.some((x) => x.name === name) : Object.hasOwn(before.variables, name));
  variableField(() => mergeVariables(shell.deps, s.actor, id, kind === "secret" ? { secrets: { [name]: value } } : { variables: { [name]: value } }));
  return settingsUrl(id, `?done=${kind}-${existed ? "replaced" : "saved"}#variables`);
}

function deleteVariable(shell: Shell, s: Session, id: string, body: unknown): string {
  const kind = formField(body, "kind") === "secret" ? "secret" : "variable";
  const name = formField(body, "name");
  // A secret goes only with its box ticked (D297): its value was never shown, so it cannot be put back.
  if (kind === "secret") requireConfirmed(body, "a deleted secret's value cannot be shown or brought back.");
  mergeVariables(shell.deps, s.actor, id, kind === "secret" ? { secrets: { [name]: null } } : { variables: { [name]: null } });
  return settingsUrl(id, `?done=${kind}-deleted#variables`);
}

export const bucketSettingsPage: DashboardPage = {
  bucketTab: { label: "Settings", path: "settings" },
  routes: (app, shell) => {
    const post = (suffix: string, form: string, run: (s: Session, id: string, body: unknown, request: Request) => string) =>
      app.post(
        `${BUCKETS_PATH}/:id/settings/${suffix}`,
        shell.action(
          (s, { params, body, request }) => run(s, params.id!, body, request),
          (s, error, { params, body }) => refusedOnSettings(shell, s, params.id!, { error, form: formField(body, "form") || form, typed: typedFields(body) }),
        ),
        { detail: { hide: true } },
      );

    post("details", "details", (s, id, body) => {
      const patch = checkForm<{ title: string; description: string }>(
        BucketPatch,
        { title: formField(body, "title").trim(), description: formField(body, "description") },
        { title: "Give the bucket a title (1 to 200 characters).", description: "A description is at most 5,000 characters." },
      );
      updateBucket(shell.deps, s.actor, id, patch);
      return settingsUrl(id, "?done=details");
    });
    post("metadata", "metadata", (s, id, body) => {
      const text = formField(body, "metadata");
      if (text.length > METADATA_MAX_CHARS)
        throw new ApiError("VALIDATION_FAILED", `Metadata is at most ${METADATA_MAX_CHARS.toLocaleString("en")} characters here.`, { field: "metadata" });
      let parsed: unknown;
      try {
        parsed = JSON.parse(text.trim() === "" ? "{}" : text);
      } catch (e) {
        throw new ApiError("VALIDATION_FAILED", `Metadata must be a JSON object: ${(e as Error).message}`, { field: "metadata" });
      }
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
        throw new ApiError("VALIDATION_FAILED", "Metadata must be a JSON object ({ ... }), not a list or a single value.", { field: "metadata" });
      if (metadataVersion(getBucket(shell.deps, s.actor, id).metadata) !== formField(body, "seen"))
        throw new ApiError(
          "CONFLICT",
          "The metadata changed since this page was opened; what is stored now is shown below your edit. Save again to replace it with your edit.",
          { field: "metadata" },
        );
      const patch = checkForm<{ metadata: Record<string, unknown> }>(
        BucketPatch,
        { metadata: parsed },
        { metadata: "Metadata keys are at most 100 characters." },
      );
      onField("metadata", () => updateBucket(shell.deps, s.actor, id, patch)); // a key's own rule (publication_forms, ...)
      return settingsUrl(id, "?done=metadata#metadata");
    });
    post("tags/add", "tag-add", (s, id, body) => {
      const { tag } = checkForm<{ tag: string }>(
        TagForm,
        { tag: formField(body, "tag").trim() },
        {
          tag: "A tag starts with a letter or digit and holds letters, digits, space, . _ / - (at most 100).",
        },
      );
      const current = getBucket(shell.deps, s.actor, id).tagPaths;
      if (!current.includes(tag)) {
        const patch = onField("tag", () =>
          checkForm<{ tag_paths: string[] }>(BucketPatch, { tag_paths: [...current, tag] }, { tag_paths: "A bucket has at most 50 tags." }),
        );
        updateBucket(shell.deps, s.actor, id, patch);
      }
      return settingsUrl(id, "?done=tag-added#tags");
    });
    post("tags/remove", "tag-remove", (s, id, body) => {
      const tag = formField(body, "tag");
      const current = getBucket(shell.deps, s.actor, id).tagPaths;
      if (current.includes(tag)) updateBucket(shell.deps, s.actor, id, { tag_paths: current.filter((x) => x !== tag) });
      return settingsUrl(id, "?done=tag-removed#tags");
    });
    post("variables/set", "variable-add", (s, id, body) => setVariable(shell, s, id, body));
    post("variables/delete", "variable-delete", (s, id, body) => deleteVariable(shell, s, id, body));
    post("lock", "lock", (s, id, body) => {
      const message = formField(body, "message").trim();
      const input = checkForm<{ message?: string; duration_seconds: number }>(
        LockBody,
        { ...(message ? { message } : {}), duration_seconds: Number(formField(body, "duration_seconds")) },
        { message: "A message is at most 500 characters.", duration_seconds: "Choose how long the lock lasts." },
      );
      lockBucket(shell.deps, s.actor, id, input);
      return settingsUrl(id, "?done=locked#lock");
    });
    post("lock/remove", "lock", (s, id) => settingsUrl(id, `?done=${unlockBucket(shell.deps, s.actor, id).released ? "unlocked" : "not-locked"}#lock`));
    post("visibility/lock", "visibility", (s, id, body) => {
      const reason = formField(body, "reason").trim();
      const input = checkForm<{ reason?: string }>(VisibilityLockBody, reason ? { reason } : {}, { reason: "A reason is at most 500 characters." });
      const { changed } = lockVisibility(shell.deps, s.actor, id, input);
      return settingsUrl(id, `?done=${changed ? "visibility-locked" : "visibility-already-locked"}#visibility`);
    });
    post("visibility/unlock", "visibility", (s, id, _body, request) => {
      // Sudo mode (D241): a session opened by a login link, which an agent's owner key can mint,
      // must not thaw what the agent cannot thaw through the API.
      requireSudo(shell.deps, request, s.actor);
      const { changed } = unlockVisibility(shell.deps, s.actor, id);
      return settingsUrl(id, `?done=${changed ? "visibility-unlocked" : "visibility-not-locked"}#visibility`);
    });

    return app.get(
      `${BUCKETS_PATH}/:id/settings`,
      shell.view((s, { params, query }) => settingsView(shell, s, params.id!, query)),
      { detail: { hide: true } },
    ) as unknown as Elysia;
  },
};
