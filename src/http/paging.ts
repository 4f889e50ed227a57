// One paging query for every list endpoint: `limit` and `offset` are whole numbers in range,
// so `?offset=1e20` or `?limit=1.5` is a 422 naming the field instead of reaching SQLite (500).
import { t } from "elysia";

/** Far past any real list, still a safe integer for SQLite's OFFSET. */
export const MAX_OFFSET = 1_000_000_000;

/**
 * The `limit`/`offset` query fields of a list. `x-field` names the field for the validation
 * envelope: Elysia re-checks a coerced query number on its own and then reports no path.
 */
export function pageQuery(opts: { defaultLimit: number; maxLimit: number; order?: string }) {
  return {
    ...limitQuery({
      ...opts,
      description: `Page size: default ${opts.defaultLimit}, at most ${opts.maxLimit}${opts.order ? ` (${opts.order})` : ""}.`,
    }),
    offset: t.Optional(
      t.Integer({
        minimum: 0,
        maximum: MAX_OFFSET,
        "x-field": "offset",
        description: "Items to skip: pass pagination.next_offset of the previous page (default 0).",
      }),
    ),
  };
}

/** A list query with only a `limit` (newest-first feeds that do not page further). */
export function limitQuery(opts: { defaultLimit: number; maxLimit: number; description?: string }) {
  return {
    limit: t.Optional(
      t.Integer({
        minimum: 1,
        maximum: opts.maxLimit,
        "x-field": "limit",
        description: opts.description ?? `How many: default ${opts.defaultLimit}, at most ${opts.maxLimit}.`,
      }),
    ),
  };
}
