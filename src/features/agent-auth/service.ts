// The machine-readable manifest of how an agent gets credentials here: which flows exist, their
// endpoints, the scopes, and the MCP URL. Agents read it instead of guessing.
import type { Deps } from "../../core/context";
import { serverVersion } from "../../core/version";
import { DEVICE_GRANT } from "../oauth";
import { tools } from "../mcp";
import { resourceMetadataUrl } from "../oauth";
import { DEFAULT_PERMISSION, MCP_SCOPE, PERMISSION_SCOPES } from "../oauth";
import { ACCESS_TOKEN_TTL_S, DEVICE_CODE_TTL_S, DEVICE_POLL_INTERVAL_S, REFRESH_TOKEN_TTL_S } from "../oauth";

export function capabilities(deps: Deps) {
  const base = deps.urls.baseUrl;
  return {
    server_version: serverVersion,
    preferred_flow: "device_authorization",
    api_key: { header: "Authorization: Bearer <API_KEY>", prefix: "pier_" },
    flows: {
      device_authorization: {
        available: true,
        description:
          "Register a public client, start a device authorization, open verification_uri_complete, show user_code as the Connection ID (a safety check only), poll the token endpoint; the token response adds pier_api_key.",
        registration_endpoint: `${base}/oauth/register`,
        device_authorization_endpoint: `${base}/oauth/device_authorization`,
        token_endpoint: `${base}/oauth/token`,
        verification_uri: `${base}/oauth/device`,
        grant_type: DEVICE_GRANT,
        register_with: { grant_types: [DEVICE_GRANT, "refresh_token"], token_endpoint_auth_method: "none" },
        interval_seconds: DEVICE_POLL_INTERVAL_S,
        expires_in_seconds: DEVICE_CODE_TTL_S,
        poll_errors: {
          authorization_pending: "wait interval seconds and poll again",
          slow_down: "add 5 seconds to the interval (the response carries the new interval)",
          access_denied: "the user denied the connection; stop",
          expired_token: "start again",
        },
        response_adds: ["pier_api_key"],
      },
      authorization_code: {
        available: true,
        description: "For remote MCP clients: authorization code with PKCE (S256 only), exact redirect URI match, consent in a signed-in browser.",
        authorization_endpoint: `${base}/oauth/authorize`,
        token_endpoint: `${base}/oauth/token`,
        registration_endpoint: `${base}/oauth/register`,
        code_challenge_methods: ["S256"],
      },
      refresh_token: { available: true, rotation: true, reuse_revokes_connection: true },
      email_code: {
        available: true,
        legacy: true,
        description:
          "POST request_code { email }, then verify_code { email, code, label, bucket_access, bucket_ids, bucket_permissions } for data.api_key. Never creates accounts; on INVALID_CODE fall back to device_authorization.",
        request_code: `${base}/api/v1/agent_auth/request_code`,
        verify_code: `${base}/api/v1/agent_auth/verify_code`,
        delivery: deps.config.smtpRelayUrl ? "smtp_relay" : "admin_outbox",
      },
      browser_login_link: {
        available: true,
        endpoint: `${base}/api/v1/agent_auth/browser_login_link`,
        description:
          "With the account owner's key or token (bucket_admin over all buckets): POST { redirect_path } for a one-time link (5 minutes) that signs the user's browser in. Refused for other credentials and for two-factor users; the browser must confirm the password before changing keys, two-factor or connections.",
      },
    },
    scopes: {
      oauth: [MCP_SCOPE, ...PERMISSION_SCOPES],
      permission_scopes: PERMISSION_SCOPES,
      default_permission_scope: DEFAULT_PERMISSION,
    },
    tokens: { access_token_ttl_seconds: ACCESS_TOKEN_TTL_S, refresh_token_ttl_seconds: REFRESH_TOKEN_TTL_S, api_key: "durable until revoked" },
    mcp: {
      url: deps.urls.mcpUrl,
      transport: "streamable-http (stateless, JSON responses)",
      auth: ["oauth_access_token", "api_key"],
      protected_resource_metadata: resourceMetadataUrl(deps),
      tools: tools.map((x) => ({ name: x.name, scope: x.scope })),
    },
    metadata: {
      authorization_server: `${base}/.well-known/oauth-authorization-server`,
      protected_resource: `${base}/.well-known/oauth-protected-resource`,
    },
    identification: {
      headers: [
        "User-Agent: <client>/<version> (<agent>)",
        "X-Pier-Agent",
        "X-Pier-Agent-Client",
        "X-Pier-Agent-Version",
        "X-Pier-Agent-Run-Id",
        "X-Pier-Agent-Project",
        "X-Pier-Agent-Task",
      ],
      activity_log: `${base}/api/v1/agent_auth/activity`,
    },
    revocation: { connections: `${base}/oauth/connections`, api: `${base}/api/v1/oauth/connections` },
    docs_url: deps.urls.docsUrl,
  };
}
