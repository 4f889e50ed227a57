import type { Actor, Deps } from "../../core/context";
import { clientVersion, serverVersion } from "../../core/version";
import { entitlementsOf, getAccount } from "../accounts";
import { hasAccountWideAdmin } from "../buckets";
import { listCertificates } from "../../acme";

export function getStatus(deps: Deps, actor: Actor | null) {
  const account = actor ? getAccount(deps, actor.accountId) : null;
  const ent = account ? entitlementsOf(deps, account) : null;
  return {
    server_version: serverVersion,
    client_version: clientVersion,
    publishing: {
      free_plan_available: deps.plans.has("free"),
      preview_recommended: true,
      recommendation: "Publish a preview first for a new or materially changed website, unless the user already reviewed it or asks to publish immediately.",
    },
    features: {
      github_sync: ent ? ent.github_sync && deps.config.gitSync === "on" : false,
      mcp: true,
      inbound_email: deps.config.smtpPort !== null,
    },
    account: account
      ? {
          id: account.id,
          name: account.name,
          state: account.readOnly ? "read_only" : "active",
          read_only: account.readOnly,
          permission_scope: actor!.scope,
          bucket_access: actor!.bucketAccess,
        }
      : null,
    urls: { base_url: deps.urls.baseUrl, docs_url: deps.urls.docsUrl, mcp_url: deps.urls.mcpUrl, sites_domain: deps.urls.sitesDomain },
    // Operator data: only the instance admin sees which hosts have certificates and why one failed,
    // and only through a credential with the whole account (a narrow key of theirs is a narrow key).
    ...(actor?.isInstanceAdmin && hasAccountWideAdmin(actor) ? { automatic_https: automaticHttps(deps) } : {}),
  };
}

function automaticHttps(deps: Deps) {
  return {
    enabled: deps.certificates !== null,
    certificates: listCertificates(deps).map((c) => ({
      host: c.host,
      status: c.status,
      expires_at: c.expiresAt,
      last_error: c.lastError,
      attempts: c.attempts,
      next_attempt_at: c.nextAttemptAt,
    })),
  };
}
