// What a plan refusal tells its two readers: the user learns what to ask the operator of this
// instance for, the operator learns the command that lifts the limit. Pier is self-hosted;
// there is no shop to send anyone to.
import { and, asc, eq } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { accounts, memberships, users } from "../../db/schema";
import type { Entitlements } from "./plans";
import type { AccountRow } from "./service";

export interface PlanHelp {
  /** For the user: what to ask the operator. */
  ask_operator: string;
  /** For the operator: the command that lifts the limit. */
  operator_hint: string;
  /** The plan the hint moves the account to (null when no defined plan would lift it). */
  suggested_plan: string | null;
}

/** Is this account owned by an instance admin (the operator's own account)? */
function ownedByInstanceAdmin(deps: Deps, accountId: string): boolean {
  return !!deps.db
    .select({ id: users.id })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.accountId, accountId), eq(memberships.role, "owner"), eq(users.isInstanceAdmin, true)))
    .get();
}

/**
 * The plan that would lift a refusal: the owner plan for the operator's own account, otherwise
 * the first defined plan (built-in order, then the plans file's) that allows it.
 */
export function liftingPlan(deps: Deps, account: AccountRow, allows: (e: Entitlements) => boolean): string | null {
  const candidates = deps.plans.ids().filter((id) => id !== account.plan && allows(deps.plans.get(id).entitlements));
  if (ownedByInstanceAdmin(deps, account.id) && candidates.includes(deps.config.ownerPlan)) return deps.config.ownerPlan;
  return candidates.find((id) => id !== deps.config.ownerPlan) ?? candidates[0] ?? null;
}

export function planHelp(deps: Deps, account: AccountRow, allows: (e: Entitlements) => boolean): PlanHelp {
  const plan = liftingPlan(deps, account, allows);
  if (!plan) {
    return {
      ask_operator: `Ask the operator of this Pier instance for a plan that allows this (account ${account.id} is on ${account.plan}).`,
      operator_hint: `No defined plan allows this: add one with --plans-file (see pier admin plans), then run pier admin account plan --account ${account.id} --plan <plan>`,
      suggested_plan: null,
    };
  }
  return {
    ask_operator: `Ask the operator of this Pier instance to move account ${account.id} to the ${plan} plan.`,
    operator_hint: `pier admin account plan --account ${account.id} --plan ${plan}`,
    suggested_plan: plan,
  };
}

/** The refusal's message with the way out appended (CLIs often show only the message). */
export function withPlanHelp(message: string, help: PlanHelp): string {
  return `${message} ${help.ask_operator} (Operator: ${help.operator_hint}.)`;
}

/**
 * The one answer to "the plan does not allow this" (a count limit or a feature the plan lacks):
 * 403 FORBIDDEN as the spec has it for a bucket without room, `details.reason: plan_limit` and
 * the entitlement that refused, so clients branch on one code and one reason.
 */
export function planLimitError(message: string, entitlement: keyof Entitlements, help: PlanHelp, details: Record<string, unknown> = {}): ApiError {
  return new ApiError("FORBIDDEN", withPlanHelp(message, help), { reason: "plan_limit", entitlement, ...details, ...help });
}

/**
 * Data dirs from before the owner plan: the instance admin's own account stayed on the default
 * plan. Pier does not move it by itself (it cannot tell that default from a plan the operator
 * chose); the start-up banner shows this line with the command instead.
 */
export function ownerPlanNote(deps: Deps): string | null {
  if (!deps.plans.has(deps.config.ownerPlan)) return null;
  const row = deps.db
    .select({ accountId: memberships.accountId, plan: accounts.plan })
    .from(users)
    .innerJoin(memberships, and(eq(memberships.userId, users.id), eq(memberships.role, "owner")))
    .innerJoin(accounts, eq(accounts.id, memberships.accountId))
    .where(eq(users.isInstanceAdmin, true))
    .orderBy(asc(users.createdAt), asc(accounts.createdAt))
    .get();
  if (!row || row.plan === deps.config.ownerPlan || row.plan !== deps.config.defaultPlan) return null;
  return `the instance admin's account ${row.accountId} is on the ${row.plan} plan; to give it every capability run: pier admin account plan --account ${row.accountId} --plan ${deps.config.ownerPlan}`;
}
