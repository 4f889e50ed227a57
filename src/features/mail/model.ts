import { t } from "elysia";

export const InboundParams = t.Object({ id: t.String({ maxLength: 64 }) });
export const InboundQuery = t.Object({ account_id: t.Optional(t.String()) });
export const MessagesQuery = t.Object({
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500, description: "Page size: default 50, at most 500." })),
  offset: t.Optional(t.Numeric({ minimum: 0 })),
  unread: t.Optional(t.Union([t.Literal("true"), t.Literal("false")], { description: "`true`: only messages nobody has read yet." })),
  account_id: t.Optional(t.String()),
});
