// Connections as the account access page shows them: which agent, what scope, when it was
// created and last used; revocable by the user who approved it or by the account owner.
import { and, desc, eq, isNull } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { apiKeys, oauthClients, oauthGrants } from "../../db/schema";
import { revokeGrant } from "./grants";
import { displayClientName } from "./clients";

function visible(actor: Actor) {
  const active = and(eq(oauthGrants.accountId, actor.accountId), isNull(oauthGrants.revokedAt));
  return actor.isAccountOwner ? active : and(active, eq(oauthGrants.userId, actor.userId ?? ""));
}

export function listConnections(deps: Deps, actor: Actor) {
  const rows = deps.db
    .select({ grant: oauthGrants, clientName: oauthClients.clientName, keyUsed: apiKeys.lastUsedAt, keyPrefix: apiKeys.displayPrefix })
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .leftJoin(apiKeys, eq(apiKeys.id, oauthGrants.apiKeyId))
    .where(visible(actor))
    .orderBy(desc(oauthGrants.createdAt))
    .all();
  return rows.map((r) => {
    const used =
      [r.grant.lastUsedAt, r.keyUsed]
        .filter((x): x is string => !!x)
        .sort()
        .at(-1) ?? null;
    return {
      id: r.grant.id,
      client_id: r.grant.clientId,
      client_name: displayClientName(r.clientName),
      flow: r.grant.flow,
      scope: r.grant.scope,
      permission_scope: r.grant.permissionScope,
      api_key_prefix: r.keyPrefix ?? null,
      user_id: r.grant.userId,
      created_at: r.grant.createdAt,
      last_used_at: used,
    };
  });
}

export type ConnectionView = ReturnType<typeof listConnections>[number];

export function revokeConnection(deps: Deps, actor: Actor, id: string): void {
  const grant = deps.db
    .select({ id: oauthGrants.id })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.id, id), visible(actor)))
    .get();
  if (!grant) throw new ApiError("CONNECTION_NOT_FOUND", `Connection ${id.slice(0, 64)} was not found.`);
  revokeGrant(deps, grant.id, "revoked_by_user");
}
