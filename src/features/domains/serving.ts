// What the site server and the publish feature ask: which site an active custom domain serves,
// and which custom domain a bucket's site is served on.
import type { Deps } from "../../core/context";
import { findPublication } from "../publish";
import { activeDomainByHostname, activeDomainOfBucket, activeDomainsOfBuckets } from "./records";

/** The managed slug of the main site an active custom domain serves, or null. */
export function customDomainSlug(deps: Deps, hostname: string): string | null {
  const row = activeDomainByHostname(deps.db, hostname);
  if (!row) return null;
  return findPublication(row.bucketId, "main", deps.db)?.publicSlug ?? null;
}

/** The hostname of the bucket's active custom domain, or null. */
export function activeCustomDomain(deps: Deps, bucketId: string): string | null {
  return activeDomainOfBucket(deps, bucketId)?.hostname ?? null;
}

/** Active hostnames of a page of buckets, in one query (lists must not query per row). */
export function activeCustomDomains(deps: Deps, bucketIds: string[]): Map<string, string> {
  return new Map(activeDomainsOfBuckets(deps, bucketIds).map((d) => [d.bucketId, d.hostname]));
}
