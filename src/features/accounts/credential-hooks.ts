// What other features do when credentials end for good (an API key revoked, an OAuth connection
// revoked with its key). Files releases the file locks they held (D257): accounts and oauth sit
// below files, so files registers a hook here instead of being imported by them.
import type { Deps } from "../../core/context";
import type { Tx } from "../../db/tx";

/** Runs inside the revoking transaction. */
export type CredentialsEndedHook = (deps: Deps, credentialIds: string[], tx: Tx) => void;

const hooks: CredentialsEndedHook[] = [];

export function registerCredentialsEnded(hook: CredentialsEndedHook): void {
  if (!hooks.includes(hook)) hooks.push(hook);
}

export function runCredentialsEndedHooks(deps: Deps, credentialIds: string[], tx: Tx): void {
  if (credentialIds.length === 0) return;
  for (const hook of hooks) hook(deps, credentialIds, tx);
}
