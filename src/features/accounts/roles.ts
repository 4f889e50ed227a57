import type { Scope } from "../../core/context";

export type Role = "owner" | "admin" | "member";

/** The widest bucket scope a member with this role can hold (or grant to a key). */
export function roleScope(role: Role): Scope {
  return role === "member" ? "bucket_write" : "bucket_admin";
}
