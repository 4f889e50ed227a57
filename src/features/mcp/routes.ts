// The hosted MCP endpoint: stateless Streamable HTTP (a server and transport per POST, JSON
// responses, no session id). Bearer credentials only (OAuth access tokens and API keys, never
// the browser cookie, so a cross-site page cannot drive tools). Without a valid credential the
// 401 carries `WWW-Authenticate: Bearer resource_metadata=...` so MCP clients discover OAuth.
// This route authenticates itself instead of using the `auth` macro: the macro's 401 has no
// WWW-Authenticate, and its read-only check would refuse read tools too (POST is a mutation).
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Elysia } from "elysia";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { bearerToken, type AuthOptions } from "../../http/auth";
import { errorResponse } from "../../http/envelope";
import { clientKey, requestId } from "../../http/request-info";
import { withCors } from "../oauth";
import { resourceMetadataUrl } from "../oauth";
import { buildMcpServer } from "./server";

/** Tool arguments are JSON with at most a text file in them; binary bytes go through the upload endpoints. */
export const MAX_MCP_BODY_BYTES = 1024 * 1024;

/**
 * Streamable HTTP clients must accept both JSON and SSE; this server only ever answers JSON, so
 * a client that asks for JSON alone (curl, plain HTTP tooling) is served instead of getting 406.
 */
function acceptingJson(request: Request): Request {
  const accept = request.headers.get("accept") ?? "";
  if (accept.includes("text/event-stream") && accept.includes("application/json")) return request;
  const headers = new Headers(request.headers);
  headers.set("accept", "application/json, text/event-stream");
  return new Request(request, { headers });
}

/** `auth` is the app's: the same credential kinds and the same per-account budget as REST. */
export const mcpRoutes = (deps: Deps, auth: AuthOptions) => {
  const unauthorized = (request: Request, presented: boolean) => {
    const res = errorResponse(
      new ApiError(
        "UNAUTHORIZED",
        presented
          ? "The access token or API key is invalid, revoked or expired."
          : "Connect with OAuth (see the resource metadata) or send an API key as a Bearer token.",
      ),
      requestId(request),
      deps.urls.baseUrl,
    );
    const params = [`resource_metadata="${resourceMetadataUrl(deps)}"`, ...(presented ? ['error="invalid_token"'] : [])];
    res.headers.set("www-authenticate", `Bearer ${params.join(", ")}`);
    return res;
  };

  const methodNotAllowed = (request: Request) => {
    const res = errorResponse(
      new ApiError("METHOD_NOT_ALLOWED", "The hosted MCP server is stateless: POST JSON-RPC messages; there is no SSE stream or session to delete."),
      requestId(request),
      deps.urls.baseUrl,
    );
    res.headers.set("allow", "POST");
    return res;
  };

  return new Elysia({ name: "mcp" })
    .post(
      "/mcp",
      async ({ request }) => {
        const token = bearerToken(request);
        let actor: Actor | null = null;
        for (const resolve of token ? auth.resolvers : []) if ((actor = resolve(deps, token!))) break;
        if (!actor) {
          auth.anonLimiter.take(`ip:${clientKey(request)}`);
          return withCors(unauthorized(request, token !== null));
        }
        const charge = (accountId: string) => auth.accountLimiter.take(`acct:${accountId}`);
        charge(actor.accountId);
        deps.agentActivity.record(actor, request);
        const server = buildMcpServer(deps, actor, charge);
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
          maxRequestBodySize: MAX_MCP_BODY_BYTES,
        });
        await server.connect(transport);
        try {
          return withCors(await transport.handleRequest(acceptingJson(request)));
        } finally {
          await transport.close();
          await server.close();
        }
      },
      {
        parse: "none",
        detail: {
          "x-pier-auth": "any",
          tags: ["MCP"],
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["jsonrpc", "method"],
                  properties: { jsonrpc: { const: "2.0" }, id: { type: ["string", "integer"] }, method: { type: "string" }, params: { type: "object" } },
                },
              },
            },
          },
          summary: "Hosted MCP (stateless Streamable HTTP, JSON-RPC over POST); Bearer OAuth access token or API key",
        } as Record<string, unknown>,
      },
    )
    .get("/mcp", ({ request }) => methodNotAllowed(request), {
      detail: { "x-pier-auth": "public", tags: ["MCP"], summary: "405: stateless server, no SSE stream" } as Record<string, unknown>,
    })
    .delete("/mcp", ({ request }) => methodNotAllowed(request), {
      detail: { "x-pier-auth": "public", tags: ["MCP"], summary: "405: stateless server, no session to delete" } as Record<string, unknown>,
    });
};
