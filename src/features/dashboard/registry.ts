// Every dashboard page, one line each. Adding a page: write pages/<name>.ts exporting a
// DashboardPage, then add it to this list (docs/dashboard.md).
import type { DashboardPage } from "./page";
import { bucketsHome } from "./pages/buckets-home";
import { bucketPage } from "./pages/bucket";
import { analyticsPage } from "./pages/analytics";
import { accountAnalyticsPage } from "./pages/analytics-account";
import { bucketSettingsPage } from "./pages/bucket-settings";
import { domainsPage } from "./pages/domains";
import { emailPage } from "./pages/email";
import { filePage } from "./pages/file";
import { filesPage } from "./pages/files";
import { sitePage } from "./pages/site";
import { versionsPage } from "./pages/versions";
import { accountPlanPage } from "./pages/account-plan";
import { accountKeysPage } from "./pages/account-keys";
import { accountAgentsPage } from "./pages/account-agents";
import { accountNotificationsPage } from "./pages/account-notifications";
import { accountSecurityPage } from "./pages/account-security";
import { adminUsersPage } from "./pages/admin-users";
import { adminPlansPage } from "./pages/admin-plans";
import { adminOutboxPage } from "./pages/admin-outbox";
import { adminHealthPage } from "./pages/admin-health";
import { formsPage } from "./pages/forms";

import { gitPage } from "./pages/git";

// The order here is the order of the navigation and of the bucket tabs.
export const dashboardPages: DashboardPage[] = [
  bucketsHome,
  accountAnalyticsPage,
  bucketPage,
  filesPage,
  filePage,
  versionsPage,
  sitePage,
  emailPage,
  analyticsPage,
  domainsPage,
  bucketSettingsPage,
  accountPlanPage,
  accountKeysPage,
  accountAgentsPage,
  accountNotificationsPage,
  accountSecurityPage,
  adminUsersPage,
  adminPlansPage,
  adminOutboxPage,
  adminHealthPage,
  formsPage,

  gitPage,
];
