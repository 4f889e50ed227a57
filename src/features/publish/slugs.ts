// Choosing a public slug: suggestions are sanitized to DNS labels, the first free and valid one
// wins, otherwise a numeric suffix is appended; with no suggestion the bucket title is used, and
// a random slug only when nothing usable remains.
import { and, desc, eq, gt, ne, notInArray } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { randomToken } from "../../core/ids";
import { deploys, publications, slugHolds } from "../../db/schema";
import type { DbOrTx } from "../../db/tx";
import { MIN_SLUG_LENGTH, validateSlug } from "./publications";

/** Lowercase ASCII letters, digits and single inner hyphens, at most 50 characters. */
export function sanitizeSlug(raw: string): string {
  return raw
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 50)
    .replace(/-+$/, "");
}

function usable(slug: string): boolean {
  try {
    validateSlug(slug);
    return true;
  } catch {
    return false;
  }
}

/**
 * How long a slug a bucket let go stays its account's (D316): long enough that links, bookmarks
 * and search results pointing at it have faded before another account's site can answer there.
 */
export const SLUG_HOLD_DAYS = 90;

/** Who asks for a slug: the bucket that would hold it, its account, and when (holds expire). */
export interface SlugClaim {
  bucketId: string;
  accountId: string;
  now: string;
}

/**
 * Whether `slug` is not this bucket's to take: another bucket holds it, as its main site's or its
 * preview's (one namespace for both, since `<slug>` and `preview-<slug>` read as one site's two
 * addresses; a bucket's main site and preview share theirs), or another account let it go less
 * than SLUG_HOLD_DAYS ago.
 */
export function slugTaken(slug: string, claim: SlugClaim, db: DbOrTx): boolean {
  const inUse = db
    .select({ id: publications.id })
    .from(publications)
    .where(and(eq(publications.publicSlug, slug), ne(publications.bucketId, claim.bucketId)))
    .get();
  if (inUse) return true;
  const held = db
    .select({ slug: slugHolds.slug })
    .from(slugHolds)
    .where(and(eq(slugHolds.slug, slug), ne(slugHolds.accountId, claim.accountId), gt(slugHolds.heldUntil, claim.now)))
    .get();
  return !!held;
}

/**
 * Holds an account keeps at once: a further release lets its oldest hold go, so renaming in a
 * loop (or deleting bucket after bucket) cannot squat names without end.
 */
export const SLUG_HOLDS_PER_ACCOUNT = 20;

/**
 * Reserve the slug `bucketId` lets go for the account that had it, when a site was ever built
 * under it there (a name nothing was served at has no links to protect). A later release starts
 * the hold again.
 */
export function holdSlug(db: DbOrTx, bucketId: string, slug: string, accountId: string, now: Date): void {
  const served = db
    .select({ id: deploys.id })
    .from(deploys)
    .innerJoin(publications, eq(publications.id, deploys.publicationId))
    .where(and(eq(publications.bucketId, bucketId), eq(publications.publicSlug, slug)))
    .limit(1)
    .get();
  if (!served) return;
  const heldUntil = new Date(now.getTime() + SLUG_HOLD_DAYS * 86_400_000).toISOString();
  db.insert(slugHolds)
    .values({ slug, accountId, releasedAt: now.toISOString(), heldUntil })
    .onConflictDoUpdate({ target: slugHolds.slug, set: { accountId, releasedAt: now.toISOString(), heldUntil } })
    .run();
  const kept = db
    .select({ slug: slugHolds.slug })
    .from(slugHolds)
    .where(eq(slugHolds.accountId, accountId))
    .orderBy(desc(slugHolds.releasedAt))
    .limit(SLUG_HOLDS_PER_ACCOUNT)
    .all()
    .map((r) => r.slug);
  db.delete(slugHolds)
    .where(and(eq(slugHolds.accountId, accountId), notInArray(slugHolds.slug, kept)))
    .run();
}

/** A deleted bucket's slugs are held like renamed ones (a bucket-deletion hook: it runs while its publications still exist). */
export function holdBucketSlugs(deps: Deps, bucketId: string, db: DbOrTx): void {
  const rows = db
    .select({ slug: publications.publicSlug, accountId: publications.accountId })
    .from(publications)
    .where(eq(publications.bucketId, bucketId))
    .all();
  const now = deps.clock.now();
  for (const r of rows) holdSlug(db, bucketId, r.slug, r.accountId, now);
}

/** Holds past their end (the publish sweep runs it). */
export function pruneSlugHolds(deps: Deps): { slug_holds_removed: number } {
  const removed = deps.sqlite.query("DELETE FROM slug_holds WHERE held_until <= ?").run(deps.clock.now().toISOString()).changes;
  return { slug_holds_removed: removed };
}

/** Too-short candidates are padded with "-site" rather than refused: "blog" -> "blog-site". */
function padded(s: string): string {
  if (!s) return s;
  let out = s;
  while (out.length < MIN_SLUG_LENGTH) out += out === s ? "-site" : "s";
  return out;
}

export function pickSlug(claim: SlugClaim, suggestions: string[], bucketTitle: string, db: DbOrTx): string {
  const explicit = suggestions.map(sanitizeSlug).filter(Boolean);
  const candidates = explicit.length ? explicit : [padded(sanitizeSlug(bucketTitle))].filter(Boolean);
  const valid = candidates.filter(usable);
  for (const c of valid) if (!slugTaken(c, claim, db)) return c;
  const base = valid[0];
  if (base) {
    for (let n = 2; n < 1000; n++) {
      const c = `${base.slice(0, 45)}-${n}`;
      if (usable(c) && !slugTaken(c, claim, db)) return c;
    }
  }
  if (explicit.length && !valid.length) {
    // Every suggestion was reserved or unusable: say so rather than invent a name.
    throw new ApiError("VALIDATION_FAILED", `No usable slug among the suggestions (at least ${MIN_SLUG_LENGTH} characters, not reserved).`, {
      field: "slug_suggestions",
      min_length: MIN_SLUG_LENGTH,
      suggestions,
    });
  }
  for (;;) {
    const c = `site-${randomToken(8)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, "0")}`;
    if (usable(c) && !slugTaken(c, claim, db)) return c;
  }
}
