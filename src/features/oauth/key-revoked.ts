// A device login's `pier_api_key` and the connection's OAuth tokens are one credential given to
// one agent (D61). Revoking that key under API keys, where people look for what an agent holds,
// must end the agent's access, not only the key: the connection's refresh token would otherwise
// keep minting access tokens with the same scope for as long as the agent refreshes (D272).
import { and, inArray, isNull } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { oauthGrants } from "../../db/schema";
import type { Tx } from "../../db/tx";
import { revokeGrant } from "./grants";

/** Credentials-ended hook: the live connections whose API key just ended are revoked with it. */
export function revokeGrantsOfEndedKeys(deps: Deps, credentialIds: string[], tx: Tx): void {
  const grants = tx
    .select({ id: oauthGrants.id })
    .from(oauthGrants)
    .where(and(inArray(oauthGrants.apiKeyId, credentialIds), isNull(oauthGrants.revokedAt)))
    .all();
  // revokeGrant runs the hooks again with [grant, key]; the grant is revoked by then, so this
  // finds nothing and the recursion ends there.
  for (const g of grants) revokeGrant(deps, g.id, "api_key_revoked", tx);
}
