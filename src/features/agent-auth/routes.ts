import { Elysia, t } from "elysia";
import type { Actor, Deps } from "../../core/context";
import { must, type authPlugin } from "../../http/auth";
import { activityRecorder, listActivity } from "./activity";
import { capabilities } from "./service";

const tags = ["Agent auth"];

export const agentAuthRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "agent-auth" })
    .use(auth)
    .get("/api/v1/agent_auth/capabilities", () => ({ data: capabilities(deps) }), {
      auth: "public",
      detail: { tags, summary: "Machine-readable manifest of the ways an agent can authenticate (device flow, PKCE, MCP, scopes)" },
    })
    .get("/api/v1/agent_auth/activity", ({ actor, query }) => ({ data: { activity: listActivity(deps, must(actor), query.limit ?? 100) } }), {
      auth: "bucket_admin",
      query: t.Object({ limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500 })), account_id: t.Optional(t.String()) }),
      detail: { tags, summary: "Agent activity log (User-Agent and X-Pier-Agent* per credential); account owner only" },
    });

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
