// Read side of a publication's access settings, for GET /publications/:id/access (the route
// checks the actor; account-owner credentials may see the stored password).
import { and, asc, count, desc, eq, gt } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { CSV_PAGE, csvStream } from "../../core/csv";
import { pageWindow, pagination, type Pagination } from "../../core/paging";
import { siteLeads } from "../../db/schema";
import { getPublication, revealSitePassword } from "./publications";

import { LEADS_PAGE } from "./model";

export type LeadsPage = { limit?: number; offset?: number };

export interface SiteLead {
  email: string;
  first_access_at: string;
  last_access_at: string;
  access_count: number;
}

/** One page of the visitors who passed a require_email gate, most recent first. */
export function listLeads(deps: Deps, publicationId: string, page: LeadsPage = {}): { leads: SiteLead[]; pagination: Pagination } {
  const { limit, offset } = pageWindow(page, LEADS_PAGE);
  const where = eq(siteLeads.publicationId, publicationId);
  const leads = deps.db
    .select()
    .from(siteLeads)
    .where(where)
    .orderBy(desc(siteLeads.lastAccessAt), siteLeads.email)
    .limit(limit)
    .offset(offset)
    .all()
    .map((l) => ({ email: l.email, first_access_at: l.firstAccessAt, last_access_at: l.lastAccessAt, access_count: l.accessCount }));
  const total = deps.db.select({ n: count() }).from(siteLeads).where(where).get()!.n;
  return { leads, pagination: pagination(limit, offset, leads.length, total) };
}

export function accessDetails(deps: Deps, publicationId: string, opts: { revealPassword: boolean; leads?: LeadsPage }) {
  const pub = getPublication(deps, publicationId);
  const page = pub.accessMode === "require_email" ? listLeads(deps, pub.id, opts.leads) : null;
  const { limit, offset } = pageWindow(opts.leads ?? {}, LEADS_PAGE);
  return {
    access_mode: pub.accessMode,
    password_configured: pub.passwordHash !== null,
    access_password: opts.revealPassword && pub.accessMode === "password" ? revealSitePassword(deps, pub) : undefined,
    leads: page?.leads ?? [],
    leads_pagination: page?.pagination ?? pagination(limit, offset, 0, 0),
  };
}

/**
 * Every visitor who passed the site's require_email gate, as CSV (the Site tab's download), by
 * address: read a page at a time after the last address sent, so leads arriving meanwhile shift
 * nothing.
 */
export function leadsCsvStream(deps: Deps, publicationId: string): ReadableStream<Uint8Array> {
  return csvStream<string>(["Email", "First visit (UTC)", "Last visit (UTC)", "Visits"], (after) => {
    const rows = deps.db
      .select()
      .from(siteLeads)
      .where(and(eq(siteLeads.publicationId, publicationId), after === null ? undefined : gt(siteLeads.email, after)))
      .orderBy(asc(siteLeads.email))
      .limit(CSV_PAGE)
      .all();
    return {
      rows: rows.map((l) => [l.email, l.firstAccessAt, l.lastAccessAt, String(l.accessCount)]),
      next: rows.length === CSV_PAGE ? rows.at(-1)!.email : null,
    };
  });
}
