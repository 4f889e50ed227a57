// Housekeeping: device codes, authorization codes and tokens expired for a day are deleted hourly
// (the day keeps `expired_token` answers meaningful for late pollers). Revoked grants keep their
// row as the audit trail of the connection.
import { lt } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { oauthAuthCodes, oauthDeviceCodes, oauthTokens } from "../../db/schema";
import { transaction } from "../../db/tx";

export function purgeExpiredOAuthCodesAndTokens(deps: Deps): void {
  const cutoff = new Date(deps.clock.now().getTime() - 24 * 3600_000).toISOString();
  transaction(deps.db, (tx) => {
    tx.delete(oauthDeviceCodes).where(lt(oauthDeviceCodes.expiresAt, cutoff)).run();
    tx.delete(oauthAuthCodes).where(lt(oauthAuthCodes.expiresAt, cutoff)).run();
    tx.delete(oauthTokens).where(lt(oauthTokens.expiresAt, cutoff)).run();
  });
}
