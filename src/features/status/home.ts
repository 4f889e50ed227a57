// What `/` on the API host offers: a browser goes where a newcomer should start (the
// dashboard when signed in, sign-up while the instance has no user yet, sign-in otherwise);
// an API client gets a small index of where things are. No HTTP here: the route picks.
import type { Deps } from "../../core/context";
import { serverVersion } from "../../core/version";
import { countUsers } from "../accounts";

/** The page a browser opening `/` is sent to. */
export function homePage(deps: Deps, signedIn: boolean): "/dashboard" | "/signup" | "/signin" {
  if (signedIn) return "/dashboard";
  return countUsers(deps) === 0 ? "/signup" : "/signin";
}

/** The JSON index at `/`: enough for a client (or a person with curl) to find everything else. */
export function apiIndex(deps: Deps) {
  const base = deps.urls.baseUrl;
  return {
    name: "Pier",
    version: serverVersion,
    docs_url: deps.urls.docsUrl,
    openapi_url: `${base}/docs/json`,
    errors_url: `${base}/docs/errors`,
    status_url: `${base}/api/v1/status`,
    dashboard_url: `${base}/dashboard`,
    signin_url: `${base}/signin`,
    signup_url: `${base}/signup`,
    mcp_url: deps.urls.mcpUrl,
    sites_domain: deps.urls.sitesDomain,
    /** True until the first user signs up (that user administers the instance). */
    setup_required: countUsers(deps) === 0,
  };
}
