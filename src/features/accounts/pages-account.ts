// Signed-in pages: the minimal dashboard landing page (which records the dashboard visit),
// Account access (API keys: list, create, revoke), Sign-in security (two-factor), and the
// password confirmation that account-security actions ask for outside sudo mode (sudo.ts).
import { Elysia } from "elysia";
import { renderSVG } from "uqr";
import type { Deps, Scope } from "../../core/context";
import { ApiError } from "../../core/errors";
import { htmlResponse, redirectResponse } from "../../http/html";
import { createNamedKey, listAccountKeys, revokeAccountKey } from "./access-keys";
import { dashboardSummary, recordDashboardVisit } from "./dashboard";
import { planHelp } from "./plan-help";
import { getAccount } from "./service";
import { beginTotpEnrollment, confirmTotpEnrollment, disableTotp, twoFactorEnabled } from "./totp";
import { alertBox, html, renderPage, renderView, SafeHtml, shortTime } from "../../http/pages/layout";
import { clientMeta, field, safeNext } from "../../http/browser";
import { browserSession, checkSessionCsrf, type BrowserSession } from "./browser-session";
import { confirmPassword, CONFIRM_PASSWORD_PATH, requireSudo, SUDO_TTL_S, sudoCookie } from "./sudo";
import type { ApiKeyRow } from "./keys";
import type { Actor } from "../../core/context";

/**
 * The account page's "agent connections" section. OAuth owns connections and sits above
 * accounts, so the route table passes its renderer in rather than accounts importing OAuth.
 */
export type ConnectionsSection = (deps: Deps, actor: Actor, csrf: string) => SafeHtml;

const hide = { hide: true };
const scopes: Scope[] = ["bucket_read", "bucket_write", "bucket_admin"];

function toSignin(req: Request): Response {
  const u = new URL(req.url);
  return redirectResponse(`/signin?next=${encodeURIComponent(u.pathname + u.search)}`);
}

function asApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  throw e;
}

function keysTable(keys: ApiKeyRow[], csrf: string): SafeHtml {
  if (!keys.length) return html`<p class="muted">No API keys or agent connections yet.</p>`;
  const rows = keys.map(
    (k) => html`<tr>
<td><strong>${k.label}</strong><br><code>${k.displayPrefix}…</code></td>
<td><span class="badge">${k.kind}</span></td>
<td>${k.permissionScope}${k.bucketAccess === "selected" ? html`<br><span class="small muted">${Object.keys(k.bucketPermissions).length} selected bucket(s)</span>` : ""}</td>
<td class="small">${shortTime(k.createdAt)}</td><td class="small">${shortTime(k.lastUsedAt)}</td>
<td><form method="post" action="/account/access/keys/${k.id}/revoke" class="inline"><input type="hidden" name="csrf" value="${csrf}">
<button type="submit" class="danger" aria-label="Revoke ${k.label}">Revoke</button></form></td></tr>`,
  );
  return html`<table><caption class="skip">API keys</caption><thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Permission</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>${rows}</tbody></table>`;
}

export const accountPages = (deps: Deps, connectionsSection: ConnectionsSection) => {
  const layoutUser = (s: BrowserSession) => ({ email: s.user.email, csrf: s.csrf });

  const dashboard = async (req: Request) => {
    const s = browserSession(deps, req);
    if (!s) return toSignin(req);
    recordDashboardVisit(deps, s.actor);
    const page = await renderView("auth/dashboard.html", dashboardSummary(deps, s.actor, s.user), { title: "Dashboard", user: layoutUser(s), width: "wide" });
    return htmlResponse(page);
  };

  const accessPage = async (s: BrowserSession, v: { error?: ApiError; notice?: string; newKey?: { key: string; label: string } } = {}) => {
    const summary = dashboardSummary(deps, s.actor, s.user);
    const keys = listAccountKeys(deps, s.actor);
    const help = summary.namedKeys ? null : planHelp(deps, getAccount(deps, s.actor.accountId), (e) => e.named_api_keys);
    const page = await renderView(
      "auth/access.html",
      {
        ...summary,
        askOperator: help?.ask_operator,
        operatorHint: help?.operator_hint,
        csrf: s.csrf,
        keys: keysTable(keys, s.csrf),
        connections: connectionsSection(deps, s.actor, s.csrf),
        newKey: v.newKey?.key,
        newKeyLabel: v.newKey?.label,
        notice: v.error ? alertBox(v.error.message) : alertBox(v.notice, "ok"),
      },
      { title: "Account access", user: layoutUser(s), width: "wide" },
    );
    return htmlResponse(page, { error: v.error });
  };

  const securityPage = async (s: BrowserSession, v: { error?: ApiError; notice?: string; enrolling?: { secret: string; uri: string } } = {}) => {
    const enabled = twoFactorEnabled(s.user);
    // A pending set-up key is shown only in sudo mode: whoever sees it holds the future second factor.
    const enrolling = v.enrolling ?? (!enabled && s.user.totpSealed && s.sudo ? beginTotpEnrollment(deps, s.user) : undefined);
    const page = await renderView(
      "auth/security.html",
      {
        csrf: s.csrf,
        enabled,
        enrolling: !!enrolling,
        off: !enabled && !enrolling,
        secret: enrolling?.secret,
        uri: enrolling?.uri,
        // The QR code is an inline SVG made from the otpauth URI (uqr: no network, no script).
        qr: enrolling ? new SafeHtml(renderSVG(enrolling.uri, { border: 2, pixelSize: 6 })) : undefined,
        notice: v.error ? alertBox(v.error.message) : alertBox(v.notice, "ok"),
      },
      { title: "Sign-in security", user: layoutUser(s), width: "wide" },
    );
    return htmlResponse(page, { error: v.error });
  };

  const confirmPasswordPage = async (s: BrowserSession, next: string, error?: ApiError) => {
    const body = html`<section class="card" aria-labelledby="h"><h1 id="h">Confirm your password</h1>${alertBox(error?.message)}
<p>Changing sign-in security, API keys or connections needs your password (asked again after ${SUDO_TTL_S / 60} minutes, and always in a browser opened from an agent's sign-in link).</p>
<form method="post" action="${CONFIRM_PASSWORD_PATH}"><input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="next" value="${next}">
<input type="text" name="email" value="${s.user.email}" autocomplete="username" hidden>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Confirm</button></form></section>`;
    return htmlResponse(await renderPage({ title: "Confirm your password", user: layoutUser(s), body }), { error });
  };

  /**
   * A signed-in form POST: session + CSRF first, then (for account-security actions) sudo mode,
   * then the action; errors re-render `page`, a missing sudo mode asks for the password and
   * comes back to `returnTo`.
   */
  const action =
    (
      run: (s: BrowserSession, body: unknown, params: Record<string, string>) => Promise<Response> | Response,
      page: (s: BrowserSession, error: ApiError) => Promise<Response>,
      returnTo?: string,
    ) =>
    async ({ request, body, params }: { request: Request; body: unknown; params: Record<string, string> }) => {
      const s = browserSession(deps, request);
      if (!s) return redirectResponse("/signin");
      try {
        checkSessionCsrf(deps, s, field(body, "csrf"));
        if (returnTo) requireSudo(deps, request, s.actor);
        return await run(s, body, params);
      } catch (e) {
        const error = asApiError(e);
        if (returnTo && error.code === "REAUTHENTICATION_REQUIRED") return confirmPasswordPage(s, returnTo, error);
        return page(browserSession(deps, request) ?? s, error);
      }
    };

  return new Elysia({ name: "account-pages" })
    .get("/dashboard", ({ request }) => dashboard(request), { detail: hide })
    .get(
      "/account/access",
      ({ request }) => {
        const s = browserSession(deps, request);
        if (!s) return toSignin(request);
        recordDashboardVisit(deps, s.actor); // account pages are part of the dashboard
        return accessPage(s);
      },
      { detail: hide },
    )
    .post(
      "/account/access/keys",
      action(
        (s, body) => {
          const scope = field(body, "scope") as Scope;
          if (!scopes.includes(scope)) throw new ApiError("VALIDATION_FAILED", "Pick a permission for the key.", { field: "scope" });
          const label = field(body, "label");
          const { key, record } = createNamedKey(deps, s.actor, { label, permission_scope: scope });
          return accessPage(s, { newKey: { key, label: record.label } });
        },
        (s, error) => accessPage(s, { error }),
        "/account/access",
      ),
      { detail: hide },
    )
    .post(
      "/account/access/keys/:id/revoke",
      action(
        (s, _body, params) => {
          revokeAccountKey(deps, s.actor, params.id!);
          return accessPage(s, { notice: "Key revoked. Clients using it now get 401 Unauthorized." });
        },
        (s, error) => accessPage(s, { error }),
        "/account/access",
      ),
      { detail: hide },
    )
    .get(
      "/account/security",
      ({ request }) => {
        const s = browserSession(deps, request);
        if (!s) return toSignin(request);
        recordDashboardVisit(deps, s.actor);
        return securityPage(s);
      },
      { detail: hide },
    )
    .post(
      "/account/security/totp/enroll",
      action(
        (s) => securityPage(s, { enrolling: beginTotpEnrollment(deps, s.user, { fresh: true }) }),
        (s, error) => securityPage(s, { error }),
        "/account/security",
      ),
      { detail: hide },
    )
    .post(
      "/account/security/totp/confirm",
      action(
        async (s, body) => {
          confirmTotpEnrollment(deps, s.user, field(body, "code"));
          return securityPage({ ...s, user: { ...s.user, totpEnabledAt: deps.clock.now().toISOString() } }, { notice: "Two-factor authentication is on." });
        },
        (s, error) => securityPage(s, { error }),
        "/account/security",
      ),
      { detail: hide },
    )
    .post(
      "/account/security/totp/disable",
      action(
        async (s, body) => {
          disableTotp(deps, s.user, field(body, "code"));
          return securityPage({ ...s, user: { ...s.user, totpSealed: null, totpEnabledAt: null } }, { notice: "Two-factor authentication is off." });
        },
        (s, error) => securityPage(s, { error }),
        "/account/security",
      ),
      { detail: hide },
    )
    .get(
      CONFIRM_PASSWORD_PATH,
      ({ request, query }) => {
        const s = browserSession(deps, request);
        if (!s) return toSignin(request);
        return confirmPasswordPage(s, safeNext(query.next, "/account/security"));
      },
      { detail: hide },
    )
    .post(
      CONFIRM_PASSWORD_PATH,
      async ({ request, body }) => {
        const s = browserSession(deps, request);
        if (!s) return redirectResponse("/signin");
        const next = safeNext(field(body, "next"), "/account/security");
        try {
          checkSessionCsrf(deps, s, field(body, "csrf"));
          await confirmPassword(deps, s.user, field(body, "password"), clientMeta(request).ip);
          return redirectResponse(next, [sudoCookie(deps, s.session.id)]);
        } catch (e) {
          return confirmPasswordPage(s, next, asApiError(e));
        }
      },
      { detail: hide },
    );
};
