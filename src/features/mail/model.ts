import { t } from "elysia";
import { pageQuery } from "../../http/paging";

export const InboundParams = t.Object({ id: t.String({ maxLength: 64 }) });
export const InboundQuery = t.Object({ account_id: t.Optional(t.String()) });
export const MessagesQuery = t.Object({
  ...pageQuery({ defaultLimit: 50, maxLimit: 500, order: "arrival order" }),
  unread: t.Optional(t.Union([t.Literal("true"), t.Literal("false")], { description: "`true`: only messages nobody has read yet." })),
  account_id: t.Optional(t.String()),
});
