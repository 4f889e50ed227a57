// In-process notification that a publication's live state changed (deploy switched, access
// changed, unpublished), so the site server drops its cached lookup at once. Keyed by the
// process's Deps, not a module global, so two Piers in one test process stay apart.
import type { Deps } from "../../core/context";

export interface SiteChange {
  publicationId: string;
}

type Listener = (change: SiteChange) => void;
const listeners = new WeakMap<Deps, Set<Listener>>();

export function onSiteChange(deps: Deps, listener: Listener): () => void {
  let set = listeners.get(deps);
  if (!set) listeners.set(deps, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}

/** Call after the transaction that changed the publication committed. */
export function emitSiteChange(deps: Deps, change: SiteChange): void {
  for (const l of listeners.get(deps) ?? []) l(change);
}
