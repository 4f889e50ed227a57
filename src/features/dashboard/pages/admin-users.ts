// Instance admin: users (/dashboard/admin). The sign-up mode (a server setting, shown read-only
// with how to change it), invites (as `pier admin invite create`: the code shown once), and the
// users, paged and searchable, with make/unmake admin, disable/enable (`pier admin user disable`)
// and reset two-factor (as `pier admin user disable-2fa`). Every action is the accounts service the CLI calls; non-admins get 404.
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { html, shortTime } from "../../../http/pages/layout";
import { adminDisableTwoFactor, adminListUsers, adminSetDisabled, adminSetInstanceAdmin, createInvite, getUser } from "../../accounts";
import { fieldError, invalidAttrs } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { ADMIN_PATH, adminRefusal, adminTabs, NOT_AN_ACCOUNT_WRITE, noticeOf, offsetOf, pager, requireAdminSudo, requireInstanceAdmin } from "./account-common";

const USERS_PAGE = 50;
const DONE: Record<string, string> = {
  "admin-on": "The user is now an instance admin.",
  "admin-off": "The user is no longer an instance admin.",
  "2fa-off": "Two-factor authentication is off for the user, and their browser sessions ended.",
  disabled: "The user is disabled: they cannot sign in, their sessions ended, and their API keys and connections stop working.",
  enabled: "The user is enabled again.",
};
const SIGNUP: Record<string, string> = {
  open: "Open: anyone who can reach this Pier can sign up.",
  invite: "Invite only: sign-up needs an invite code made here or with pier admin invite create.",
  closed: "Closed: nobody can sign up; the operator creates users with pier admin user create.",
};

interface Typed {
  email: string;
  days: string;
}

function usersView(shell: Shell, s: Session, query: Record<string, string | undefined>, refused?: { error: ApiError; typed: Typed }) {
  requireInstanceAdmin(s);
  const q = (query.q ?? "").trim().slice(0, 200);
  const offset = offsetOf(query);
  const { users, total } = adminListUsers(shell.deps, { search: q || undefined, limit: USERS_PAGE, offset });
  const invite = shell.takeFlash(s, query.flash) as { code: string; link: string; email: string | null; expiresAt: string } | undefined;
  const form = (action: string, label: string, aria: string, cls = "secondary") =>
    html`<form method="post" action="${ADMIN_PATH}/users/${action}" class="inline"><input type="hidden" name="csrf" value="${shell.formToken(s)}"><button type="submit" class="${cls}" aria-label="${aria}">${label}</button></form>`;
  const rows = users.map(
    (u) => html`<tr><td class="wrap"><strong>${u.email}</strong><br><code class="small">${u.id}</code></td>
<td>${u.instanceAdmin ? html`<span class="badge">admin</span>` : html`<span class="muted small">user</span>`}${u.disabled ? html` <span class="badge">disabled</span>` : ""}</td><td class="small">${u.twoFactor ? "on" : "off"}</td><td class="small">${shortTime(u.lastLoginAt)}</td>
<td><div class="actions">${u.instanceAdmin ? form(`${u.id}/admin-off`, "Remove admin", `Remove admin: ${u.email}`) : form(`${u.id}/admin-on`, "Make admin", `Make admin: ${u.email}`)}
${u.twoFactor ? form(`${u.id}/reset-2fa`, "Reset two-factor", `Reset two-factor: ${u.email}`, "danger") : ""}
${u.disabled ? form(`${u.id}/enable`, "Enable", `Enable: ${u.email}`) : u.instanceAdmin ? "" : form(`${u.id}/disable`, "Disable", `Disable: ${u.email}`, "danger")}</div></td></tr>`,
  );
  const link = (o: number) => `${ADMIN_PATH}?${new URLSearchParams({ ...(q ? { q } : {}), ...(o ? { offset: String(o) } : {}) })}`;
  const typed = refused?.typed ?? { email: "", days: "7" };
  const err = refused?.error;
  return shell.render(s, {
    title: "Users",
    template: "dashboard/admin-users.html",
    current: ADMIN_PATH,
    error: err,
    vars: {
      tabs: adminTabs(ADMIN_PATH),
      notice: noticeOf(err, DONE, query.done),
      signupMode: shell.deps.config.signupMode,
      signupText: SIGNUP[shell.deps.config.signupMode] ?? "",
      inviteCode: invite?.code ?? "",
      inviteLink: invite?.link ?? "",
      inviteFor: invite?.email ?? "",
      inviteUntil: invite ? shortTime(invite.expiresAt) : "",
      inviteEmail: typed.email,
      inviteDays: typed.days,
      emailError: fieldError(err, "email", "invite-email-error"),
      emailInvalid: invalidAttrs(err, "email", "invite-email-error"),
      daysError: fieldError(err, "days", "invite-days-error"),
      daysInvalid: invalidAttrs(err, "days", "invite-days-error"),
      q,
      total,
      empty: users.length === 0,
      rows: html`${rows}`,
      pager: pager(offset, USERS_PAGE, total, link),
    },
  });
}

/** Users are named by email in the services (as on the CLI); the page's forms carry the id. */
function userEmail(shell: Shell, id: string): string {
  const user = getUser(shell.deps, id);
  if (!user) throw new ApiError("USER_NOT_FOUND", "That user no longer exists.");
  return user.email;
}

export const adminUsersPage: DashboardPage = {
  nav: { label: "Admin", href: ADMIN_PATH, admin: true },
  routes: (app, shell) => {
    const userAction = (suffix: string, run: (email: string) => string) =>
      app.post(
        `${ADMIN_PATH}/users/:id/${suffix}`,
        shell.action(
          (s, { request, params }) => {
            requireAdminSudo(shell, request, s);
            return run(userEmail(shell, params.id!));
          },
          (s, error) => adminRefusal(shell, s, error, ADMIN_PATH, () => usersView(shell, s, {}, { error, typed: { email: "", days: "7" } })),
          NOT_AN_ACCOUNT_WRITE,
        ),
        { detail: { hide: true } },
      );
    userAction("admin-on", (email) => (adminSetInstanceAdmin(shell.deps, email, true), `${ADMIN_PATH}?done=admin-on`));
    userAction("admin-off", (email) => (adminSetInstanceAdmin(shell.deps, email, false), `${ADMIN_PATH}?done=admin-off`));
    userAction("reset-2fa", (email) => (adminDisableTwoFactor(shell.deps, email), `${ADMIN_PATH}?done=2fa-off`));
    userAction("disable", (email) => (adminSetDisabled(shell.deps, email, true), `${ADMIN_PATH}?done=disabled`));
    userAction("enable", (email) => (adminSetDisabled(shell.deps, email, false), `${ADMIN_PATH}?done=enabled`));
    return app
      .get(
        ADMIN_PATH,
        shell.view((s, { query }) => usersView(shell, s, query)),
        { detail: { hide: true } },
      )
      .post(
        `${ADMIN_PATH}/invites`,
        shell.action(
          (s, { request, body }) => {
            requireAdminSudo(shell, request, s);
            const email = formField(body, "email").trim();
            const daysText = formField(body, "days").trim();
            const days = daysText ? Number(daysText) : undefined;
            const { code, invite } = createInvite(shell.deps, { email: email || null, createdBy: s.user.email, days });
            const link = `${shell.deps.urls.baseUrl}/signup?invite=${code}`;
            return `${ADMIN_PATH}?flash=${shell.flash(s, { code, link, email: invite.email, expiresAt: invite.expiresAt })}`;
          },
          (s, error, { body }) =>
            adminRefusal(shell, s, error, ADMIN_PATH, () =>
              usersView(shell, s, {}, { error, typed: { email: formField(body, "email"), days: formField(body, "days") } }),
            ),
          NOT_AN_ACCOUNT_WRITE,
        ),
        { detail: { hide: true } },
      ) as unknown as Elysia;
  },
};
