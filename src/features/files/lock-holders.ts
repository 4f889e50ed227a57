// Whether a file lock's holder can still act (D257). A lock is a credential's reservation: once
// the credential is gone (API key revoked or expired, OAuth connection revoked, browser session
// signed out or expired, its user removed from the account or disabled), nobody could release
// the lock, which may last 7 days. Such a lock blocks nobody and is replaced or released freely;
// revoking a key or a connection also deletes its locks (releaseLocksOf, a hook of accounts).
import { inArray } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { fileLocks } from "../../db/schema";
import type { Tx } from "../../db/tx";
import { actorFromApiKeyId, actorFromSessionId } from "../accounts";
import { actorFromGrantId } from "../oauth";

function holderLive(deps: Deps, holderId: string): boolean {
  if (holderId.startsWith("key_")) return actorFromApiKeyId(deps, holderId) !== null;
  if (holderId.startsWith("cxn_")) return actorFromGrantId(deps, holderId) !== null;
  if (holderId.startsWith("ses_")) return actorFromSessionId(deps, holderId) !== null;
  // System writers take no file locks; anything else keeps its lock until it expires.
  return true;
}

/** A liveness check that asks once per holder (a bucket's locks are often one agent's). */
export function liveHolders(deps: Deps): (holderId: string) => boolean {
  const seen = new Map<string, boolean>();
  return (holderId) => {
    let live = seen.get(holderId);
    if (live === undefined) seen.set(holderId, (live = holderLive(deps, holderId)));
    return live;
  };
}

/** Delete the file locks these credentials held, in every bucket: they ended for good. */
export function releaseLocksOf(_deps: Deps, credentialIds: string[], tx: Tx): void {
  tx.delete(fileLocks).where(inArray(fileLocks.holderId, credentialIds)).run();
}
