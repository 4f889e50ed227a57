import { and, eq } from "drizzle-orm";
import { scopeRank, type Scope } from "../../core/context";
import { memberships } from "../../db/schema";
import type { DbOrTx } from "../../db/tx";

export type Role = "owner" | "admin" | "member";

/** The widest bucket scope a member with this role can hold (or grant to a key). */
export function roleScope(role: Role): Scope {
  return role === "member" ? "bucket_write" : "bucket_admin";
}

/**
 * `scope`, narrowed to what the user may give on the account now (bucket_read when they are not
 * a member). Credentials an agent asks for are capped when they are created, so the stored row
 * never claims more than its user could grant and a later promotion does not widen it; each use
 * is capped again by the role held then.
 */
export function capToRole(db: DbOrTx, accountId: string, userId: string, scope: Scope): Scope {
  const role = db
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.accountId, accountId), eq(memberships.userId, userId)))
    .get()?.role;
  const cap = role ? roleScope(role) : "bucket_read";
  return scopeRank[scope] <= scopeRank[cap] ? scope : cap;
}
