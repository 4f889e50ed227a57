// The notifications feature: account notifications.
// What other features may use of it: they import "../notifications", never a file inside this folder.
// Features that raise notifications (bucket deletes, failed builds, lapsed sites) write them here.
export { notifyAccount } from "./service";
export type { NewNotification } from "./service";
// Used by the dashboard's account pages.
export { listNotifications, NOTIFICATIONS_PAGE_MAX } from "./service";
