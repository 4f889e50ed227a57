// The feature route table: every feature's routes mounted in one place.
import { Elysia } from "elysia";
import type { Deps } from "../core/context";
import type { AuthOptions, authPlugin } from "../http/auth";
import { accountRoutes } from "./accounts/routes";
import { bucketRoutes } from "./buckets/routes";
import { fileFeatureRoutes } from "./files";
import { mailRoutes } from "./mail/routes";
import { agentAuthRoutes } from "./agent-auth/routes";
import { mcpRoutes } from "./mcp/routes";
import { oauthRoutes } from "./oauth/routes";
import { publishFeatureRoutes } from "./publish/index";
import { notificationRoutes } from "./notifications/routes";

export const featureRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>, authOptions: AuthOptions) =>
  new Elysia({ name: "features" })
    .use(bucketRoutes(deps, auth))
    .use(accountRoutes(deps, auth))
    .use(fileFeatureRoutes(deps, auth))
    .use(mailRoutes(deps, auth))
    .use(oauthRoutes(deps, auth))
    .use(mcpRoutes(deps, authOptions))
    .use(agentAuthRoutes(deps, auth))
    .use(publishFeatureRoutes(deps, auth))
    .use(notificationRoutes(deps, auth));
