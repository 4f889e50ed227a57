// Which bucket a folder command means: --bucket ID, else the account's active bucket titled like
// the folder (the rule publish sessions apply on the server, so publish, push and unpublish of
// one folder meet the same bucket).
import { CliError } from "./errors";
import type { PierClient } from "./http";

export interface BucketRef {
  id: string;
  title: string;
}

interface ListedBucket extends BucketRef {
  archived?: boolean;
  deletion?: unknown;
}

/** Every item of a list endpoint, following `pagination` when the server pages the list. */
export async function listAll<T>(client: PierClient, path: string, field: string): Promise<T[]> {
  const out: T[] = [];
  const sep = path.includes("?") ? "&" : "?";
  let next = path;
  for (let page = 0; page < 10_000; page++) {
    const data = await client.call<Record<string, unknown> & { pagination?: { has_more?: boolean; next_offset?: number | null; limit?: number } }>("GET", next);
    out.push(...((data[field] as T[] | undefined) ?? []));
    const p = data.pagination;
    if (!p?.has_more || p.next_offset === undefined || p.next_offset === null) break;
    next = `${path}${sep}offset=${p.next_offset}${p.limit ? `&limit=${p.limit}` : ""}`;
  }
  return out;
}

export async function findBucketByTitle(client: PierClient, title: string): Promise<BucketRef | null> {
  const wanted = title.trim();
  const found = (await listAll<ListedBucket>(client, "/api/v1/buckets", "buckets")).find((b) => b.title === wanted && !b.archived && !b.deletion);
  return found ? { id: found.id, title: found.title } : null;
}

/** --bucket, else the bucket titled `title`; created when `create` and none exists. */
export async function resolveBucket(
  client: PierClient,
  opts: { bucketId?: string; title: string; create: boolean },
): Promise<BucketRef & { created: boolean }> {
  if (opts.bucketId) {
    const { bucket } = await client.call<{ bucket: BucketRef }>("GET", `/api/v1/buckets/${encodeURIComponent(opts.bucketId)}`);
    return { id: bucket.id, title: bucket.title, created: false };
  }
  const found = await findBucketByTitle(client, opts.title);
  if (found) return { ...found, created: false };
  if (!opts.create) {
    throw new CliError(
      `no bucket titled "${opts.title.trim()}"`,
      "BUCKET_NOT_FOUND",
      "Pass --bucket ID (or --title TITLE) to say which bucket; GET /api/v1/buckets lists them.",
    );
  }
  const { bucket } = await client.call<{ bucket: BucketRef }>("POST", "/api/v1/buckets", { bucket: { title: opts.title.trim() } });
  return { id: bucket.id, title: bucket.title, created: true };
}
