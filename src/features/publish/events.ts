// In-process notification that a publication's live state changed (deploy switched, access
// changed, unpublished), so the site server drops its cached lookup at once. The listeners are
// a field of the process's Deps, not a module global, so two Piers in one test process stay apart.
import type { Deps } from "../../core/context";

export interface SiteChange {
  publicationId: string;
}

export type SiteChangeListener = (change: SiteChange) => void;

export function onSiteChange(deps: Deps, listener: SiteChangeListener): () => void {
  const set = deps.siteChangeListeners;
  set.add(listener);
  return () => set.delete(listener);
}

/** Call after the transaction that changed the publication committed. */
export function emitSiteChange(deps: Deps, change: SiteChange): void {
  for (const l of deps.siteChangeListeners) l(change);
}
