// GET /api/v1/notifications: what Pier told the account (background bucket deletes, ...).
import { Elysia, t } from "elysia";
import type { Deps } from "../../core/context";
import { must, type authPlugin } from "../../http/auth";
import { limitQuery } from "../../http/paging";
import { listNotifications, NOTIFICATIONS_PAGE_DEFAULT, NOTIFICATIONS_PAGE_MAX } from "./service";

const NotificationsQuery = t.Object({
  ...limitQuery({
    defaultLimit: NOTIFICATIONS_PAGE_DEFAULT,
    maxLimit: NOTIFICATIONS_PAGE_MAX,
    description: `How many, newest first: default ${NOTIFICATIONS_PAGE_DEFAULT}, at most ${NOTIFICATIONS_PAGE_MAX}.`,
  }),
  account_id: t.Optional(t.String()),
});

export const notificationRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "notifications" })
    .use(auth)
    .get("/api/v1/notifications", ({ actor, query }) => ({ data: listNotifications(deps, must(actor), { limit: query.limit }) }), {
      auth: "bucket_read",
      query: NotificationsQuery,
      detail: { tags: ["Notifications"], summary: "The account's notifications, newest first (bucket_deleted, bucket_delete_failed, ...)" },
    });
