// Account settings: the account resource (GET/PATCH /api/v1/account, the dashboard's account
// page). Today that is the time zone whose calendar days analytics count in; an IANA name from
// the runtime's own list (Intl.supportedValuesOf) or "UTC".
import { eq } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { accounts } from "../../db/schema";
import { getAccount, type AccountRow } from "./service";

const ZONES: readonly string[] = [...new Set([...Intl.supportedValuesOf("timeZone"), "UTC"])].sort();
const ZONE_SET = new Set(ZONES);

/** Every time-zone name the account setting accepts, sorted. */
export const timeZoneNames = (): readonly string[] => ZONES;

/** A known IANA time-zone name, exactly as the runtime spells it (e.g. `Europe/Berlin`). */
export function checkTimeZone(raw: unknown): string {
  if (typeof raw !== "string" || !ZONE_SET.has(raw))
    throw new ApiError("VALIDATION_FAILED", "time_zone must be an IANA time-zone name such as Europe/Berlin, or UTC.", { field: "time_zone" });
  return raw;
}

export function presentAccount(a: AccountRow) {
  return {
    id: a.id,
    name: a.name,
    state: a.readOnly ? "read_only" : "active",
    read_only: a.readOnly,
    time_zone: a.timeZone,
    created_at: a.createdAt,
  };
}

export function readAccount(deps: Deps, actor: Actor) {
  return presentAccount(getAccount(deps, actor.accountId));
}

/** Settings are the account's, not a bucket's: they need account-wide bucket_admin (an owner or admin). */
function assertCanChangeSettings(actor: Actor): void {
  // The same rule as hasAccountWideAdmin (buckets), spelled out: accounts sits below buckets.
  if (actor.scope !== "bucket_admin" || actor.bucketAccess !== "all")
    throw new ApiError("FORBIDDEN", "Changing account settings needs account-wide bucket_admin access (an account owner or admin).", {
      required_scope: "bucket_admin",
    });
}

export function updateAccountSettings(deps: Deps, actor: Actor, input: { time_zone?: unknown }) {
  assertCanChangeSettings(actor);
  const account = getAccount(deps, actor.accountId);
  const changes: Partial<AccountRow> = {};
  if (input.time_zone !== undefined) changes.timeZone = checkTimeZone(input.time_zone);
  if (Object.keys(changes).length === 0) return presentAccount(account);
  const updated = deps.db
    .update(accounts)
    .set({ ...changes, updatedAt: deps.clock.now().toISOString() })
    .where(eq(accounts.id, account.id))
    .returning()
    .get()!;
  return presentAccount(updated);
}
