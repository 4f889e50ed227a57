// Analytics routes: validate, call one service function, wrap in { data: { analytics } }.
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import { must, type authPlugin } from "../../http/auth";
import { AnalyticsQuery, PublicationParams } from "./model";
import { accountAnalytics, publicationAnalytics } from "./service";

const tags = ["Analytics"];

export const analyticsRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "analytics" })
    .use(auth)
    .get("/api/v1/analytics", ({ actor, query }) => ({ data: { analytics: accountAnalytics(deps, must(actor), query) } }), {
      auth: "bucket_read",
      query: AnalyticsQuery,
      detail: {
        tags,
        summary: "Traffic of the account's sites (range 24h/7d/30d/90d, or from/to dates; days in the account's time_zone), with the previous period",
      },
    })
    .get(
      "/api/v1/publications/:id/analytics",
      ({ actor, params, query }) => ({ data: { analytics: publicationAnalytics(deps, must(actor), params.id, query) } }),
      {
        auth: "bucket_read",
        params: PublicationParams,
        query: AnalyticsQuery,
        detail: { tags, summary: "Traffic of one publication (same query and result as /api/v1/analytics)" },
      },
    );
