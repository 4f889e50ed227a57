// Browser-based MCP clients (e.g. an inspector running on another origin) call discovery,
// registration, token and MCP endpoints with fetch. Those endpoints take no cookies (bearer
// tokens and public clients only), so allowing any origin exposes nothing a CLI could not do.
import { Elysia } from "elysia";

export const CORS_PATHS = [
  "/.well-known/oauth-authorization-server",
  "/.well-known/oauth-protected-resource",
  "/.well-known/oauth-protected-resource/mcp",
  "/oauth/register",
  "/oauth/token",
  "/oauth/device_authorization",
  "/oauth/revoke",
  "/mcp",
];

export function withCors(res: Response): Response {
  res.headers.set("access-control-allow-origin", "*");
  res.headers.set("access-control-expose-headers", "www-authenticate, mcp-session-id, mcp-protocol-version, x-request-id");
  return res;
}

export const corsPreflight = () =>
  CORS_PATHS.reduce(
    (app, path) =>
      app.options(
        path,
        () =>
          withCors(
            new Response(null, {
              status: 204,
              headers: {
                "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
                "access-control-allow-headers": "authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id",
                "access-control-max-age": "600",
              },
            }),
          ),
        { detail: { "x-pier-auth": "public", tags: ["OAuth"], summary: "CORS preflight (no cookies are used here)" } as Record<string, unknown> },
      ),
    new Elysia({ name: "oauth-cors" }),
  );
