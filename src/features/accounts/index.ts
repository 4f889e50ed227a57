// The accounts feature: users, accounts, plans, API keys, sessions and sign-in pages.
// What other features may use of it: they import "../accounts", never a file inside this folder.
export { createApiKey } from "./keys";
export { BucketPermissionSchema, ScopeSchema } from "./model";
export { planHelp, planLimitError, withPlanHelp } from "./plan-help";
export { capToRole, roleScope } from "./roles";
export { countUsers, defaultAccountOf, entitlementsOf, findUserByEmail, getAccount, normalizeEmail } from "./service";
export { accountsOfUser, actorFromSessionId, checkCsrf, createSession, switchSessionAccount } from "./sessions";
// Other features release what a revoked credential held (file locks) through this hook.
export { registerCredentialsEnded, runCredentialsEndedHooks } from "./credential-hooks";
export type { SessionRow } from "./sessions";
export { CONFIRM_PASSWORD_PATH, inSudoMode, requireSudo } from "./sudo";
export { twoFactorEnabled } from "./totp";
export { browserSession } from "./browser-session";
export type { BrowserSession } from "./browser-session";
export { dashboardSummary, recordDashboardVisit } from "./dashboard";
export { accountOwnerEmail } from "./service";
// Used by the CLI (pier admin, pier serve), the task table and the app outside src/features.
export { actorFromApiKey } from "./keys";
export { adminCreateAccount, adminCreateKey, adminCreateUser, adminDisableTwoFactor, adminSetPassword, bootstrap } from "./admin";
export { createInvite } from "./invites";
export { setPlan, setReadOnly } from "./service";
export { ownerPlanNote } from "./plan-help";
export { purgeExpiredSessionsAndInvites } from "./housekeeping";
export { actorFromApiKeyId } from "./keys";
export { changePassword, signOutEverywhere } from "./password";
export { passwordConfirmationPage } from "./pages-account";
export { adminListAccounts, adminListUsers, adminSetDisabled, adminSetInstanceAdmin } from "./admin";
export { getUser } from "./service";
export type { AdminAccountView, AdminUserView } from "./admin";
export { createNamedKey, listAccountKeys, revokeAccountKey } from "./access-keys";
export type { ApiKeyRow } from "./keys";
export { UNLIMITED } from "./plans";
export { timeZoneNames, updateAccountSettings } from "./settings";
