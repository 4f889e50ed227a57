// OAuth scope strings: `pier:mcp` (the hosted MCP resource; every Pier token carries it) plus
// at most one meaningful permission scope. Permission scopes nest (admin > write > read), so
// when several are asked for the widest wins, as a union of permissions would.
import type { Scope } from "../../core/context";
import { scopeRank } from "../../core/context";
import { OAuthError } from "./errors";

export const MCP_SCOPE = "pier:mcp";
export const PERMISSION_SCOPES: Scope[] = ["bucket_read", "bucket_write", "bucket_admin"];
export const SUPPORTED_SCOPES = [MCP_SCOPE, ...PERMISSION_SCOPES];
export const DEFAULT_PERMISSION: Scope = "bucket_admin";

export interface ParsedScope {
  scope: string;
  permission: Scope;
}

export function parseScope(raw: string | undefined | null): ParsedScope {
  const parts = (raw ?? "").split(/\s+/).filter(Boolean);
  if (parts.length > 10) throw new OAuthError("invalid_scope", "Too many scope values.");
  let permission: Scope | null = null;
  for (const p of parts) {
    if (p === MCP_SCOPE) continue;
    if (!(PERMISSION_SCOPES as string[]).includes(p))
      throw new OAuthError("invalid_scope", `Unknown scope "${p.slice(0, 40)}". Supported: ${SUPPORTED_SCOPES.join(", ")}.`);
    const s = p as Scope;
    if (!permission || scopeRank[s] > scopeRank[permission]) permission = s;
  }
  const perm = permission ?? DEFAULT_PERMISSION;
  return { scope: `${MCP_SCOPE} ${perm}`, permission: perm };
}

/** What a scope lets an agent do, for consent pages. */
export const scopeMeaning: Record<Scope, string> = {
  bucket_read: "list and read your buckets' files",
  bucket_write: "create and update files in your buckets (no publishing)",
  bucket_admin: "create, update, publish, unpublish and manage your buckets",
};
