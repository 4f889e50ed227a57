// What changed in a bucket since a version, for features that keep something else in step with
// it (git sync): the current content of every path changed after that version, from the change
// log's (bucket, version) index — O(changed paths), not O(files).
import { and, count, eq, gt, inArray } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { fileChanges, files } from "../../db/schema";
import type { BlobRef } from "./commit";

/** path -> its current blob, or null when the path no longer exists. */
export function pathsChangedSince(deps: Deps, bucketId: string, sinceVersion: number): Map<string, BlobRef | null> {
  const paths = deps.db
    .selectDistinct({ path: fileChanges.path })
    .from(fileChanges)
    .where(and(eq(fileChanges.bucketId, bucketId), gt(fileChanges.version, sinceVersion)))
    .all()
    .map((r) => r.path);
  const out = new Map<string, BlobRef | null>(paths.map((p) => [p, null]));
  for (let i = 0; i < paths.length; i += 500) {
    const rows = deps.db
      .select({ path: files.path, sha256: files.sha256, size: files.size, contentType: files.contentType, md5: files.md5 })
      .from(files)
      .where(and(eq(files.bucketId, bucketId), inArray(files.path, paths.slice(i, i + 500))))
      .all();
    for (const r of rows) out.set(r.path, { sha256: r.sha256, size: r.size, contentType: r.contentType, md5: r.md5 });
  }
  return out;
}

export function bucketFileCount(deps: Deps, bucketId: string): number {
  return deps.db.select({ n: count() }).from(files).where(eq(files.bucketId, bucketId)).get()?.n ?? 0;
}
