// Security (/dashboard/account/security): change the password (sudo mode and the current
// password; other sessions end), two-factor (its own pages at /account/security), and sign out
// everywhere (every session of the user, this one included).
import type { Elysia } from "elysia";
import type { ApiError } from "../../../core/errors";
import { clientMeta } from "../../../http/browser";
import { changePassword, signOutEverywhere, twoFactorEnabled } from "../../accounts";
import { fieldError, invalidAttrs } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { ACCOUNT_PATH, accountTabs, NOT_AN_ACCOUNT_WRITE, noticeOf, sudoOr } from "./account-common";

export const SECURITY_PATH = `${ACCOUNT_PATH}/security`;
const DONE: Record<string, string> = {
  "password-changed": "Password changed. Every other browser signed in as you was signed out.",
};

function securityView(shell: Shell, s: Session, query: Record<string, string | undefined>, error?: ApiError) {
  return shell.render(s, {
    title: "Security",
    template: "dashboard/account-security.html",
    current: ACCOUNT_PATH,
    error,
    vars: {
      tabs: accountTabs(SECURITY_PATH),
      notice: noticeOf(error, DONE, query.done),
      email: s.user.email,
      twoFactor: twoFactorEnabled(s.user),
      currentError: fieldError(error, "current_password", "current-error"),
      currentInvalid: invalidAttrs(error, "current_password", "current-error"),
      newError: fieldError(error, "new_password", "new-error"),
      newInvalid: invalidAttrs(error, "new_password", "new-error"),
    },
  });
}

export const accountSecurityPage: DashboardPage = {
  routes: (app, shell) =>
    app
      .get(
        SECURITY_PATH,
        shell.view((s, { query }) => securityView(shell, s, query)),
        { detail: { hide: true } },
      )
      .post(
        `${SECURITY_PATH}/password`,
        shell.action(
          async (s, { request, body }) => {
            await changePassword(
              shell.deps,
              request,
              s.actor,
              { current_password: formField(body, "current_password"), new_password: formField(body, "new_password") },
              clientMeta(request).ip,
            );
            return `${SECURITY_PATH}?done=password-changed`;
          },
          // Passwords are never typed back into a page.
          (s, error) => sudoOr(s, error, SECURITY_PATH, () => securityView(shell, s, {}, error)),
          NOT_AN_ACCOUNT_WRITE,
        ),
        { detail: { hide: true } },
      )
      .post(
        `${SECURITY_PATH}/sign-out-everywhere`,
        shell.action(
          (s) => {
            signOutEverywhere(shell.deps, s.actor);
            return "/signin?signed_out=1";
          },
          (s, error) => securityView(shell, s, {}, error),
          NOT_AN_ACCOUNT_WRITE,
        ),
        { detail: { hide: true } },
      ) as unknown as Elysia,
};
