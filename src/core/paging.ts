// The `pagination` object every paged list answers with (files, messages, versions, buckets,
// publications), and the clamping of the page a service was asked for.

export interface Pagination {
  limit: number;
  offset: number;
  total_count: number;
  has_more: boolean;
  next_offset: number | null;
}

export function pageWindow(page: { limit?: number; offset?: number }, defaults: { defaultLimit: number; maxLimit: number }): { limit: number; offset: number } {
  return {
    limit: Math.min(Math.max(Math.trunc(page.limit ?? defaults.defaultLimit), 1), defaults.maxLimit),
    offset: Math.max(Math.trunc(page.offset ?? 0), 0),
  };
}

export function pagination(limit: number, offset: number, returned: number, total: number): Pagination {
  const more = offset + returned < total;
  return { limit, offset, total_count: total, has_more: more, next_offset: more ? offset + returned : null };
}
