// Signed-in pages: the minimal dashboard landing page (which records the dashboard visit),
// Sign-in security (two-factor), and the password confirmation that account-security actions
// ask for outside sudo mode (sudo.ts). API keys moved into the dashboard (/account/access
// redirects there).
import { Elysia } from "elysia";
import { renderSVG } from "uqr";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { htmlResponse, redirectResponse } from "../../http/html";
import { dashboardSummary, recordDashboardVisit } from "./dashboard";
import { beginTotpEnrollment, confirmTotpEnrollment, disableTotp, twoFactorEnabled } from "./totp";
import { alertBox, html, renderPage, renderView, SafeHtml } from "../../http/pages/layout";
import { clientMeta, field, safeNext } from "../../http/browser";
import { browserSession, checkSessionCsrf, type BrowserSession } from "./browser-session";
import { confirmPassword, CONFIRM_PASSWORD_PATH, requireSudo, SUDO_TTL_S, sudoCookie } from "./sudo";

const hide = { hide: true };

function toSignin(req: Request): Response {
  const u = new URL(req.url);
  return redirectResponse(`/signin?next=${encodeURIComponent(u.pathname + u.search)}`);
}

function asApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  throw e;
}

/**
 * The page that asks for the password before an account-security action outside sudo mode,
 * coming back to `next` (a same-site path) once it is confirmed. Dashboard pages answer a
 * REAUTHENTICATION_REQUIRED refusal with it too.
 */
export async function passwordConfirmationPage(s: BrowserSession, next: string, error?: ApiError): Promise<Response> {
  const body = html`<section class="card" aria-labelledby="h"><h1 id="h">Confirm your password</h1>${alertBox(error?.message)}
<p>Changing sign-in security, API keys or connections needs your password (asked again after ${SUDO_TTL_S / 60} minutes, and always in a browser opened from an agent's sign-in link).</p>
<form method="post" action="${CONFIRM_PASSWORD_PATH}"><input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="next" value="${next}">
<input type="text" name="email" value="${s.user.email}" autocomplete="username" hidden>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Confirm</button></form></section>`;
  return htmlResponse(await renderPage({ title: "Confirm your password", user: { email: s.user.email, csrf: s.csrf }, body }), { error });
}

export const accountPages = (deps: Deps) => {
  const layoutUser = (s: BrowserSession) => ({ email: s.user.email, csrf: s.csrf });

  const dashboard = async (req: Request) => {
    const s = browserSession(deps, req);
    if (!s) return toSignin(req);
    recordDashboardVisit(deps, s.actor);
    const page = await renderView("auth/dashboard.html", dashboardSummary(deps, s.actor, s.user), { title: "Dashboard", user: layoutUser(s), width: "wide" });
    return htmlResponse(page);
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

  const confirmPasswordPage = (s: BrowserSession, next: string, error?: ApiError) => passwordConfirmationPage(s, next, error);

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

  return (
    new Elysia({ name: "account-pages" })
      .get("/dashboard", ({ request }) => dashboard(request), { detail: hide })
      // Account access moved into the dashboard (API keys: shown once, POST-redirect-GET).
      .get("/account/access", ({ request }) => (browserSession(deps, request) ? redirectResponse("/dashboard/account/keys") : toSignin(request)), {
        detail: hide,
      })
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
            const { endedSessions } = confirmTotpEnrollment(deps, s.user, field(body, "code"), s.session.id);
            const notice = endedSessions
              ? "Two-factor authentication is on. Every other browser signed in as you was signed out."
              : "Two-factor authentication is on.";
            return securityPage({ ...s, user: { ...s.user, totpEnabledAt: deps.clock.now().toISOString() } }, { notice });
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
      )
  );
};
