// Read side of a publication's access settings, for GET /publications/:id/access (the route
// checks the actor; account-owner credentials may see the stored password).
import { desc, eq } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { siteLeads } from "../../db/schema";
import { getPublication, revealSitePassword } from "./publications";

export interface SiteLead {
  email: string;
  first_access_at: string;
  last_access_at: string;
  access_count: number;
}

/** Visitors who passed a require_email gate, most recent first. */
export function listLeads(deps: Deps, publicationId: string): SiteLead[] {
  return deps.db
    .select()
    .from(siteLeads)
    .where(eq(siteLeads.publicationId, publicationId))
    .orderBy(desc(siteLeads.lastAccessAt))
    .all()
    .map((l) => ({ email: l.email, first_access_at: l.firstAccessAt, last_access_at: l.lastAccessAt, access_count: l.accessCount }));
}

export function accessDetails(deps: Deps, publicationId: string, opts: { revealPassword: boolean }) {
  const pub = getPublication(deps, publicationId);
  return {
    access_mode: pub.accessMode,
    password_configured: pub.passwordHash !== null,
    access_password: opts.revealPassword && pub.accessMode === "password" ? revealSitePassword(deps, pub) : undefined,
    leads: pub.accessMode === "require_email" ? listLeads(deps, pub.id) : [],
  };
}
