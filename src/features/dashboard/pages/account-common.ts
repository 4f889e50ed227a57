// What the account and admin pages share: their tab bars, a pager, the offset of a page, and the
// answer to a refusal that needs the password again (sudo mode, accounts/sudo.ts).
import { ApiError } from "../../../core/errors";
import { alertBox, html, type SafeHtml } from "../../../http/pages/layout";
import { passwordConfirmationPage, requireSudo } from "../../accounts";
import type { Session, Shell } from "../shell";

export const ACCOUNT_PATH = "/dashboard/account";
export const ADMIN_PATH = "/dashboard/admin";

const ACCOUNT_TABS = [
  { label: "Plan", path: ACCOUNT_PATH },
  { label: "API keys", path: `${ACCOUNT_PATH}/keys` },
  { label: "Agents", path: `${ACCOUNT_PATH}/agents` },
  { label: "Notifications", path: `${ACCOUNT_PATH}/notifications` },
  { label: "Security", path: `${ACCOUNT_PATH}/security` },
];

const ADMIN_TABS = [
  { label: "Users", path: ADMIN_PATH },
  { label: "Plans", path: `${ADMIN_PATH}/plans` },
  { label: "Outbox", path: `${ADMIN_PATH}/outbox` },
  { label: "Health", path: `${ADMIN_PATH}/health` },
];

// What these pages add to the dashboard's styles (inline, as the shell's own: the CSP allows inline styles).
const pageStyle = html`<style>
.choices{list-style:none;padding:0;margin:.5rem 0;max-height:22rem;overflow:auto}.choices li{margin:.25rem 0}
.inline-label{display:inline;font-weight:400}fieldset{border:1px solid var(--line);border-radius:8px;padding:.75rem;margin:1rem 0;min-width:0}
td form.inline+form.inline{margin-left:.5rem}.mono{font-family:ui-monospace,monospace;white-space:pre-wrap;overflow-wrap:anywhere}
</style>`;

function tabBar(label: string, tabs: { label: string; path: string }[], current: string): SafeHtml {
  const links = tabs.map((t) => (t.path === current ? html`<a href="${t.path}" aria-current="page">${t.label}</a>` : html`<a href="${t.path}">${t.label}</a>`));
  return html`${pageStyle}<nav aria-label="${label}" class="tabs">${links}</nav>`;
}

export const accountTabs = (current: string) => tabBar("Account", ACCOUNT_TABS, current);
export const adminTabs = (current: string) => tabBar("Instance admin", ADMIN_TABS, current);

export { offsetOf, pager } from "./paging";

/** The notice at the top of a page: a refusal not about one field, else the outcome of the last action. */
export function noticeOf(error: ApiError | undefined, done: Record<string, string>, code: string | undefined): SafeHtml {
  if (error && !(error.details as { field?: string } | undefined)?.field) return alertBox(error.message);
  return alertBox(done[code ?? ""], "ok");
}

/**
 * A refused account-security action outside sudo mode asks for the password (and comes back
 * to `returnTo`), exactly as the REST twin answers REAUTHENTICATION_REQUIRED; anything else
 * renders the page again.
 */
export function sudoOr(s: Session, error: ApiError, returnTo: string, page: () => Promise<Response>): Promise<Response> {
  if (error.code === "REAUTHENTICATION_REQUIRED") return passwordConfirmationPage(s, returnTo, error);
  return page();
}

/** Instance admin pages exist only for instance admins: anyone else gets the normal not-found page. */
export function requireInstanceAdmin(s: Session): void {
  if (!s.user.isInstanceAdmin) throw new ApiError("NOT_FOUND", "No such page.");
}

/**
 * An instance admin's action, or a page showing other users' secrets (the outbox): the admin
 * check, then sudo mode (D231). Instance powers reach every account, so a session that never saw
 * the password (a login link minted by an agent's credential) or one left open must confirm it.
 */
export function requireAdminSudo(shell: Shell, request: Request, s: Session): void {
  requireInstanceAdmin(s);
  requireSudo(shell.deps, request, s.actor);
}

/**
 * A refused admin action: a non-admin (or one demoted meanwhile) gets the not-found page, an
 * admin outside sudo mode the password prompt (back to `returnTo`), anything else the page again.
 */
export function adminRefusal(shell: Shell, s: Session, error: ApiError, returnTo: string, page: () => Promise<Response>): Promise<Response> {
  return s.user.isInstanceAdmin ? sudoOr(s, error, returnTo, page) : shell.notFound(s);
}

/** For shell.action: the user's own security and the instance admin's actions stay open to a read-only account. */
export const NOT_AN_ACCOUNT_WRITE = { accountWrite: false } as const;
