// Sign-up, sign-in (with the two-factor step) and sign-out pages. Pages translate: they read
// the form, check CSRF, call one service function, and render or redirect. Errors re-render
// the form with the message (and the catalogue's status), never a JSON envelope.
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { apiCookieName, soleCookieValue } from "../../http/cookies";
import { htmlResponse, redirectResponse } from "../../http/html";
import { destroySession } from "./sessions";
import { clearSessionCookie, sessionCookie, sessionTokenOf } from "../../http/session-cookie";
import { completeTwoFactor, signIn, signUp, signupClosed, signupNeedsInvite, type NewSession } from "./signin";
import { countUsers } from "./service";
import { clearSudoCookie, sudoCookie } from "./sudo";
import { alertBox, renderPage, renderView } from "../../http/pages/layout";
import { checkPreSessionCsrf, clientMeta, field, hostCookie, preSessionCsrf, safeNext } from "../../http/browser";
import { browserSession, checkSessionCsrf } from "./browser-session";

// The signed "password was right, code still due" token between the two sign-in steps.
const pendingCookie = (deps: Deps) => apiCookieName(deps, "pier_2fa");
const hide = { hide: true };

// The password was just entered: the new session starts in sudo mode.
function sessionCookies(deps: Deps, s: NewSession): string[] {
  return [sessionCookie(deps, s.token, s.maxAgeSeconds, s.remember), hostCookie(deps, pendingCookie(deps), "", 0), sudoCookie(deps, s.sessionId)];
}

/** Re-render on a known error; anything else is a bug and goes to the error envelope. */
function asApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  throw e;
}

export const authPages = (deps: Deps) => {
  const signinPage = async (req: Request, v: { next: string; email?: string; remember?: boolean; error?: ApiError; notice?: string }) => {
    const csrf = preSessionCsrf(deps, req);
    const notice = v.error ? alertBox(v.error.message) : alertBox(v.notice, "ok");
    const page = await renderView(
      "auth/signin.html",
      {
        csrf: csrf.token,
        next: v.next,
        email: v.email ?? "",
        remember: v.remember ?? false,
        notice,
        signup: !signupClosed(deps),
      },
      { title: "Sign in" },
    );
    return htmlResponse(page, { cookies: csrf.cookies, error: v.error });
  };

  const signupPage = async (req: Request, v: { email?: string; invite?: string; error?: ApiError }) => {
    if (signupClosed(deps))
      return htmlResponse(await renderView("auth/signup-closed.html", {}, { title: "Sign-up closed" }), { error: v.error ?? new ApiError("SIGNUP_CLOSED") });
    const csrf = preSessionCsrf(deps, req);
    const page = await renderView(
      "auth/signup.html",
      {
        csrf: csrf.token,
        email: v.email ?? "",
        invite: v.invite ?? "",
        needInvite: signupNeedsInvite(deps),
        first: countUsers(deps) === 0,
        notice: alertBox(v.error?.message),
      },
      { title: "Create account" },
    );
    return htmlResponse(page, { cookies: csrf.cookies, error: v.error });
  };

  const twoFactorPage = async (req: Request, next: string, error?: ApiError) => {
    const csrf = preSessionCsrf(deps, req);
    const page = await renderView("auth/two-factor.html", { csrf: csrf.token, next, notice: alertBox(error?.message) }, { title: "Two-factor check" });
    return htmlResponse(page, { cookies: csrf.cookies, error });
  };

  return new Elysia({ name: "account-auth-pages" })
    .get(
      "/signin",
      ({ request, query }) => {
        const next = safeNext(query.next);
        if (browserSession(deps, request)) return redirectResponse(next);
        return signinPage(request, { next, notice: query.signed_out ? "You are signed out." : undefined });
      },
      { detail: hide },
    )
    .post(
      "/signin",
      async ({ request, body }) => {
        const next = safeNext(field(body, "next"));
        const email = field(body, "email");
        const remember = field(body, "remember") === "1";
        try {
          checkPreSessionCsrf(deps, request, field(body, "csrf"));
          const result = await signIn(deps, { email, password: field(body, "password"), remember }, clientMeta(request));
          if (result.kind === "two_factor") {
            return redirectResponse(`/signin/two-factor?next=${encodeURIComponent(next)}`, [
              hostCookie(deps, pendingCookie(deps), result.pending, result.maxAgeSeconds),
            ]);
          }
          return redirectResponse(next, sessionCookies(deps, result.session));
        } catch (e) {
          return signinPage(request, { next, email, remember, error: asApiError(e) });
        }
      },
      { detail: hide },
    )
    .get(
      "/signin/two-factor",
      ({ request, query }) => {
        const next = safeNext(query.next);
        if (!soleCookieValue(request, pendingCookie(deps))) return redirectResponse(`/signin?next=${encodeURIComponent(next)}`);
        return twoFactorPage(request, next);
      },
      { detail: hide },
    )
    .post(
      "/signin/two-factor",
      async ({ request, body }) => {
        const next = safeNext(field(body, "next"));
        try {
          checkPreSessionCsrf(deps, request, field(body, "csrf"));
          const { session } = completeTwoFactor(deps, soleCookieValue(request, pendingCookie(deps)), field(body, "code"), clientMeta(request));
          return redirectResponse(next, sessionCookies(deps, session));
        } catch (e) {
          const err = asApiError(e);
          if (err.code === "TWO_FACTOR_REQUIRED") return signinPage(request, { next, error: err });
          return twoFactorPage(request, next, err);
        }
      },
      { detail: hide },
    )
    .get(
      "/signup",
      ({ request, query }) => {
        if (browserSession(deps, request)) return redirectResponse("/dashboard");
        return signupPage(request, { invite: typeof query.invite === "string" ? query.invite.slice(0, 100) : "" });
      },
      { detail: hide },
    )
    .post(
      "/signup",
      async ({ request, body }) => {
        const email = field(body, "email");
        const invite = field(body, "invite");
        try {
          checkPreSessionCsrf(deps, request, field(body, "csrf"));
          const { session } = await signUp(
            deps,
            { email, password: field(body, "password"), invite, remember: field(body, "remember") === "1" },
            clientMeta(request),
          );
          return redirectResponse("/dashboard", sessionCookies(deps, session));
        } catch (e) {
          return signupPage(request, { email, invite, error: asApiError(e) });
        }
      },
      { detail: hide },
    )
    .post(
      "/signout",
      async ({ request, body }) => {
        const s = browserSession(deps, request);
        if (s) {
          try {
            checkSessionCsrf(deps, s, field(body, "csrf"));
          } catch (e) {
            const error = asApiError(e);
            return htmlResponse(await renderPage({ title: "Sign out", user: s.user && { email: s.user.email, csrf: s.csrf }, body: alertBox(error.message) }), {
              error,
            });
          }
          destroySession(deps, sessionTokenOf(deps, request));
        }
        return redirectResponse("/signin?signed_out=1", [clearSessionCookie(deps), clearSudoCookie(deps)]);
      },
      { detail: hide },
    );
};
