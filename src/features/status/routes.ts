import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import type { authPlugin } from "../../http/auth";
import { getStatus } from "./service";

export const statusRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "status" })
    .use(auth)
    .get("/api/v1/status", ({ actor }) => ({ data: getStatus(deps, actor) }), {
      auth: "public",
      detail: { tags: ["Status"], summary: "Server and client versions, publishing guidance, account state" },
    })
    .get("/api/v1/agent_auth/status", ({ actor }) => ({ data: getStatus(deps, actor) }), {
      auth: "any",
      detail: { tags: ["Agent auth"], summary: "Same payload as /status, for a credential" },
    });
