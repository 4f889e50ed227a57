import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import type { authPlugin } from "../../http/auth";
import { redirectResponse } from "../../http/html";
import { browserSession } from "../accounts";
import { apiIndex, homePage } from "./home";
import { getStatus } from "./service";

// A browser navigation asks for HTML; curl (Accept: */*) and API clients get JSON.
const wantsHtml = (req: Request) => (req.headers.get("accept") ?? "").includes("text/html");

export const statusRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "status" })
    .use(auth)
    .get(
      "/",
      ({ request, set }) => {
        if (wantsHtml(request)) {
          const res = redirectResponse(homePage(deps, browserSession(deps, request) !== null));
          res.headers.set("vary", "accept, cookie");
          return res;
        }
        set.headers.vary = "accept";
        return { data: apiIndex(deps) };
      },
      {
        auth: "public",
        detail: {
          tags: ["Status"],
          summary: "Where to start: browsers are sent to the dashboard, sign-in or (no user yet) sign-up; API clients get links to /docs and /api/v1/status",
        },
      },
    )
    .get("/api/v1/status", ({ actor }) => ({ data: getStatus(deps, actor) }), {
      auth: "public",
      detail: { tags: ["Status"], summary: "Server and client versions, publishing guidance, account state" },
    })
    .get("/api/v1/agent_auth/status", ({ actor }) => ({ data: getStatus(deps, actor) }), {
      auth: "any",
      detail: { tags: ["Agent auth"], summary: "Same payload as /status, for a credential" },
    });
