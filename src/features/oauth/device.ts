// Device authorization grant (RFC 8628): a CLI asks for a device code, the user approves the
// matching user code ("Connection ID") in a signed-in browser, the CLI polls the token
// endpoint. Approval creates the connection; the first successful poll issues the tokens and
// the durable `pier_api_key`, exactly once.
import { and, eq } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { oauthDeviceCodes, oauthGrants } from "../../db/schema";
import { transaction } from "../../db/tx";
import { createApiKey } from "../accounts";
import { assertGrantType, DEVICE_GRANT, displayClientName, getClient, type ClientRow } from "./clients";
import { OAuthError } from "./errors";
import { createGrant, holderRefusal, issueTokens } from "./grants";
import { checkResource } from "./metadata";
import { parseScope } from "./scopes";
import { DEVICE_CODE_TTL_S, DEVICE_POLL_INTERVAL_S, formatUserCode, hashSecret, newSecret, newUserCode, normalizeUserCode } from "./credentials";
import { isoAfter } from "../../core/clock";

export type DeviceRow = typeof oauthDeviceCodes.$inferSelect;

export function startDeviceAuthorization(deps: Deps, input: Record<string, unknown>) {
  const client = getClient(deps, input.client_id);
  assertGrantType(client, DEVICE_GRANT);
  const { scope } = parseScope(str(input.scope));
  checkResource(deps, input.resource);
  const now = deps.clock.now();
  const deviceCode = newSecret();
  const row = transaction(deps.db, (tx) => {
    // A clash with a live (or not yet purged, see jobs.ts) code just draws again.
    for (let attempt = 0; ; attempt++) {
      const userCode = newUserCode();
      if (tx.select({ c: oauthDeviceCodes.userCode }).from(oauthDeviceCodes).where(eq(oauthDeviceCodes.userCode, userCode)).get()) {
        if (attempt > 5) throw new OAuthError("temporarily_unavailable", "Could not allocate a user code; retry.");
        continue;
      }
      return tx
        .insert(oauthDeviceCodes)
        .values({
          deviceCodeHash: hashSecret(deviceCode),
          userCode,
          clientId: client.id,
          scope,
          intervalSeconds: DEVICE_POLL_INTERVAL_S,
          createdAt: now.toISOString(),
          expiresAt: isoAfter(now, DEVICE_CODE_TTL_S * 1000),
        })
        .returning()
        .get();
    }
  });
  const verificationUri = `${deps.urls.baseUrl}/oauth/device`;
  const userCode = formatUserCode(row.userCode);
  return {
    device_code: deviceCode,
    user_code: userCode,
    verification_uri: verificationUri,
    verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(userCode)}`,
    expires_in: DEVICE_CODE_TTL_S,
    interval: row.intervalSeconds,
  };
}

/** The pending device authorization behind a user code, for the approval page. */
export function findPendingDevice(deps: Deps, rawUserCode: string | undefined): { device: DeviceRow; client: ClientRow } | null {
  const code = normalizeUserCode(rawUserCode);
  if (!code) return null;
  const device = deps.db.select().from(oauthDeviceCodes).where(eq(oauthDeviceCodes.userCode, code)).get();
  if (!device || device.status !== "pending" || device.expiresAt <= deps.clock.now().toISOString()) return null;
  return { device, client: getClient(deps, device.clientId) };
}

/** The signed-in user confirms or denies the connection. */
export function decideDevice(deps: Deps, actor: Actor, rawUserCode: string | undefined, approve: boolean): { client: ClientRow; device: DeviceRow } {
  if (actor.kind !== "session" || !actor.userId) throw new ApiError("FORBIDDEN", "Approve connections in a signed-in browser.");
  const found = findPendingDevice(deps, rawUserCode);
  if (!found) throw new ApiError("CONNECTION_NOT_FOUND", "This Connection ID is unknown, expired or already used. Start the login again from your terminal.");
  return transaction(deps.db, (tx) => {
    if (!approve) {
      tx.update(oauthDeviceCodes)
        .set({ status: "denied" })
        .where(and(eq(oauthDeviceCodes.deviceCodeHash, found.device.deviceCodeHash), eq(oauthDeviceCodes.status, "pending")))
        .run();
      return found;
    }
    const { scope, permission } = parseScope(found.device.scope);
    const grant = createGrant(
      deps,
      { clientId: found.client.id, accountId: actor.accountId, userId: actor.userId!, flow: "device_code", scope, permission },
      tx,
    );
    const updated = tx
      .update(oauthDeviceCodes)
      .set({ status: "approved", grantId: grant.id })
      .where(and(eq(oauthDeviceCodes.deviceCodeHash, found.device.deviceCodeHash), eq(oauthDeviceCodes.status, "pending")))
      .returning()
      .get();
    if (!updated) throw new ApiError("CONFLICT", "This connection was already decided.");
    return found;
  });
}

/** One poll of the token endpoint with the device_code grant. */
export function pollDeviceToken(deps: Deps, input: Record<string, unknown>) {
  const client = getClient(deps, input.client_id);
  assertGrantType(client, DEVICE_GRANT);
  const deviceCode = str(input.device_code);
  if (!deviceCode) throw new OAuthError("invalid_request", "device_code is required.");
  const now = deps.clock.now();
  // Poll bookkeeping (last poll, slowed interval) must commit even when the answer is an
  // error, so the transaction returns the outcome and the error is thrown after it.
  const outcome = transaction(deps.db, (tx): OAuthError | (ReturnType<typeof issueTokens> & { pier_api_key: string }) => {
    const device = tx
      .select()
      .from(oauthDeviceCodes)
      .where(eq(oauthDeviceCodes.deviceCodeHash, hashSecret(deviceCode)))
      .get();
    if (!device || device.clientId !== client.id) return new OAuthError("invalid_grant", "Unknown device_code.");
    if (device.status === "consumed") return new OAuthError("invalid_grant", "This device_code was already exchanged.");
    if (device.expiresAt <= now.toISOString()) return new OAuthError("expired_token", "The device code expired. Start the login again.");
    const where = eq(oauthDeviceCodes.deviceCodeHash, device.deviceCodeHash);
    // RFC 8628 §3.5: a client polling faster than `interval` gets slow_down and must add 5 s.
    // One second of slack absorbs timer jitter of well-behaved clients.
    if (device.lastPolledAt && now.getTime() - Date.parse(device.lastPolledAt) < device.intervalSeconds * 1000 - 1000) {
      const interval = device.intervalSeconds + 5;
      tx.update(oauthDeviceCodes).set({ intervalSeconds: interval, lastPolledAt: now.toISOString() }).where(where).run();
      return new OAuthError("slow_down", `Polling too fast; wait at least ${interval} seconds between requests.`, { interval });
    }
    tx.update(oauthDeviceCodes).set({ lastPolledAt: now.toISOString() }).where(where).run();
    if (device.status === "pending") return new OAuthError("authorization_pending", "Waiting for the user to confirm the connection in the browser.");
    if (device.status === "denied") return new OAuthError("access_denied", "The user denied the connection.");
    const grant = tx.select().from(oauthGrants).where(eq(oauthGrants.id, device.grantId!)).get();
    if (!grant || grant.revokedAt) return new OAuthError("access_denied", "The connection was revoked.");
    const refused = holderRefusal(grant, tx);
    if (refused) return refused;
    const { key, record } = createApiKey(
      deps,
      {
        accountId: grant.accountId,
        userId: grant.userId,
        label: `${displayClientName(client.clientName)} (device login)`.slice(0, 200),
        kind: "agent",
        scope: grant.permissionScope,
      },
      tx,
    );
    tx.update(oauthGrants).set({ apiKeyId: record.id }).where(eq(oauthGrants.id, grant.id)).run();
    tx.update(oauthDeviceCodes).set({ status: "consumed" }).where(where).run();
    return { ...issueTokens(deps, grant, tx), pier_api_key: key };
  });
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
