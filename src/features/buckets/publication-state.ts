// What the bucket feature needs to know about publishing, in one place: the Bucket resource
// (present.ts), archive, bulk archive and delete all go through these two functions.
import { eq, inArray, sql, type Placeholder } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { publications } from "../../db/schema";
import type { DbOrTx } from "../../db/tx";
import { isConnection, preparedPerDb } from "../../db/prepared";

export interface PublicationSummary {
  published: boolean;
  /** The live site's URL once published. */
  publicUrl: string | null;
  /** The Bucket resource's `website` object (null while the bucket was never published). */
  website: null | { public_url: string | null; status: string; published: boolean; lifecycle_active: boolean };
  /** A publication active enough to block archive/delete (publishing, published, unpublishing). */
  lifecycleActive: boolean;
}

type Row = typeof publications.$inferSelect;

/** Publishing, live or being taken down, and not past its expiry. */
function active(deps: Deps, p: Row): boolean {
  if (p.status === "unpublishing") return true;
  if (p.status !== "publishing" && p.status !== "published") return false;
  return p.expiresAt === null || p.expiresAt > deps.clock.now().toISOString();
}

const publicationsQuery = (db: DbOrTx, bucketId: string | Placeholder) => db.select().from(publications).where(eq(publications.bucketId, bucketId));
const preparedPublications = preparedPerDb((db) => publicationsQuery(db, sql.placeholder("bucketId")).prepare());

/** Publication state of one bucket: the main site decides `published`; a live preview also blocks archive/delete. */
export function publicationSummary(deps: Deps, bucketId: string, db: DbOrTx = deps.db): PublicationSummary {
  const rows = isConnection(db) ? preparedPublications(db).all({ bucketId }) : publicationsQuery(db, bucketId).all();
  return summarize(deps, rows, deps.customDomainOf(bucketId));
}

/** The same summary for a page of buckets in one query (lists must not query per row). */
export function publicationSummaries(deps: Deps, bucketIds: string[], db: DbOrTx = deps.db): Map<string, PublicationSummary> {
  const rows = bucketIds.length ? db.select().from(publications).where(inArray(publications.bucketId, bucketIds)).all() : [];
  const domains = deps.customDomainsOf(bucketIds);
  return new Map(
    bucketIds.map((id) => [
      id,
      summarize(
        deps,
        rows.filter((p) => p.bucketId === id),
        domains.get(id) ?? null,
      ),
    ]),
  );
}

function summarize(deps: Deps, rows: Row[], customDomain: string | null): PublicationSummary {
  const lifecycleActive = rows.some((p) => active(deps, p));
  const main = rows.find((p) => p.kind === "main");
  if (!main) return { published: false, publicUrl: null, website: null, lifecycleActive };
  const published = main.currentDeployId !== null && (main.status === "published" || main.status === "publishing") && active(deps, main);
  // An active custom domain becomes the site's address (the managed one keeps working).
  const url = deps.urls.siteUrl(customDomain ?? `${main.publicSlug}.${deps.urls.sitesDomain}`);
  return {
    published,
    publicUrl: published ? url : null,
    website: { public_url: url, status: main.status, published, lifecycle_active: active(deps, main) },
    lifecycleActive,
  };
}

/** True while archive and delete must be refused with `required_action: unpublish_first`. */
export function publicationLifecycleActive(deps: Deps, bucketId: string, db?: DbOrTx): boolean {
  return publicationSummary(deps, bucketId, db).lifecycleActive;
}
