// MCP tools for a bucket's inbound email and its site's analytics. They call the same services
// as GET /api/v1/buckets/:id/inbound_email and .../inbound_email/messages.
import { t } from "elysia";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { publicationAnalytics, RANGES } from "../analytics";
import { findPublication } from "../publish";
import { loadBucket } from "../buckets";
import { getInboundEmail, listMessages, MESSAGES_PAGE_MAX } from "../mail";
import type { McpTool } from "./tools";
import { MAX_OFFSET } from "../../http/paging";

const BucketId = t.String({ pattern: "^bkt_[a-z0-9]{1,40}$", description: "Bucket id (bkt_...), from bucket_list." });

export const mailTools: McpTool[] = [
  {
    name: "inbound_email_get",
    scope: "bucket_read",
    description:
      "A bucket's receiving email address and its state: ready (use the address only when true), address, blocked_reason, received_count (a total, not an unread count) and last_received_path (the newest message folder; its decoded message is <last_received_path>message.json). With messages: true it also lists received messages in arrival order with the shared read status (unread: true for messages nobody has read). Read a message with bucket_file_read on its message_json_path (that marks it read). Needs bucket_read on the bucket.",
    inputSchema: t.Object(
      {
        bucket_id: BucketId,
        messages: t.Optional(t.Boolean({ description: "Also list received messages (arrival order, with read status)." })),
        unread: t.Optional(t.Boolean({ description: "With messages: only messages nobody has read yet." })),
        limit: t.Optional(t.Integer({ minimum: 1, maximum: MESSAGES_PAGE_MAX, description: "With messages: page size (default 50)." })),
        offset: t.Optional(t.Integer({ minimum: 0, maximum: MAX_OFFSET, description: "With messages: pagination.next_offset of the previous page." })),
      },
      { additionalProperties: false },
    ),
    mutates: false,
    run: (deps: Deps, actor: Actor, a: { bucket_id: string; messages?: boolean; unread?: boolean; limit?: number; offset?: number }) => {
      const inbound_email = getInboundEmail(deps, actor, a.bucket_id);
      if (!a.messages) return { inbound_email };
      return { inbound_email, ...listMessages(deps, actor, a.bucket_id, { limit: a.limit, offset: a.offset, unread: a.unread === true }) };
    },
  },
  {
    name: "analytics_get",
    scope: "bucket_read",
    description:
      "Website analytics of a bucket's publication (the same figures as GET /api/v1/publications/:id/analytics): totals (hits include bots, views exclude them, visitors is the sum of each day's unique visitors), previous_period_totals and diff_vs_previous_period (null means unavailable, never zero), daily (days are local dates of the account's time_zone, which the result names; hourly UTC timestamps for range 24h), top paths, referrers, countries, bots and paths_not_found. With details_visible false only totals.hits_all_time is a number. Report the figures as given; do not estimate or invent traffic numbers. Needs bucket_read on the bucket.",
    inputSchema: t.Object(
      {
        bucket_id: BucketId,
        preview: t.Optional(t.Boolean({ description: "The bucket's preview site instead of its main site." })),
        range: t.Optional(
          t.Union(
            RANGES.map((r) => t.Literal(r)),
            { description: "24h (hourly), 7d (default), 30d or 90d." },
          ),
        ),
        from: t.Optional(t.String({ maxLength: 32, description: "First day YYYY-MM-DD (a date in the account's time_zone), with to; overrides range." })),
        to: t.Optional(t.String({ maxLength: 32, description: "Last day YYYY-MM-DD (the account's time_zone), inclusive; a window is at most 90 days." })),
      },
      { additionalProperties: false },
    ),
    mutates: false,
    run: (deps: Deps, actor: Actor, a: { bucket_id: string; preview?: boolean; range?: string; from?: string; to?: string }) => {
      // Access is checked as for any bucket read, so the answer reveals nothing about other accounts.
      const bucket = loadBucket(deps, actor, a.bucket_id, "bucket_read");
      const pub = findPublication(bucket.id, a.preview ? "preview" : "main", deps.db);
      if (!pub)
        throw new ApiError("PUBLICATION_NOT_FOUND", `Bucket ${bucket.id} has no ${a.preview ? "preview" : "published site"}, so there are no analytics.`);
      return { bucket_id: bucket.id, publication_id: pub.id, analytics: publicationAnalytics(deps, actor, pub.id, { range: a.range, from: a.from, to: a.to }) };
    },
  },
];
