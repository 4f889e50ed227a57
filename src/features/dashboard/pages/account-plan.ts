// The account's plan and its limits in use (/dashboard/account): what the plan allows, next to
// what the account uses of it, and what to ask the operator for when a limit is in the way; and
// the account's settings (its time zone, PATCH /api/v1/account's twin); and, for a user in more
// than one account, which account this browser session acts in.
import type { Elysia } from "elysia";
import type { ApiError } from "../../../core/errors";
import { html } from "../../../http/pages/layout";
import {
  accountsOfUser,
  dashboardSummary,
  entitlementsOf,
  getAccount,
  listAccountKeys,
  planHelp,
  switchSessionAccount,
  timeZoneNames,
  UNLIMITED,
  updateAccountSettings,
} from "../../accounts";
import { hasAccountWideAdmin, listBucketPage } from "../../buckets";
import { fieldError, invalidAttrs } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { ACCOUNT_PATH, accountTabs, NOT_AN_ACCOUNT_WRITE, noticeOf } from "./account-common";

export const TIME_ZONE_PATH = `${ACCOUNT_PATH}/time-zone`;
export const SWITCH_PATH = `${ACCOUNT_PATH}/switch`;
const DONE: Record<string, string> = {
  "time-zone": "Time zone saved: analytics days now follow it.",
  switched: "This browser now works in this account: buckets, keys and settings are this account's.",
};

const limit = (n: number) => (n >= UNLIMITED ? "no limit" : n.toLocaleString("en"));
const yes = (b: boolean) => (b ? "yes" : "no");

function planView(shell: Shell, s: Session, query: Record<string, string | undefined>, refused?: { error: ApiError; typed?: string }) {
  const deps = shell.deps;
  const summary = dashboardSummary(deps, s.actor, s.user);
  const account = getAccount(deps, s.actor.accountId);
  const e = entitlementsOf(deps, account);
  const count = (archived: boolean) => listBucketPage(deps, s.actor, { archived, limit: 1 }).pagination.total_count;
  const buckets = count(false) + count(true);
  const keys = s.actor.scope === "bucket_admin" ? listAccountKeys(deps, s.actor).filter((k) => k.kind === "named").length : null;
  const rows: [string, string, string][] = [
    ["Buckets", limit(e.max_buckets), buckets.toLocaleString("en")],
    ["Live websites", limit(e.max_live_sites), ""],
    ["Password- or email-protected sites", e.protected_sites ? limit(e.max_protected_sites) : "not included", ""],
    ["Named API keys", yes(e.named_api_keys), keys === null ? "" : String(keys)],
    ["Custom domains", limit(e.max_custom_domains), ""],
    ["Form submissions", limit(e.form_submission_quota), ""],
    ["GitHub sync", yes(e.github_sync), ""],
    ["Sites stay active without a dashboard visit for", e.site_renewal_days ? `${e.site_renewal_days} days` : "always", ""],
  ];
  const help = e.named_api_keys ? null : planHelp(deps, account, (x) => x.named_api_keys);
  const memberships = accountsOfUser(deps, s.user.id);
  const error = refused?.error;
  const zone = refused?.typed ?? account.timeZone;
  return shell.render(s, {
    title: "Plan and limits",
    template: "dashboard/account-plan.html",
    current: ACCOUNT_PATH,
    error,
    vars: {
      tabs: accountTabs(ACCOUNT_PATH),
      ...summary,
      rows: html`${rows.map(([name, allowed, used]) => html`<tr><th scope="row">${name}</th><td>${allowed}</td><td>${used || html`<span class="muted">—</span>`}</td></tr>`)}`,
      askOperator: help?.ask_operator ?? "",
      operatorHint: help?.operator_hint ?? "",
      notice: noticeOf(error, DONE, query.done),
      timeZone: account.timeZone,
      // Owners and admins change settings; other members see the zone in use.
      canChangeSettings: hasAccountWideAdmin(s.actor),
      zoneOptions: html`${timeZoneNames().map((z) => html`<option value="${z}"${z === zone ? html` selected` : html``}>${z}</option>`)}`,
      // A user in several accounts (made by `pier admin account create --owner`, or a member of
      // another team) picks the one this session acts in.
      otherAccounts: memberships.length > 1,
      accountRows: html`${memberships.map(
        (m) =>
          html`<tr><td class="wrap">${m.name} <code class="small">${m.id}</code></td><td>${m.role}</td><td>${
            m.id === account.id
              ? html`<strong>this session's account</strong>`
              : html`<form method="post" action="${SWITCH_PATH}"><input type="hidden" name="csrf" value="${shell.formToken(s)}"><input type="hidden" name="account_id" value="${m.id}"><button type="submit" class="secondary" aria-label="Switch to ${m.name}">Switch</button></form>`
          }</td></tr>`,
      )}`,
      zoneError: fieldError(error, "time_zone", "time-zone-error"),
      zoneInvalid: invalidAttrs(error, "time_zone", "time-zone-error"),
    },
  });
}

export const accountPlanPage: DashboardPage = {
  nav: { label: "Account", href: ACCOUNT_PATH },
  routes: (app, shell) =>
    app
      .get(
        ACCOUNT_PATH,
        shell.view((s, { query }) => planView(shell, s, query)),
        { detail: { hide: true } },
      )
      .post(
        TIME_ZONE_PATH,
        shell.action(
          (s, { body }) => {
            updateAccountSettings(shell.deps, s.actor, { time_zone: formField(body, "time_zone") });
            return `${ACCOUNT_PATH}?done=time-zone`;
          },
          (s, error, { body }) => planView(shell, s, {}, { error, typed: formField(body, "time_zone") }),
        ),
        { detail: { hide: true } },
      )
      .post(
        SWITCH_PATH,
        shell.action(
          (s, { body }) => {
            switchSessionAccount(shell.deps, s.session, formField(body, "account_id"));
            return `${ACCOUNT_PATH}?done=switched`;
          },
          (s, error) => planView(shell, s, {}, { error }),
          // Choosing where to work changes no account's data, and leaving a read-only account must work.
          NOT_AN_ACCOUNT_WRITE,
        ),
        { detail: { hide: true } },
      ) as unknown as Elysia,
};
