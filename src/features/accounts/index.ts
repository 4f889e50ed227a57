// The accounts feature: users, accounts, plans, API keys, sessions and sign-in pages.
// What other features may use of it: they import "../accounts", never a file inside this folder.
export { createApiKey } from "./keys";
export { BucketPermissionSchema, ScopeSchema } from "./model";
export { planHelp, planLimitError, withPlanHelp } from "./plan-help";
export { roleScope } from "./roles";
export { countUsers, defaultAccountOf, entitlementsOf, findUserByEmail, getAccount, normalizeEmail } from "./service";
export { checkCsrf, createSession, sessionCookie } from "./sessions";
export type { SessionRow } from "./sessions";
export { CONFIRM_PASSWORD_PATH, inSudoMode, requireSudo } from "./sudo";
export { twoFactorEnabled } from "./totp";
export { browserSession, checkPreSessionCsrf, clientMeta, preSessionCsrf, safeNext } from "./web/browser";
export { dashboardSummary, recordDashboardVisit } from "./dashboard";
export type { BrowserSession } from "./web/browser";
export { actorFromApiKeyId } from "./keys";
