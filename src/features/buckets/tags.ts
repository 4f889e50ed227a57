// Tags: the account's reusable bucket labels (buckets.tag_paths), counted over the buckets
// the caller can see (a key limited to selected buckets sees only their labels).
import { eq } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { buckets } from "../../db/schema";
import { effectiveScope } from "./authorization";

export interface TagView {
  path: string;
  /** Buckets carrying the label, archived ones included. */
  bucket_count: number;
  active_bucket_count: number;
}

export function listTags(deps: Deps, actor: Actor): TagView[] {
  const rows = deps.db
    .select({ id: buckets.id, tagPaths: buckets.tagPaths, archivedAt: buckets.archivedAt })
    .from(buckets)
    .where(eq(buckets.accountId, actor.accountId))
    .all();
  const tags = new Map<string, TagView>();
  for (const b of rows) {
    if (!effectiveScope(actor, b.id)) continue;
    for (const path of b.tagPaths) {
      const tag = tags.get(path) ?? { path, bucket_count: 0, active_bucket_count: 0 };
      tag.bucket_count++;
      if (!b.archivedAt) tag.active_bucket_count++;
      tags.set(path, tag);
    }
  }
  return [...tags.values()].sort((a, b) => a.path.localeCompare(b.path, "en", { sensitivity: "base" }) || a.path.localeCompare(b.path));
}
