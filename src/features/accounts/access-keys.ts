// Account access: the account's API keys as managed from the dashboard (and the REST twin).
// Only a signed-in owner/admin or the account owner's own key may manage keys. Named keys are
// a plan entitlement (Free has none); revoking is always allowed.
import { and, eq, inArray } from "drizzle-orm";
import type { Actor, BucketPermission, Deps, Scope } from "../../core/context";
import { scopeRank } from "../../core/context";
import { ApiError } from "../../core/errors";
import { buckets } from "../../db/schema";
import { createApiKey, listApiKeys, revokeApiKey, type ApiKeyRow } from "./keys";
import { planHelp, planLimitError } from "./plan-help";
import { entitlementsOf, getAccount } from "./service";

export function assertCanManageKeys(actor: Actor): void {
  const manager = actor.scope === "bucket_admin" && actor.bucketAccess === "all" && (actor.kind === "session" || actor.isAccountOwner);
  if (!manager) {
    throw new ApiError("FORBIDDEN", "Managing API keys needs a signed-in account owner or admin, or the account owner's own key.", {
      required_scope: "bucket_admin",
    });
  }
}

export function listAccountKeys(deps: Deps, actor: Actor): ApiKeyRow[] {
  assertCanManageKeys(actor);
  return listApiKeys(deps, actor.accountId).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

export interface NamedKeyInput {
  label: string;
  permission_scope?: Scope;
  bucket_access?: "all" | "selected";
  bucket_permissions?: Record<string, BucketPermission>;
}

export function createNamedKey(deps: Deps, actor: Actor, input: NamedKeyInput): { key: string; record: ApiKeyRow } {
  assertCanManageKeys(actor);
  const account = getAccount(deps, actor.accountId);
  // Pages do not pass through the API's read-only guard; new credentials are a write. (Revoking
  // stays possible from the page: it only ever reduces access.)
  if (account.readOnly) throw new ApiError("ACCOUNT_READ_ONLY", "The account is read-only; new API keys cannot be created.", { read_only: true });
  const plan = deps.plans.get(account.plan);
  if (!entitlementsOf(deps, account).named_api_keys) {
    const help = planHelp(deps, account, (e) => e.named_api_keys);
    throw planLimitError(
      `Named API keys are not part of the ${plan.name} plan this account is on; AI connections (pier login, MCP) work on every plan.`,
      "named_api_keys",
      help,
      { plan: plan.id },
    );
  }
  const label = input.label.trim();
  if (!label || label.length > 100) throw new ApiError("VALIDATION_FAILED", "Give the key a name of 1-100 characters.", { field: "label" });
  const scope = input.permission_scope ?? "bucket_admin";
  if (scopeRank[scope] > scopeRank[actor.scope]) throw new ApiError("FORBIDDEN", `You cannot create a key with more than your own ${actor.scope} scope.`);
  const access = input.bucket_access ?? "all";
  const perms = input.bucket_permissions ?? {};
  if (access === "selected") {
    const ids = Object.keys(perms);
    if (!ids.length)
      throw new ApiError("VALIDATION_FAILED", "Pick at least one bucket for a key limited to selected buckets.", { field: "bucket_permissions" });
    const found = deps.db
      .select({ id: buckets.id })
      .from(buckets)
      .where(and(eq(buckets.accountId, account.id), inArray(buckets.id, ids)))
      .all();
    const missing = ids.filter((id) => !found.some((f) => f.id === id));
    if (missing.length) throw new ApiError("BUCKET_NOT_FOUND", `Not buckets of this account: ${missing.join(", ")}.`, { bucket_ids: missing });
  } else if (Object.keys(perms).length) {
    throw new ApiError("VALIDATION_FAILED", 'bucket_permissions is only for bucket_access "selected".', { field: "bucket_permissions" });
  }
  return createApiKey(deps, {
    accountId: account.id,
    userId: actor.userId,
    label,
    kind: "named",
    scope,
    bucketAccess: access,
    bucketPermissions: perms,
  });
}

export function revokeAccountKey(deps: Deps, actor: Actor, keyId: string): void {
  assertCanManageKeys(actor);
  revokeApiKey(deps, actor.accountId, keyId);
}
