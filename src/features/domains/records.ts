// Custom-domain rows: reads shared by the service, the re-check job and the site server.
import { and, eq, inArray, isNotNull, ne, sql, type Placeholder } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { customDomains } from "../../db/schema";
import type { DbOrTx } from "../../db/tx";
import { isConnection, preparedPerDb } from "../../db/prepared";
import { findPublication } from "../publish";

export type DomainRow = typeof customDomains.$inferSelect;

export function domainById(db: DbOrTx, id: string): DomainRow | undefined {
  return db.select().from(customDomains).where(eq(customDomains.id, id)).get();
}

export function bucketDomains(db: DbOrTx, bucketId: string): DomainRow[] {
  return db.select().from(customDomains).where(eq(customDomains.bucketId, bucketId)).all();
}

/** The row that verified this hostname (at most one: a unique index), other than `exceptId`. */
export function verifiedElsewhere(db: DbOrTx, hostname: string, exceptId: string): DomainRow | undefined {
  return db
    .select()
    .from(customDomains)
    .where(and(eq(customDomains.hostname, hostname), isNotNull(customDomains.verifiedAt), ne(customDomains.id, exceptId)))
    .get();
}

const activeDomainQuery = (db: DbOrTx, bucketId: string | Placeholder) =>
  db
    .select()
    .from(customDomains)
    .where(and(eq(customDomains.bucketId, bucketId), eq(customDomains.status, "active")));
const preparedActiveDomain = preparedPerDb((db) => activeDomainQuery(db, sql.placeholder("bucketId")).prepare());

export function activeDomainOfBucket(deps: Deps, bucketId: string, db: DbOrTx = deps.db): DomainRow | undefined {
  return isConnection(db) ? preparedActiveDomain(db).get({ bucketId }) : activeDomainQuery(db, bucketId).get();
}

export function activeDomainsOfBuckets(deps: Deps, bucketIds: string[], db: DbOrTx = deps.db): DomainRow[] {
  if (!bucketIds.length) return [];
  return db
    .select()
    .from(customDomains)
    .where(and(inArray(customDomains.bucketId, bucketIds), eq(customDomains.status, "active")))
    .all();
}

export function activeDomainByHostname(db: DbOrTx, hostname: string): DomainRow | undefined {
  return db
    .select()
    .from(customDomains)
    .where(and(eq(customDomains.hostname, hostname), eq(customDomains.status, "active")))
    .get();
}

/**
 * Capacity used by an account: every domain it holds, except a replacement waiting to take over
 * its bucket's active domain (it will take that one's place, not a new one).
 */
export function domainsCounted(db: DbOrTx, accountId: string): number {
  const rows = db
    .select({ bucketId: customDomains.bucketId, status: customDomains.status })
    .from(customDomains)
    .where(eq(customDomains.accountId, accountId))
    .all();
  const withActive = new Set(rows.filter((r) => r.status === "active").map((r) => r.bucketId));
  return rows.filter((r) => r.status === "active" || !withActive.has(r.bucketId)).length;
}

/**
 * For the ACME host policy: may Pier obtain a certificate for this host as a custom domain? Only
 * when its ownership and traffic records were verified (a row is deleted when its domain is) and
 * its bucket's site is live: an unpublished site's name serves nothing, so anyone sending it as
 * a Host header or SNI name must not start (or keep renewing) an order.
 */
export function customDomainWantsCertificate(host: string, db: DbOrTx): boolean {
  const row = db
    .select({ bucketId: customDomains.bucketId })
    .from(customDomains)
    .where(and(eq(customDomains.hostname, host.toLowerCase().replace(/\.$/, "")), isNotNull(customDomains.verifiedAt)))
    .get();
  if (!row) return false;
  const pub = findPublication(row.bucketId, "main", db);
  return !!pub && (pub.status === "published" || pub.status === "publishing") && pub.currentDeployId !== null;
}
