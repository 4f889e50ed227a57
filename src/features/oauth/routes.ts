// OAuth 2.1 endpoints and pages. The JSON endpoints speak the OAuth wire formats (RFC 6749,
// 7591, 8414, 8628, 9728: `{ error, error_description }`), not Pier's envelope, because
// standard OAuth and MCP clients parse exactly those; they read their own bodies
// (`parse: "none"`) so a malformed body is an OAuth `invalid_request` too; they declare
// `auth: "public"`. The pages (device approval, consent, connections) are browser pages: like
// the account pages they check the signed-in session themselves (anonymous visitors go to
// /signin) and take CSRF-protected form posts.
import { Elysia } from "elysia";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { must, type authPlugin } from "../../http/auth";
import { htmlResponse, redirectResponse } from "../../http/html";
import { RateLimiter } from "../../http/rate-limit";
import { clientIp, clientKey } from "../../http/request-info";
import { checkCsrf, type SessionRow } from "../accounts";
import { getAccount } from "../accounts";
import { browserSession } from "../accounts";
import { CONFIRM_PASSWORD_PATH, inSudoMode, requireSudo } from "../accounts";
import { corsPreflight, withCors } from "./cors";
import { UserCodeGuard } from "./user-code-limits";
import { approveAuthorization, hasConsented, redirectWith, UntrustedRedirectError, validateAuthorizeRequest } from "./authorize";
import { registerClient } from "./clients";
import { listConnections, revokeConnection } from "./connections";
import { decideDevice, findPendingDevice, startDeviceAuthorization } from "./device";
import { OAuthError } from "./errors";
import { authorizationServerMetadata, protectedResourceMetadata, resourceMetadataUrl } from "./metadata";
import { connectionsPage, consentPage, deviceConfirmPage, deviceEntryPage, messagePage, type Viewer } from "./pages";
import { revokeToken, tokenRequest } from "./token";
import { formatUserCode } from "./credentials";

const tags = ["OAuth"];
const hide = { hide: true };

// RFC 6749 §5.2: invalid_client is 401, every other token/registration error 400.
const oauthStatus = (e: OAuthError) => (e.error === "invalid_client" ? 401 : e.error === "server_error" ? 500 : 400);

function json(status: number, body: unknown): Response {
  return withCors(
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", pragma: "no-cache" },
    }),
  );
}

async function oauthJson(status: number, fn: () => unknown): Promise<Response> {
  try {
    return json(status, await fn());
  } catch (e) {
    if (e instanceof OAuthError) return json(oauthStatus(e), e.toJSON());
    throw e;
  }
}

/**
 * Form-encoded (the OAuth default) or JSON bodies, as a flat object. Size and nesting were
 * already bounded by the listener (http/body-limit.ts, json-guard.ts) before this route ran.
 */
export async function readBody(request: Request): Promise<Record<string, unknown>> {
  const text = await request.text();
  const type = request.headers.get("content-type") ?? "";
  if (type.includes("application/json")) {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw new OAuthError("invalid_request", "The body is not valid JSON.");
    }
    if (!v || typeof v !== "object" || Array.isArray(v)) throw new OAuthError("invalid_request", "The body must be a JSON object.");
    return v as Record<string, unknown>;
  }
  return Object.fromEntries(new URLSearchParams(text));
}

/** A page's form post as a flat object (its size bounded by the listener's body limit). */
async function readPageForm(request: Request): Promise<Record<string, string>> {
  return Object.fromEntries(new URLSearchParams(await request.text()));
}

// No scripts at all; frame-ancestors stops clickjacking of the Confirm/Allow buttons. Not
// PAGE_CSP: its form-action 'self' would also block the consent form's 303 on to the client's
// redirect_uri (Chrome and Safari apply form-action to redirects after a submission:
// https://github.com/w3c/webappsec-csp/issues/8).
const OAUTH_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

async function html(body: string | Promise<string>, status = 200): Promise<Response> {
  return htmlResponse(await body, { status, csp: OAUTH_PAGE_CSP });
}

export const oauthRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) => {
  const codeGuard = new UserCodeGuard(deps.clock);
  const anon = new RateLimiter(deps.config.rateLimitAnonPerMinute);

  /** The signed-in browser, or null (pages then send the user to /signin and back). */
  const browser = (request: Request): { session: SessionRow; actor: Actor; viewer: Viewer } | null => {
    const s = browserSession(deps, request);
    if (!s) return null;
    return { session: s.session, actor: s.actor, viewer: { email: s.user.email, accountName: getAccount(deps, s.actor.accountId).name, csrf: s.csrf } };
  };
  const toSignin = (request: Request, path?: string) => {
    const u = new URL(request.url);
    return redirectResponse(`/signin?next=${encodeURIComponent(path ?? u.pathname + u.search)}`);
  };
  /**
   * Approving a connection mints a lasting credential for the account, so, like creating an API
   * key, it needs the password entered recently in this session: a session opened by a login
   * link, or one left signed in on a shared computer, cannot approve. Back on `path` afterwards.
   */
  const toConfirmPassword = (path: string) => redirectResponse(`${CONFIRM_PASSWORD_PATH}?next=${encodeURIComponent(path)}`);
  /** The wrong-code limits for this user and address: `check()` before a lookup, `miss()` after a failed one. */
  const codeLimits = (request: Request, actor: Actor) => {
    const userId = actor.userId!;
    const ip = clientIp(request);
    return { check: () => codeGuard.check(userId, ip), miss: () => codeGuard.miss(userId, ip) };
  };

  return (
    new Elysia({ name: "oauth" })
      .use(auth)
      .use(corsPreflight())
      .get("/.well-known/oauth-authorization-server", () => json(200, authorizationServerMetadata(deps)), {
        auth: "public",
        detail: { tags, summary: "Authorization server metadata (RFC 8414)" },
      })
      .get("/.well-known/oauth-protected-resource", () => json(200, protectedResourceMetadata(deps)), {
        auth: "public",
        detail: { tags, summary: "Protected resource metadata for the MCP URL (RFC 9728)" },
      })
      .get("/.well-known/oauth-protected-resource/mcp", () => json(200, protectedResourceMetadata(deps)), {
        auth: "public",
        detail: { tags, summary: "Protected resource metadata, path-suffixed form (RFC 9728 §3.1)" },
      })
      // Behind a proxy that publishes MCP under another path (mcp-resource-url), clients ask for
      // the metadata suffixed with that path; a proxy forwarding it unchanged reaches this route.
      .use((app) => {
        const suffixed = new URL(resourceMetadataUrl(deps)).pathname;
        return suffixed === "/.well-known/oauth-protected-resource/mcp" || suffixed === "/.well-known/oauth-protected-resource"
          ? app
          : app.get(suffixed, () => json(200, protectedResourceMetadata(deps)), {
              auth: "public",
              detail: { tags, summary: "Protected resource metadata under the public MCP path (mcp-resource-url)" },
            });
      })
      .post(
        "/oauth/register",
        ({ request }) => {
          anon.take(`register:${clientKey(request)}`);
          return oauthJson(201, async () => registerClient(deps, await readBody(request)));
        },
        { auth: "public", parse: "none", detail: { tags, summary: "Dynamic client registration (RFC 7591); public clients only" } },
      )
      .post(
        "/oauth/device_authorization",
        ({ request }) => {
          anon.take(`device:${clientKey(request)}`);
          return oauthJson(200, async () => startDeviceAuthorization(deps, await readBody(request)));
        },
        { auth: "public", parse: "none", detail: { tags, summary: "Start a device authorization (RFC 8628)" } },
      )
      .post("/oauth/token", ({ request }) => oauthJson(200, async () => tokenRequest(deps, await readBody(request))), {
        auth: "public",
        parse: "none",
        detail: { tags, summary: "Token endpoint: authorization_code (PKCE), device_code, refresh_token; device-code responses add pier_api_key" },
      })
      .post("/oauth/revoke", ({ request }) => oauthJson(200, async () => revokeToken(deps, await readBody(request))), {
        auth: "public",
        parse: "none",
        detail: { tags, summary: "Token revocation (RFC 7009): access token, refresh token or pier_api_key; ends the connection" },
      })

      // Device approval page.
      .get(
        "/oauth/device",
        ({ request }) => {
          const b = browser(request);
          if (!b) return toSignin(request);
          const raw = new URL(request.url).searchParams.get("user_code");
          if (!raw) return html(deviceEntryPage(b.viewer));
          // Another site sent the browser here: look nothing up (and count no miss), or any page
          // could spend the user's allowance of wrong codes. Links from the terminal arrive as
          // "none", Pier's own redirects as "same-origin"; browsers without the header are counted.
          const fetchSite = request.headers.get("sec-fetch-site");
          if (fetchSite && fetchSite !== "none" && fetchSite !== "same-origin") {
            return html(deviceEntryPage(b.viewer, "Enter the Connection ID your terminal shows to continue."));
          }
          const limits = codeLimits(request, b.actor);
          limits.check();
          const found = findPendingDevice(deps, raw);
          if (!found) {
            limits.miss();
            return html(deviceEntryPage(b.viewer, "This Connection ID is unknown, expired or already used. Start the login again from your terminal."), 404);
          }
          return html(
            deviceConfirmPage(b.viewer, {
              userCode: formatUserCode(found.device.userCode),
              clientName: found.client.clientName,
              permission: permissionOf(found.device.scope),
            }),
          );
        },
        { detail: { ...hide, tags, summary: "Device approval page" } },
      )
      .post(
        "/oauth/device",
        async ({ request }) => {
          const form = await readPageForm(request);
          const b = browser(request);
          if (!b) return toSignin(request, form.user_code ? `/oauth/device?user_code=${encodeURIComponent(form.user_code)}` : "/oauth/device");
          if (!checkCsrf(deps, b.session.id, form.csrf))
            return html(messagePage(b.viewer, "Form expired", "This form expired or came from another site. Open the link from your terminal again."), 403);
          const limits = codeLimits(request, b.actor);
          limits.check();
          if (form.action === "approve" && !inSudoMode(deps, request, b.session.id)) {
            return toConfirmPassword(form.user_code ? `/oauth/device?user_code=${encodeURIComponent(form.user_code)}` : "/oauth/device");
          }
          if (form.action === "approve" || form.action === "deny") {
            try {
              const { device } = decideDevice(deps, b.actor, form.user_code, form.action === "approve");
              const id = formatUserCode(device.userCode);
              return form.action === "approve"
                ? html(messagePage(b.viewer, "Connection confirmed", "You can close this window and return to your terminal.", id))
                : html(messagePage(b.viewer, "Connection denied", "Nothing was connected. You can close this window.", id));
            } catch (e) {
              if (!(e instanceof ApiError) || e.code !== "CONNECTION_NOT_FOUND") throw e;
              limits.miss();
              return html(deviceEntryPage(b.viewer, e.message), 404);
            }
          }
          const found = findPendingDevice(deps, form.user_code);
          if (!found) {
            limits.miss();
            return html(
              deviceEntryPage(b.viewer, "This Connection ID is unknown, expired or already used. Check it, or start the login again from your terminal."),
              404,
            );
          }
          return redirectResponse(`/oauth/device?user_code=${encodeURIComponent(formatUserCode(found.device.userCode))}`);
        },
        { parse: "none", detail: { ...hide, tags, summary: "Confirm or deny a device connection (form post with CSRF token)" } },
      )

      // Authorization code + PKCE: consent page.
      .get(
        "/oauth/authorize",
        ({ request }) => {
          const params = Object.fromEntries(new URL(request.url).searchParams);
          return authorizePage(request, params);
        },
        { detail: { ...hide, tags, summary: "Authorization endpoint (code + PKCE S256): consent page" } },
      )
      .post(
        "/oauth/authorize",
        async ({ request }) => {
          const form = await readPageForm(request);
          const { csrf, decision, ...params } = form;
          const b = browser(request);
          if (!b) return toSignin(request, `/oauth/authorize?${new URLSearchParams(params)}`);
          if (!checkCsrf(deps, b.session.id, csrf))
            return html(messagePage(b.viewer, "Form expired", "This form expired or came from another site. Start again from the application."), 403);
          let req;
          try {
            req = validateAuthorizeRequest(deps, params);
          } catch (e) {
            return authorizeFailure(e, b);
          }
          if (decision !== "approve")
            return redirectResponse(
              redirectWith(deps, req.redirectUri, { error: "access_denied", error_description: "The user denied the request.", state: req.state }),
            );
          if (!inSudoMode(deps, request, b.session.id)) return toConfirmPassword(`/oauth/authorize?${new URLSearchParams(params)}`);
          return redirectResponse(approveAuthorization(deps, b.actor, req));
        },
        { parse: "none", detail: { ...hide, tags, summary: "Consent decision (form post with CSRF token)" } },
      )

      // Connections: page and REST.
      .get(
        "/oauth/connections",
        ({ request }) => {
          const b = browser(request);
          if (!b) return toSignin(request);
          const notice = new URL(request.url).searchParams.has("revoked") ? "The connection was revoked." : undefined;
          return html(connectionsPage(b.viewer, listConnections(deps, b.actor), notice));
        },
        { detail: { ...hide, tags, summary: "Agent connections page" } },
      )
      .post(
        "/oauth/connections/:id/revoke",
        async ({ request, params }) => {
          const form = await readPageForm(request);
          const b = browser(request);
          if (!b) return toSignin(request, "/oauth/connections");
          if (!checkCsrf(deps, b.session.id, form.csrf)) return html(messagePage(b.viewer, "Form expired", "Reload the connections page and try again."), 403);
          if (!inSudoMode(deps, request, b.session.id)) return toConfirmPassword("/oauth/connections");
          revokeConnection(deps, b.actor, params.id);
          return redirectResponse("/oauth/connections?revoked=1");
        },
        { parse: "none", detail: { ...hide, tags, summary: "Revoke a connection (form post with CSRF token)" } },
      )
      .get("/api/v1/oauth/connections", ({ actor }) => ({ data: { connections: listConnections(deps, must(actor)) } }), {
        auth: "session",
        detail: { tags, summary: "List agent connections (OAuth grants) of the signed-in user's account" },
      })
      .delete(
        "/api/v1/oauth/connections/:id",
        ({ actor, params, request }) => {
          requireSudo(deps, request, must(actor));
          revokeConnection(deps, must(actor), params.id);
          return { data: { id: params.id, revoked: true } };
        },
        { auth: "session", detail: { tags, summary: "Revoke a connection: its tokens and API key stop working at once" } },
      )
  );

  /**
   * A bad authorization request. Anyone can register a client with any https redirect URI, so
   * sending errors there before a person has approved that client would make Pier an open
   * redirect (RFC 9700 §4.11.2). Errors go back to the client only for a signed-in user who has
   * an active connection with it; everyone else reads the error on Pier's own page.
   */
  function authorizeFailure(e: unknown, b: ReturnType<typeof browser>): Response | Promise<Response> {
    if (e instanceof UntrustedRedirectError) return html(messagePage(b?.viewer ?? null, "Cannot authorize", e.message), 400);
    if (e instanceof OAuthError) {
      const { redirect_uri, state, client_id } = e.extra as { redirect_uri: string; state?: string; client_id: string };
      if (b?.actor.userId && hasConsented(deps, b.actor.userId, client_id)) {
        return redirectResponse(redirectWith(deps, redirect_uri, { error: e.error, error_description: e.description, state }));
      }
      return html(messagePage(b?.viewer ?? null, "Cannot authorize", `The application's request is not valid (${e.error}): ${e.description}`), 400);
    }
    throw e;
  }

  function authorizePage(request: Request, params: Record<string, string>): Response | Promise<Response> {
    const b = browser(request);
    let req;
    try {
      req = validateAuthorizeRequest(deps, params);
    } catch (e) {
      return authorizeFailure(e, b);
    }
    if (!b) return toSignin(request);
    return html(
      consentPage(b.viewer, {
        clientName: req.client.clientName,
        redirectHost: new URL(req.redirectUri).host,
        permission: req.scope.permission,
        params: {
          response_type: "code",
          client_id: req.client.id,
          redirect_uri: req.redirectUri,
          state: req.state,
          code_challenge: req.codeChallenge,
          code_challenge_method: "S256",
          scope: req.scope.scope,
          resource: req.resource,
        },
      }),
    );
  }
};

function permissionOf(scope: string) {
  return (scope.split(" ").find((s) => s.startsWith("bucket_")) ?? "bucket_admin") as "bucket_read" | "bucket_write" | "bucket_admin";
}
