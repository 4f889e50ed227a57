// Which host names may start an ACME order: only names Pier's own configuration or database
// knows (GoatCounter's acme HostPolicy). Everything else is refused before anything is stored or
// sent, so a flood of random SNI or Host names costs one indexed lookup each and no ACME
// traffic. The checks are one list, read top to bottom; a host is allowed when any check says so.
import { and, eq, inArray } from "drizzle-orm";
import type { Deps } from "../core/context";
import { publications } from "../db/schema";
import { customDomainWantsCertificate } from "../features/domains";

export interface HostCheck {
  name: string;
  allows(host: string, deps: Deps): boolean;
}

/** The name of the API/dashboard host (the base URL's host). */
export const apiHostname = (deps: Deps): string => new URL(deps.urls.baseUrl).hostname;

/** The MX host's name: --mx-host, else the base URL's host (where the MX record is expected to point). */
export const mxHostname = (deps: Deps): string => deps.config.mxHost ?? apiHostname(deps);

/** A publication is live when it has a deploy and is neither unpublished nor past its expiry. */
function liveSiteLabel(label: string, deps: Deps): boolean {
  const preview = label.startsWith("preview-");
  const slug = preview ? label.slice("preview-".length) : label;
  if (!slug) return false;
  const row = deps.db
    .select({ deployId: publications.currentDeployId, expiresAt: publications.expiresAt })
    .from(publications)
    .where(
      and(eq(publications.kind, preview ? "preview" : "main"), eq(publications.publicSlug, slug), inArray(publications.status, ["publishing", "published"])),
    )
    .get();
  if (!row || row.deployId === null) return false;
  return row.expiresAt === null || Date.parse(row.expiresAt) > deps.clock.now().getTime();
}

export const hostChecks: HostCheck[] = [
  { name: "api host", allows: (host, deps) => host === apiHostname(deps) },
  { name: "mx host", allows: (host, deps) => deps.config.smtpPort !== null && host === mxHostname(deps) },
  {
    name: "live site or preview (<slug> or preview-<slug> under the sites domain)",
    allows: (host, deps) => {
      const suffix = `.${deps.urls.sitesDomain}`;
      if (!host.endsWith(suffix)) return false;
      const label = host.slice(0, -suffix.length);
      return label.length > 0 && !label.includes(".") && liveSiteLabel(label, deps);
    },
  },
  { name: "verified custom domain", allows: (host, deps) => customDomainWantsCertificate(host, deps.db) },
];

const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** True when a certificate may be ordered for the host (already lower-case, no port, no trailing dot). */
export function hostAllowed(host: string, deps: Deps): boolean {
  // Syntax first: no IP literal (last label numeric), wildcard, underscore or over-long name reaches the database.
  if (!DNS_NAME.test(host) || /\.\d+$/.test(host)) return false;
  return hostChecks.some((c) => c.allows(host, deps));
}
