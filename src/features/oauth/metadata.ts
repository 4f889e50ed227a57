// Discovery documents: authorization server metadata (RFC 8414) and protected resource
// metadata (RFC 9728). The resource is the public MCP URL (`mcp-resource-url` overrides it
// for reverse proxies and tunnels); MCP clients require `resource` to equal the URL they use.
import type { Deps } from "../../core/context";
import { GRANT_TYPES } from "./clients";
import { OAuthError } from "./errors";
import { SUPPORTED_SCOPES } from "./scopes";

export function authorizationServerMetadata(deps: Deps) {
  const base = deps.urls.baseUrl;
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    device_authorization_endpoint: `${base}/oauth/device_authorization`,
    revocation_endpoint: `${base}/oauth/revoke`,
    revocation_endpoint_auth_methods_supported: ["none"],
    scopes_supported: SUPPORTED_SCOPES,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: [...GRANT_TYPES],
    token_endpoint_auth_methods_supported: ["none"],
    code_challenge_methods_supported: ["S256"],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${deps.urls.docsUrl}`,
  };
}

export function protectedResourceMetadata(deps: Deps) {
  return {
    resource: deps.urls.mcpUrl,
    authorization_servers: [deps.urls.baseUrl],
    scopes_supported: SUPPORTED_SCOPES,
    bearer_methods_supported: ["header"],
    resource_name: "Pier hosted MCP",
    resource_documentation: `${deps.urls.docsUrl}`,
  };
}

/** Where the MCP endpoint's 401 points clients: the path-suffixed RFC 9728 document. */
export function resourceMetadataUrl(deps: Deps): string {
  const u = new URL(deps.urls.mcpUrl);
  return `${u.origin}/.well-known/oauth-protected-resource${u.pathname === "/" ? "" : u.pathname}`;
}

/** RFC 8707 `resource`: absent, the MCP URL, or the API base URL; anything else is refused. */
export function checkResource(deps: Deps, resource: unknown): void {
  if (resource === undefined || resource === null || resource === "") return;
  const norm = (s: string) => s.replace(/\/$/, "");
  if (typeof resource === "string" && [deps.urls.mcpUrl, deps.urls.baseUrl].map(norm).includes(norm(resource))) return;
  throw new OAuthError("invalid_target", `Unknown resource. Use ${deps.urls.mcpUrl}.`);
}
