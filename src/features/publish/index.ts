// Publishing's routes: publications and publish sessions.
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import type { authPlugin } from "../../http/auth";
import { publishSessionRoutes } from "../publish-sessions/routes";
import { publishRoutes } from "./routes";

export const publishFeatureRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "publish-feature" }).use(publishRoutes(deps, auth)).use(publishSessionRoutes(deps, auth));
