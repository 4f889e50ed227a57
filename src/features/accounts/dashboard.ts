// What a signed-in browser's dashboard shows about the user and account, and the dashboard
// visit record: a Free site stays active only while its owner opens the dashboard in a
// signed-in browser (API, CLI and MCP traffic never counts), so only page loads call this.
import { count, eq } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { accounts, buckets } from "../../db/schema";
import { getAccount, membership, type UserRow } from "./service";
import { twoFactorEnabled } from "./totp";

export function recordDashboardVisit(deps: Deps, actor: Actor): void {
  if (actor.kind !== "session") return;
  deps.db.update(accounts).set({ lastDashboardVisitAt: deps.clock.now().toISOString() }).where(eq(accounts.id, actor.accountId)).run();
}

export function dashboardSummary(deps: Deps, actor: Actor, user: UserRow) {
  const account = getAccount(deps, actor.accountId);
  const plan = deps.plans.get(account.plan);
  // Nothing made yet means someone new (just signed up, or an operator-made account opened for
  // the first time): they get a welcome and first steps, not "Welcome back".
  const newcomer = deps.db.select({ n: count() }).from(buckets).where(eq(buckets.accountId, account.id)).get()!.n === 0;
  return {
    newcomer,
    baseUrl: deps.urls.baseUrl,
    email: user.email,
    admin: user.isInstanceAdmin,
    twoFactor: twoFactorEnabled(user),
    accountId: account.id,
    accountName: account.name,
    role: (user.id && membership(deps, account.id, user.id)) ?? "member",
    planId: plan.id,
    planName: plan.name,
    namedKeys: plan.entitlements.named_api_keys,
    readOnly: account.readOnly,
    readOnlyReason: account.readOnlyReason ?? "",
  };
}
