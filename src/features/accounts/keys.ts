// API keys: `pier_` + 40 random chars. Only the SHA-256 is stored; the key is shown once.
import { and, eq, isNull } from "drizzle-orm";
import type { Actor, BucketPermission, Deps, Scope } from "../../core/context";
import { scopeRank } from "../../core/context";
import { sha256Hex } from "../../core/crypto";
import { ApiError } from "../../core/errors";
import { newId, randomToken } from "../../core/ids";
import { apiKeys } from "../../db/schema";
import { transaction, type DbOrTx } from "../../db/tx";
import { runCredentialsEndedHooks } from "./credential-hooks";
import { credentialQueries, memberOf } from "./credential-queries";
import { roleScope } from "./roles";
import { findAccount } from "./service";

export const KEY_PREFIX = "pier_";
export type ApiKeyRow = typeof apiKeys.$inferSelect;

export interface NewKeyInput {
  accountId: string;
  userId: string | null;
  label: string;
  kind: ApiKeyRow["kind"];
  scope: Scope;
  bucketAccess?: "all" | "selected";
  bucketPermissions?: Record<string, BucketPermission>;
  expiresAt?: string | null;
}

export function createApiKey(deps: Deps, input: NewKeyInput, db: DbOrTx = deps.db): { key: string; record: ApiKeyRow } {
  const key = KEY_PREFIX + randomToken(40);
  const now = deps.clock.now().toISOString();
  const record = db
    .insert(apiKeys)
    .values({
      id: newId("key"),
      accountId: input.accountId,
      userId: input.userId,
      label: input.label,
      tokenHash: sha256Hex(key),
      displayPrefix: key.slice(0, KEY_PREFIX.length + 6),
      kind: input.kind,
      permissionScope: input.scope,
      bucketAccess: input.bucketAccess ?? "all",
      bucketPermissions: input.bucketAccess === "selected" ? (input.bucketPermissions ?? {}) : {},
      createdAt: now,
      expiresAt: input.expiresAt ?? null,
    })
    .returning()
    .get();
  return { key, record };
}

/** The actor behind a bearer key, or null when the key is unknown, revoked or expired. */
export function actorFromApiKey(deps: Deps, token: string): Actor | null {
  if (!token.startsWith(KEY_PREFIX) || token.length > 200) return null;
  const row = credentialQueries(deps.db).liveKeyByHash.get({ hash: sha256Hex(token) });
  return row ? actorOfKey(deps, row, true) : null;
}

/** What a key may do now, by its id (null when revoked, expired or its user left the account); not a use of the key. */
export function actorFromApiKeyId(deps: Deps, keyId: string): Actor | null {
  const row = credentialQueries(deps.db).liveKeyById.get({ id: keyId });
  return row ? actorOfKey(deps, row, false) : null;
}

function actorOfKey(deps: Deps, row: ApiKeyRow, used: boolean): Actor | null {
  const now = deps.clock.now();
  if (row.expiresAt && row.expiresAt <= now.toISOString()) return null;
  if (!findAccount(deps, row.accountId)) return null;
  let roleCap: Scope = "bucket_admin";
  let isOwner = false;
  let isAdmin = false;
  if (row.userId) {
    const m = memberOf(deps.db, row.accountId, row.userId);
    if (!m) return null; // the key's user left the account: the key dies with the membership
    if (m.disabledAt) return null; // a disabled user's keys stop working until they are enabled
    roleCap = roleScope(m.role);
    isOwner = m.role === "owner";
    isAdmin = m.admin;
  }
  // Touch last_used_at at most once a minute: keys are checked on every request.
  if (used && (!row.lastUsedAt || now.getTime() - Date.parse(row.lastUsedAt) > 60_000)) {
    deps.db.update(apiKeys).set({ lastUsedAt: now.toISOString() }).where(eq(apiKeys.id, row.id)).run();
  }
  const scope = scopeRank[row.permissionScope] <= scopeRank[roleCap] ? row.permissionScope : roleCap;
  return {
    kind: "api_key",
    credentialId: row.id,
    userId: row.userId,
    accountId: row.accountId,
    scope,
    bucketAccess: row.bucketAccess,
    bucketPermissions: row.bucketPermissions,
    isAccountOwner: isOwner && scope === "bucket_admin",
    isInstanceAdmin: isAdmin,
  };
}

export function listApiKeys(deps: Deps, accountId: string): ApiKeyRow[] {
  return deps.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
    .all();
}

export function revokeApiKey(deps: Deps, accountId: string, keyId: string): void {
  transaction(deps.db, (tx) => {
    const res = tx
      .update(apiKeys)
      .set({ revokedAt: deps.clock.now().toISOString() })
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id })
      .all();
    if (!res.length) throw new ApiError("API_KEY_NOT_FOUND", `API key ${keyId} was not found.`);
    // What the key held goes with it (its file locks: D257).
    runCredentialsEndedHooks(deps, [keyId], tx);
  });
}

/** Public view of a key (never the hash). */
export function presentKey(k: ApiKeyRow) {
  return {
    id: k.id,
    label: k.label,
    kind: k.kind,
    prefix: k.displayPrefix,
    permission_scope: k.permissionScope,
    bucket_access: k.bucketAccess,
    bucket_permissions: k.bucketPermissions,
    created_at: k.createdAt,
    last_used_at: k.lastUsedAt,
    expires_at: k.expiresAt,
  };
}
