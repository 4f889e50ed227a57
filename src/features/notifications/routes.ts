// GET /api/v1/notifications: what Pier told the account (background bucket deletes, ...).
import { Elysia, t } from "elysia";
import type { Deps } from "../../core/context";
import { must, type authPlugin } from "../../http/auth";
import { pageQuery } from "../../http/paging";
import { listNotifications, NOTIFICATIONS_PAGE_DEFAULT, NOTIFICATIONS_PAGE_MAX } from "./service";

const NotificationsQuery = t.Object({
  ...pageQuery({ defaultLimit: NOTIFICATIONS_PAGE_DEFAULT, maxLimit: NOTIFICATIONS_PAGE_MAX, order: "newest first" }),
  account_id: t.Optional(t.String()),
});

export const notificationRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "notifications" })
    .use(auth)
    .get("/api/v1/notifications", ({ actor, query }) => ({ data: listNotifications(deps, must(actor), { limit: query.limit, offset: query.offset }) }), {
      auth: "bucket_read",
      query: NotificationsQuery,
      detail: {
        tags: ["Notifications"],
        summary: "The account's notifications, newest first, paged by limit/offset (bucket_deleted, bucket_delete_failed, ...)",
      },
    });
