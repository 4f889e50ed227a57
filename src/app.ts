// buildApp(deps): the API/dashboard application. It never listens; the listener in
// src/http/server.ts routes by Host and calls app.handle (tests call it too).
import { Elysia } from "elysia";
import type { Deps } from "./core/context";
import { ApiError } from "./core/errors";
import { authenticate, authPlugin, type AuthOptions, type BearerResolver } from "./http/auth";
import { credentialChecks } from "./http/server";
import { baseHeaders, errorResponse, logUnexpected, toApiError } from "./http/envelope";
import { guideRoutes } from "./http/guides";
import { docsPageHeaders, docsRoutes, openapiPlugin } from "./http/openapi";
import { notFoundPage, wantsNotFoundPage } from "./http/pages/not-found";
import { allowedMethodsOf } from "./http/allowed-methods";
import { earlyBodyValidation, type RouteTable } from "./http/body-validation";
import { refuseRepeatedQueryFields } from "./http/repeated-query";
import { RateLimiter } from "./http/rate-limit";
import { requestId } from "./http/request-info";
import { actorFromApiKey } from "./features/accounts";
import { featureRoutes } from "./features";
import { agentActivityHook } from "./features/agent-auth";

export interface AppOptions {
  /** Extra bearer credential kinds (OAuth access tokens) tried after API keys. */
  resolvers?: BearerResolver[];
}

/** Whether the request carries a credential that resolves (a bad one counts as none). */
function hasValidCredential(deps: Deps, req: Request, opts: AuthOptions): boolean {
  try {
    return authenticate(deps, req, opts) !== null;
  } catch {
    return false;
  }
}

export function buildApp(deps: Deps, opts: AppOptions = {}) {
  // One set of credential checks and rate budgets for REST and hosted MCP alike.
  const authOptions: AuthOptions = {
    resolvers: [actorFromApiKey, ...(opts.resolvers ?? [])],
    accountLimiter: new RateLimiter(deps.config.rateLimitPerMinute),
    anonLimiter: new RateLimiter(deps.config.rateLimitAnonPerMinute),
  };
  const auth = authPlugin(deps, authOptions);

  // normalize: false — schemas with additionalProperties: false refuse unknown fields (422)
  // instead of silently dropping them.
  // The early body check reads the finished route table when the first request arrives.
  let mounted: RouteTable | null = null;
  const allowedMethods = allowedMethodsOf(() => mounted!);
  const app = new Elysia({ name: "pier", normalize: false })
    .onRequest(({ request, set }) => {
      Object.assign(set.headers, baseHeaders(requestId(request)));
      const docs = docsPageHeaders(new URL(request.url).pathname);
      if (docs) Object.assign(set.headers, docs);
    })
    .onError(({ request, error, code }) => {
      const id = requestId(request);
      // No route matched: a browser gets a page with a way back; API clients the envelope.
      if (code === "NOT_FOUND" && wantsNotFoundPage(request)) return notFoundPage({ ...baseHeaders(id), vary: "accept" });
      if (code === "NOT_FOUND") {
        const pathname = new URL(request.url).pathname;
        const allow = allowedMethods(request.method, pathname);
        if (allow.length > 0) {
          const refused = new ApiError("METHOD_NOT_ALLOWED", `${pathname} does not take ${request.method}: use ${allow.join(", ")}.`, { allow });
          const res = errorResponse(refused, id, deps.urls.baseUrl);
          res.headers.set("allow", allow.join(", "));
          return res;
        }
      }
      const apiError = toApiError(error, code as string);
      if (apiError.code === "INTERNAL" && !(error instanceof ApiError)) logUnexpected(deps.log, error, id);
      return errorResponse(apiError, id, deps.urls.baseUrl);
    })
    // Body sizes, read deadlines and JSON depth are enforced by the listener (src/http/server.ts).
    .use(earlyBodyValidation(() => mounted!))
    .use(refuseRepeatedQueryFields(() => mounted!))
    .use(agentActivityHook(deps))
    .use(openapiPlugin())
    .use(docsRoutes(deps))
    .use(guideRoutes())
    .use(featureRoutes(deps, auth, authOptions));
  mounted = app;
  credentialChecks.set(app, (req) => hasValidCredential(deps, req, authOptions));
  return app;
}

export type App = ReturnType<typeof buildApp>;
