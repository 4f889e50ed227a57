// MCP tools for a bucket's inbound email and (not yet) analytics. They call the same services
// as GET /api/v1/buckets/:id/inbound_email and .../inbound_email/messages.
import { t } from "elysia";
import type { Actor, Deps } from "../../core/context";
import { serverVersion } from "../../core/version";
import { loadBucket } from "../buckets";
import { getInboundEmail, listMessages, MESSAGES_PAGE_MAX } from "../mail";
import type { McpTool } from "./tools";

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
        offset: t.Optional(t.Integer({ minimum: 0, description: "With messages: pagination.next_offset of the previous page." })),
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
      "Site analytics of a bucket's publication. Not available in this version of Pier: the answer says so (available: false) and carries no figures. Do not estimate or invent traffic numbers. Needs bucket_read on the bucket.",
    inputSchema: t.Object({ bucket_id: BucketId }, { additionalProperties: false }),
    mutates: false,
    run: (deps: Deps, actor: Actor, a: { bucket_id: string }) => {
      // Access is checked as for any bucket read, so the answer reveals nothing about other accounts.
      const bucket = loadBucket(deps, actor, a.bucket_id, "bucket_read");
      return {
        available: false,
        bucket_id: bucket.id,
        server_version: serverVersion,
        message: `Analytics are not available in Pier ${serverVersion}: no visits are counted yet, so there are no figures to report.`,
      };
    },
  },
];
