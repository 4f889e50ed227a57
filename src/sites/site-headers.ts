// A site's `_headers` outcome per answer, found once per path and deploy: the site server asks
// here instead of matching header patterns per request (docs/site-rules.md).
import type { SiteRules } from "../features/publish";
import type { Manifest } from "./directory";
import { applySiteHeaders, type SiteHeaderSet } from "./files";

/** Paths remembered per deploy, and distinct header sets interned per deploy. */
const PATHS_MAX = 1_000;
const SETS_MAX = 1_000;

/** How a header set applies: a custom domain (Set-Cookie allowed), a gated site, the preview's headers. */
export interface HeaderScope {
  custom: boolean;
  priv: boolean;
  /** A module-level constant object (it keys caches by identity). */
  extra: Record<string, string>;
}

/** The path's header set, remembered per path (bounded) so a hot path matches no patterns. */
export function siteHeadersFor(m: Manifest, rules: SiteRules, path: string, scope: HeaderScope, preview: boolean): SiteHeaderSet | null {
  // Bounded in entries and key length: a flood of long distinct paths costs matching, not memory.
  if (path.length > 200) return siteHeaderSet(m, rules.headers(path), scope, preview);
  const key = `${scope.custom ? 1 : 0}${scope.priv ? 1 : 0}${preview ? 1 : 0}/${path}`;
  const byPath = (m.headerSetByPath ??= new Map());
  let set = byPath.get(key);
  if (set === undefined) {
    if (byPath.size >= PATHS_MAX) byPath.clear();
    byPath.set(key, (set = siteHeaderSet(m, rules.headers(path), scope, preview)));
  }
  return set;
}

/**
 * One object per distinct `_headers` outcome of a deploy (most paths share a few), so the file
 * server's header cache keys on it. Bounded: a flood of distinct paths adds no new sets unless
 * their outcomes differ, and the table is dropped past its cap.
 */
function siteHeaderSet(m: Manifest, changes: Map<string, string | null> | null, scope: HeaderScope, preview: boolean): SiteHeaderSet | null {
  if (changes === null) return null;
  let key = `${scope.custom ? 1 : 0}${scope.priv ? 1 : 0}${preview ? 1 : 0}`;
  for (const [name, value] of changes) key += `\n${name}\t${value === null ? "\u0000" : value}`;
  const interned = (m.headerSets ??= new Map());
  let set = interned.get(key);
  if (set === undefined) {
    if (interned.size >= SETS_MAX) interned.clear();
    interned.set(key, (set = { changes, custom: scope.custom, priv: scope.priv, extra: scope.extra }));
  }
  return set;
}

/**
 * `_headers` on a site answer. Pier's protective headers were refused at build time; Set-Cookie
 * goes out on custom domains only (under the shared sites domain it could shadow another site's
 * or Pier's own cookies); a gated site stays uncacheable by shared caches whatever the file says;
 * the preview's noindex header is put back last.
 */
export function withSiteHeaders(res: Response, changes: Map<string, string | null>, scope: HeaderScope): Response {
  applySiteHeaders(res.headers, { changes, ...scope });
  return res;
}
