// Inbound email routes: the address state and the received messages with their read status.
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import { must, type authPlugin } from "../../http/auth";
import { getInboundEmail, listMessages } from "./messages";
import { InboundParams, InboundQuery, MessagesQuery } from "./model";

const tags = ["Inbound email"];

export const mailRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "mail" })
    .use(auth)
    .get("/api/v1/buckets/:id/inbound_email", ({ actor, params }) => ({ data: getInboundEmail(deps, must(actor), params.id) }), {
      auth: "bucket_read",
      params: InboundParams,
      query: InboundQuery,
      detail: { tags, summary: "Receiving address state: ready, address, blocked_reason, received_count, last_received_path" },
    })
    .get(
      "/api/v1/buckets/:id/inbound_email/messages",
      ({ actor, params, query }) => ({
        data: listMessages(deps, must(actor), params.id, { limit: query.limit, offset: query.offset, unread: query.unread === "true" }),
      }),
      {
        auth: "bucket_read",
        params: InboundParams,
        query: MessagesQuery,
        detail: { tags, summary: "Received messages in arrival order with the shared read status (limit default 50, max 500)" },
      },
    );
