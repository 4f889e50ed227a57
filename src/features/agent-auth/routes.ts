import { Elysia } from "elysia";
import type { Actor, Deps } from "../../core/context";
import { must, type authPlugin } from "../../http/auth";
import { ApiError } from "../../core/errors";
import { htmlResponse, redirectResponse } from "../../http/html";
import { sessionCookie } from "../../http/session-cookie";
import { checkPreSessionCsrf, clientMeta, preSessionCsrf } from "../../http/browser";
import { alertBox, renderView } from "../../http/pages/layout";
import { activityRecorder, listActivity } from "./activity";
import { createLoginLink, peekLoginLink, useLoginLink } from "./login-link";
import { requestCode, verifyCode } from "./email-code";
import { RateLimiter } from "../../http/rate-limit";
import { clientIp, clientKey } from "../../http/request-info";
import { capabilities } from "./service";
import { ActivityQuery, LoginLinkBody, RequestCodeBody, VerifyCodeBody } from "./model";

const tags = ["Agent auth"];

export const agentAuthRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) => {
  // Per address: a handful of codes and guesses a minute is plenty for a person (wrong codes and
  // mailed codes have their own per-client limits in email-code.ts).
  const codeLimiter = new RateLimiter(10);
  const take = (key: string) => codeLimiter.take(key, deps.clock.now().getTime());
  return (
    new Elysia({ name: "agent-auth" })
      .use(auth)
      .post(
        "/api/v1/agent_auth/request_code",
        ({ request, body }) => {
          take(`request:${clientKey(request)}`);
          return { data: requestCode(deps, body, clientIp(request)) };
        },
        { auth: "public", body: RequestCodeBody, detail: { tags, summary: "Email a one-time code for an agent key (same answer for every valid address)" } },
      )
      .post(
        "/api/v1/agent_auth/verify_code",
        ({ request, body }) => {
          take(`verify:${clientKey(request)}`);
          return { data: verifyCode(deps, body, clientIp(request)) };
        },
        { auth: "public", body: VerifyCodeBody, detail: { tags, summary: "Trade the emailed code for an agent API key (INVALID_CODE on any failure)" } },
      )
      .get("/api/v1/agent_auth/capabilities", () => ({ data: capabilities(deps) }), {
        auth: "public",
        detail: { tags, summary: "Machine-readable manifest of the ways an agent can authenticate (device flow, PKCE, MCP, scopes)" },
      })
      .get("/api/v1/agent_auth/activity", ({ actor, query }) => ({ data: { activity: listActivity(deps, must(actor), query.limit ?? 100) } }), {
        auth: "bucket_admin",
        query: ActivityQuery,
        detail: { tags, summary: "Agent activity log (User-Agent and X-Pier-Agent* per credential); account owner only" },
      })
      // bucket_admin is the floor the route table shows; the service also needs the owner's
      // credential over all buckets (login-link.ts).
      .post("/api/v1/agent_auth/browser_login_link", ({ actor, body }) => ({ data: createLoginLink(deps, must(actor), body) }), {
        auth: "bucket_admin",
        body: LoginLinkBody,
        detail: {
          tags,
          summary:
            "One-time link that signs the user's browser in to the dashboard (5 minutes; the account owner's key with bucket_admin over all buckets only; refused for two-factor users)",
        },
      })
      // The link itself is a browser page: GET only shows a Continue button (prefetchers and link
      // scanners must not consume it), the POST (double-submit CSRF) signs in and redirects.
      .get(
        "/login_link/:token",
        async ({ request, params }) => {
          const csrf = preSessionCsrf(deps, request);
          try {
            const link = peekLoginLink(deps, params.token);
            return htmlResponse(
              await renderView(
                "oauth/login-link.html",
                { email: link.email, token: params.token, csrf: csrf.token, notice: alertBox(null) },
                { title: "Sign in" },
              ),
              { cookies: csrf.cookies },
            );
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            return htmlResponse(await renderView("oauth/login-link.html", { notice: alertBox(e.message) }, { title: "Sign in" }), { error: e });
          }
        },
        { detail: { hide: true } },
      )
      .post(
        "/login_link/:token",
        async ({ request, params, body }) => {
          try {
            checkPreSessionCsrf(deps, request, (body as Record<string, string> | undefined)?.csrf);
            const r = useLoginLink(deps, params.token, clientMeta(request));
            return redirectResponse(r.redirectPath, [sessionCookie(deps, r.session.token, r.session.maxAgeSeconds, false)]);
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            return htmlResponse(await renderView("oauth/login-link.html", { notice: alertBox(e.message) }, { title: "Sign in" }), { error: e });
          }
        },
        { detail: { hide: true } },
      )
  );
};

/**
 * Records every request made with a bearer credential into the activity log. Elysia applies a
 * global hook only to routes registered after it, so buildApp mounts this before any route.
 */
export const agentActivityHook = (deps: Deps, recorder = activityRecorder(deps)) =>
  new Elysia({ name: "agent-activity" }).onAfterResponse({ as: "global" }, (ctx) => {
    try {
      recorder.record((ctx as unknown as { actor?: Actor | null }).actor, ctx.request);
    } catch (e) {
      deps.log.warn("agent activity not recorded", { error: e instanceof Error ? e.message : String(e) });
    }
  });
