// Instance admin: plans (/dashboard/admin/plans). The plan catalogue (built-in plans and the
// plans file) with each plan's entitlements, and the accounts with their plan, paged and
// searchable; moving an account to another plan is `pier admin account plan` (setPlan).
import type { Elysia } from "elysia";
import type { ApiError } from "../../../core/errors";
import { html } from "../../../http/pages/layout";
import { adminListAccounts, setPlan, UNLIMITED } from "../../accounts";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { ADMIN_PATH, adminRefusal, adminTabs, NOT_AN_ACCOUNT_WRITE, noticeOf, offsetOf, pager, requireAdminSudo, requireInstanceAdmin } from "./account-common";

export const PLANS_PATH = `${ADMIN_PATH}/plans`;
const ACCOUNTS_PAGE = 50;
const DONE: Record<string, string> = { moved: "The account is on its new plan; its limits changed at once." };
const limit = (v: number | boolean) => (typeof v === "boolean" ? (v ? "yes" : "no") : v >= UNLIMITED ? "no limit" : v.toLocaleString("en"));

function plansView(shell: Shell, s: Session, query: Record<string, string | undefined>, error?: ApiError) {
  requireInstanceAdmin(s);
  const deps = shell.deps;
  const plans = deps.plans.ids().map((id) => deps.plans.get(id));
  const keys = Object.keys(plans[0]?.entitlements ?? {}) as (keyof (typeof plans)[number]["entitlements"])[];
  const catalogue = html`<table><caption class="skip">Plans and their entitlements</caption><thead><tr><th scope="col">Entitlement</th>${plans.map(
    (p) =>
      html`<th scope="col">${p.name}<br><code class="small">${p.id}</code>${p.id === deps.config.defaultPlan ? html` <span class="badge">default</span>` : ""}</th>`,
  )}</tr></thead><tbody>${keys.map((k) => html`<tr><th scope="row"><code>${k}</code></th>${plans.map((p) => html`<td>${limit(p.entitlements[k])}</td>`)}</tr>`)}</tbody></table>`;
  const q = (query.q ?? "").trim().slice(0, 200);
  const offset = offsetOf(query);
  const { accounts, total } = adminListAccounts(deps, { search: q || undefined, limit: ACCOUNTS_PAGE, offset });
  const rows = accounts.map((a) => {
    const id = `plan-${a.id}`;
    return html`<tr><td class="wrap"><strong>${a.name}</strong><br><code class="small">${a.id}</code>${a.readOnly ? html` <span class="badge">read-only</span>` : ""}</td><td class="wrap small">${a.ownerEmail ?? "—"}</td>
<td><form method="post" action="${PLANS_PATH}/accounts/${a.id}" class="actions"><input type="hidden" name="csrf" value="${shell.formToken(s)}">
<label for="${id}" class="skip">Plan of ${a.name}</label><select id="${id}" name="plan">${plans.map((p) => html`<option value="${p.id}"${p.id === a.plan ? html` selected` : ""}>${p.name}</option>`)}</select>
<button type="submit" class="secondary" aria-label="Change the plan of ${a.name}">Change</button></form></td></tr>`;
  });
  const link = (o: number) => `${PLANS_PATH}?${new URLSearchParams({ ...(q ? { q } : {}), ...(o ? { offset: String(o) } : {}) })}#accounts`;
  return shell.render(s, {
    title: "Plans",
    template: "dashboard/admin-plans.html",
    current: ADMIN_PATH,
    error,
    vars: {
      tabs: adminTabs(PLANS_PATH),
      notice: noticeOf(error, DONE, query.done),
      catalogue,
      q,
      total,
      empty: accounts.length === 0,
      rows: html`${rows}`,
      pager: pager(offset, ACCOUNTS_PAGE, total, link),
    },
  });
}

export const adminPlansPage: DashboardPage = {
  routes: (app, shell) =>
    app
      .get(
        PLANS_PATH,
        shell.view((s, { query }) => plansView(shell, s, query)),
        { detail: { hide: true } },
      )
      .post(
        `${PLANS_PATH}/accounts/:id`,
        shell.action(
          (s, { request, params, body }) => {
            requireAdminSudo(shell, request, s);
            setPlan(shell.deps, params.id!, formField(body, "plan"));
            return `${PLANS_PATH}?done=moved#accounts`;
          },
          (s, error) => adminRefusal(shell, s, error, PLANS_PATH, () => plansView(shell, s, {}, error)),
          NOT_AN_ACCOUNT_WRITE,
        ),
        { detail: { hide: true } },
      ) as unknown as Elysia,
};
