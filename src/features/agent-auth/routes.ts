import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import type { authPlugin } from "../../http/auth";
import { capabilities } from "./service";

export const agentAuthRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "agent-auth" })
    .use(auth)
    .get("/api/v1/agent_auth/capabilities", () => ({ data: capabilities(deps) }), {
      auth: "public",
      detail: { tags: ["Agent auth"], summary: "Machine-readable manifest of the ways an agent can authenticate (device flow, PKCE, MCP, scopes)" },
    });
