// Choosing a public slug: suggestions are sanitized to DNS labels, the first free and valid one
// wins, otherwise a numeric suffix is appended; with no suggestion the bucket title is used, and
// a random slug only when nothing usable remains.
import { and, eq, ne } from "drizzle-orm";
import { ApiError } from "../../core/errors";
import { randomToken } from "../../core/ids";
import { publications } from "../../db/schema";
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
 * Whether another bucket holds `slug`, as its main site's or its preview's: one namespace for
 * both, since `<slug>` and `preview-<slug>` read as one site's two addresses. A bucket's main site
 * and preview share theirs.
 */
export function slugTaken(slug: string, bucketId: string, db: DbOrTx): boolean {
  return !!db
    .select({ id: publications.id })
    .from(publications)
    .where(and(eq(publications.publicSlug, slug), ne(publications.bucketId, bucketId)))
    .get();
}

/** Too-short candidates are padded with "-site" rather than refused: "blog" -> "blog-site". */
function padded(s: string): string {
  if (!s) return s;
  let out = s;
  while (out.length < MIN_SLUG_LENGTH) out += out === s ? "-site" : "s";
  return out;
}

export function pickSlug(bucketId: string, suggestions: string[], bucketTitle: string, db: DbOrTx): string {
  const explicit = suggestions.map(sanitizeSlug).filter(Boolean);
  const candidates = explicit.length ? explicit : [padded(sanitizeSlug(bucketTitle))].filter(Boolean);
  const valid = candidates.filter(usable);
  for (const c of valid) if (!slugTaken(c, bucketId, db)) return c;
  const base = valid[0];
  if (base) {
    for (let n = 2; n < 1000; n++) {
      const c = `${base.slice(0, 45)}-${n}`;
      if (usable(c) && !slugTaken(c, bucketId, db)) return c;
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
    if (usable(c) && !slugTaken(c, bucketId, db)) return c;
  }
}
