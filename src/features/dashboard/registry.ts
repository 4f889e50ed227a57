// Every dashboard page, one line each. Adding a page: write pages/<name>.ts exporting a
// DashboardPage, then add it to this list (docs/dashboard.md).
import type { DashboardPage } from "./page";
import { bucketsHome } from "./pages/buckets-home";
import { bucketPage } from "./pages/bucket";
import { analyticsPage } from "./pages/analytics";

export const dashboardPages: DashboardPage[] = [bucketsHome, bucketPage, analyticsPage];
