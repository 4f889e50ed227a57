// Which client asked for a publish over REST, recorded on the deploy it builds. The pier CLI
// names itself in its User-Agent (`pier-cli/<version>`); every other REST caller is "api".
// MCP tools and the dashboard pass their own trigger to the same services.
import type { DeployTrigger } from "../../db/schema";

export function triggerOf(request: Request): DeployTrigger {
  return (request.headers.get("user-agent") ?? "").startsWith("pier-cli/") ? "cli" : "api";
}
