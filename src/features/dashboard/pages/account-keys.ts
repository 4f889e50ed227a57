// API keys (/dashboard/account/keys): the account's keys, create one (name, permission, all or
// selected buckets, each with a permission of its own as `bucket_permissions` takes), revoke. A
// new key is kept with shell.flash and shown once on the page the create redirects to, so a
// reload or a second submit never makes a second key. Key changes need sudo mode, as over REST.
import type { Elysia } from "elysia";
import type { BucketPermission, Scope } from "../../../core/context";
import { ApiError } from "../../../core/errors";
import { html, shortTime, type SafeHtml } from "../../../http/pages/layout";
import { createNamedKey, dashboardSummary, getAccount, listAccountKeys, planHelp, requireSudo, revokeAccountKey, type ApiKeyRow } from "../../accounts";
import { listBucketPage } from "../../buckets";
import { fieldError, invalidAttrs } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { ACCOUNT_PATH, accountTabs, noticeOf, offsetOf, pager, sudoOr } from "./account-common";

export const KEYS_PATH = `${ACCOUNT_PATH}/keys`;
const BUCKETS_PAGE = 50;
const SCOPES: Scope[] = ["bucket_admin", "bucket_write", "bucket_read"];
const PERMISSION: Record<Scope, BucketPermission> = { bucket_read: "read", bucket_write: "write", bucket_admin: "admin" };
const PERMISSIONS: BucketPermission[] = ["admin", "write", "read"];
const DONE: Record<string, string> = { revoked: "Key revoked. Clients using it now get 401 Unauthorized." };

interface Typed {
  label: string;
  scope: string;
  access: string;
  buckets: string[];
  /** A ticked bucket's own permission ("" or absent: the key's). */
  perms: Record<string, string>;
}

/** A form field that may repeat (checkboxes): always a list of strings. */
function listField(body: unknown, name: string): string[] {
  const v = body && typeof body === "object" ? (body as Record<string, unknown>)[name] : undefined;
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === "string" && x.length > 0).slice(0, 1000);
}

function keysTable(keys: ApiKeyRow[], csrf: string): SafeHtml {
  if (!keys.length) return html`<p class="muted">No API keys yet.</p>`;
  const rows = keys.map(
    (k) => html`<tr><td><strong class="wrap">${k.label}</strong><br><code>${k.displayPrefix}…</code></td><td><span class="badge">${k.kind}</span></td>
<td>${k.permissionScope}${k.bucketAccess === "selected" ? grantsOf(k) : ""}</td>
<td class="small">${shortTime(k.createdAt)}</td><td class="small">${shortTime(k.lastUsedAt)}</td>
<td><form method="post" action="${KEYS_PATH}/${k.id}/revoke" class="inline"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" class="danger" aria-label="Revoke ${k.label}">Revoke</button></form></td></tr>`,
  );
  return html`<table><caption class="skip">API keys</caption><thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Permission</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="skip">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** A selected-buckets key's grants, as GET /api/v1/api_keys lists them in `bucket_permissions`. */
function grantsOf(k: ApiKeyRow): SafeHtml {
  const grants = Object.entries(k.bucketPermissions);
  return html`<details class="small"><summary>${grants.length} selected bucket(s)</summary><ul>${grants.map(
    ([id, perm]) => html`<li><code>${id}</code>: ${perm}</li>`,
  )}</ul></details>`;
}

function bucketChoices(shell: Shell, s: Session, query: Record<string, string | undefined>, typed: Typed): SafeHtml {
  const chosen = typed.buckets;
  const q = (query.bq ?? "").trim().slice(0, 200);
  const offset = offsetOf(query, "boffset");
  const { buckets, pagination } = listBucketPage(shell.deps, s.actor, { archived: false, limit: BUCKETS_PAGE, offset, titleContains: q || undefined });
  const link = (o: number) => `${KEYS_PATH}?${new URLSearchParams({ ...(q ? { bq: q } : {}), ...(o ? { boffset: String(o) } : {}) })}#create`;
  const boxes = buckets.map(
    (b) =>
      html`<li><input type="checkbox" name="buckets" value="${b.id}" id="b-${b.id}"${chosen.includes(b.id) ? html` checked` : ""}> <label for="b-${b.id}" class="inline-label">${b.title} <code class="small">${b.id}</code></label>
<label for="p-${b.id}" class="skip">Permission on ${b.title}</label><select id="p-${b.id}" name="perm-${b.id}" class="grant">${permissionOptions(typed.perms[b.id] ?? "")}</select></li>`,
  );
  const list = buckets.length
    ? html`<ul class="choices">${boxes}</ul>`
    : html`<p class="muted small">${q ? "No bucket title contains that text." : "No buckets yet."}</p>`;
  return html`${list}${pagination.total_count > BUCKETS_PAGE ? pager(offset, BUCKETS_PAGE, pagination.total_count, link) : ""}`;
}

function permissionOptions(current: string): SafeHtml {
  const option = (value: string, text: string) => html`<option value="${value}"${current === value ? html` selected` : ""}>${text}</option>`;
  return html`${option("", "as the key")}${PERMISSIONS.map((p) => option(p, p))}`;
}

async function keysView(shell: Shell, s: Session, query: Record<string, string | undefined>, refused?: { error: ApiError; typed: Typed }) {
  const deps = shell.deps;
  const summary = dashboardSummary(deps, s.actor, s.user);
  const help = summary.namedKeys ? null : planHelp(deps, getAccount(deps, s.actor.accountId), (e) => e.named_api_keys);
  const created = shell.takeFlash(s, query.flash) as { key: string; label: string } | undefined;
  const typed = refused?.typed ?? { label: "", scope: "bucket_admin", access: "all", buckets: [], perms: {} };
  const err = refused?.error;
  return shell.render(s, {
    title: "API keys",
    template: "dashboard/account-keys.html",
    current: ACCOUNT_PATH,
    error: err,
    vars: {
      tabs: accountTabs(KEYS_PATH),
      notice: noticeOf(err, DONE, query.done),
      accountName: summary.accountName,
      planName: summary.planName,
      namedKeys: summary.namedKeys,
      askOperator: help?.ask_operator ?? "",
      operatorHint: help?.operator_hint ?? "",
      newKey: created?.key ?? "",
      newKeyLabel: created?.label ?? "",
      keys: keysTable(listAccountKeys(deps, s.actor), shell.formToken(s)),
      label: typed.label,
      labelError: fieldError(err, "label", "label-error"),
      labelInvalid: invalidAttrs(err, "label", "label-error"),
      scopeOptions: html`${SCOPES.map((sc) => html`<option value="${sc}"${typed.scope === sc ? html` selected` : ""}>${sc}</option>`)}`,
      accessAll: typed.access !== "selected",
      accessSelected: typed.access === "selected",
      bucketsError: fieldError(err, "bucket_permissions", "buckets-error"),
      bq: query.bq ?? "",
      buckets: bucketChoices(shell, s, query, typed),
    },
  });
}

function typedOf(body: unknown): Typed {
  const buckets = listField(body, "buckets");
  const perms = Object.fromEntries(buckets.map((id) => [id, formField(body, `perm-${id}`)]));
  return { label: formField(body, "label"), scope: formField(body, "scope"), access: formField(body, "access"), buckets, perms };
}

/** Each ticked bucket's permission: its own when one was picked, else the key's. */
function grantsFrom(typed: Typed, scope: Scope): Record<string, BucketPermission> {
  return Object.fromEntries(
    typed.buckets.map((id) => {
      const own = typed.perms[id] ?? "";
      if (own !== "" && !PERMISSIONS.includes(own as BucketPermission))
        throw new ApiError("VALIDATION_FAILED", "Pick read, write or admin for each ticked bucket.", { field: "bucket_permissions" });
      return [id, own === "" ? PERMISSION[scope] : (own as BucketPermission)];
    }),
  );
}

export const accountKeysPage: DashboardPage = {
  routes: (app, shell) =>
    app
      .get(
        KEYS_PATH,
        shell.view((s, { query }) => keysView(shell, s, query)),
        { detail: { hide: true } },
      )
      .post(
        KEYS_PATH,
        shell.action(
          (s, { request, body }) => {
            requireSudo(shell.deps, request, s.actor);
            const typed = typedOf(body);
            const scope = typed.scope as Scope;
            if (!SCOPES.includes(scope)) throw new ApiError("VALIDATION_FAILED", "Pick a permission for the key.", { field: "scope" });
            const selected = typed.access === "selected";
            const { key, record } = createNamedKey(shell.deps, s.actor, {
              label: typed.label,
              permission_scope: scope,
              bucket_access: selected ? "selected" : "all",
              bucket_permissions: selected ? grantsFrom(typed, scope) : undefined,
            });
            return `${KEYS_PATH}?flash=${shell.flash(s, { key, label: record.label })}`;
          },
          (s, error, { body }) => sudoOr(s, error, KEYS_PATH, () => keysView(shell, s, {}, { error, typed: typedOf(body) })),
        ),
        { detail: { hide: true } },
      )
      .post(
        `${KEYS_PATH}/:id/revoke`,
        shell.action(
          (s, { request, params }) => {
            requireSudo(shell.deps, request, s.actor);
            revokeAccountKey(shell.deps, s.actor, params.id!);
            return `${KEYS_PATH}?done=revoked`;
          },
          (s, error) => sudoOr(s, error, KEYS_PATH, () => keysView(shell, s, {}, { error, typed: typedOf({}) })),
        ),
        { detail: { hide: true } },
      ) as unknown as Elysia,
};
