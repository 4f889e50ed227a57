// The route table: every feature's routes mounted in one place (status first, as before).
import { Elysia } from "elysia";
import type { Deps } from "../core/context";
import type { AuthOptions, authPlugin } from "../http/auth";
import { statusRoutes } from "./status/routes";
import { accountRoutes } from "./accounts/routes";
import { bucketRoutes } from "./buckets/routes";
import { fileRoutes } from "./files/routes";
import { uploadRoutes } from "./files/uploads/routes";
import { versionRoutes } from "./files/versions/routes";
import { storageRoutes } from "./files/storage/routes";
import { mailRoutes } from "./mail/routes";
import { agentAuthRoutes } from "./agent-auth/routes";
import { mcpRoutes } from "./mcp/routes";
import { oauthRoutes } from "./oauth/routes";
import { publishRoutes } from "./publish/routes";
import { publishSessionRoutes } from "./publish/sessions/routes";
import { notificationRoutes } from "./notifications/routes";
import { dashboardRoutes } from "./dashboard";
import { domainRoutes } from "./domains";

import { analyticsRoutes } from "./analytics/routes";
import { formRoutes } from "./forms/routes";
import { gitSyncRoutes } from "./gitsync";

import { monitoringRoutes } from "./monitoring";

export const featureRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>, authOptions: AuthOptions) =>
  new Elysia({ name: "features" })
    .use(statusRoutes(deps, auth))
    .use(bucketRoutes(deps, auth))
    .use(accountRoutes(deps, auth))
    .use(fileRoutes(deps, auth))
    .use(uploadRoutes(deps, auth))
    .use(versionRoutes(deps, auth))
    .use(storageRoutes(deps, auth))
    .use(mailRoutes(deps, auth))
    .use(oauthRoutes(deps, auth))
    .use(mcpRoutes(deps, authOptions))
    .use(agentAuthRoutes(deps, auth))
    .use(publishRoutes(deps, auth))
    .use(publishSessionRoutes(deps, auth))
    .use(notificationRoutes(deps, auth))
    .use(dashboardRoutes(deps))
    .use(domainRoutes(deps, auth))
    .use(analyticsRoutes(deps, auth))
    .use(formRoutes(deps, auth))
    .use(gitSyncRoutes(deps, auth))
    .use(monitoringRoutes(deps, auth, authOptions));
