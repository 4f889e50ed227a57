// The connection rows and their sealed secrets. Secrets are sealed with the instance key,
// bound (AAD) to the connection id, and never leave this file except towards the git server.
import { eq, sql, type Placeholder } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { gitSyncConnections } from "../../db/schema";
import type { DbOrTx } from "../../db/tx";
import { isConnection, preparedPerDb } from "../../db/prepared";
import { installationFailure, installationToken } from "./github-app";
import { githubInstallations } from "../../db/schema";
import { and } from "drizzle-orm";
import { SyncFailure, type RemoteAccess } from "./remote";

export type ConnectionRow = typeof gitSyncConnections.$inferSelect;

const connectionQuery = (db: DbOrTx, bucketId: string | Placeholder) => db.select().from(gitSyncConnections).where(eq(gitSyncConnections.bucketId, bucketId));
const preparedConnection = preparedPerDb((db) => connectionQuery(db, sql.placeholder("bucketId")).prepare());

export function connectionOf(deps: Deps, bucketId: string, db: DbOrTx = deps.db): ConnectionRow | undefined {
  return isConnection(db) ? preparedConnection(db).get({ bucketId }) : connectionQuery(db, bucketId).get();
}

export function connectionById(deps: Deps, id: string, db: DbOrTx = deps.db): ConnectionRow | undefined {
  return db.select().from(gitSyncConnections).where(eq(gitSyncConnections.id, id)).get();
}

export const sealSecret = (deps: Deps, connectionId: string, value: string) => deps.secrets.seal("github", value, `git-sync:${connectionId}`);
export const openSecret = (deps: Deps, connectionId: string, sealed: string) => deps.secrets.open("github", sealed, `git-sync:${connectionId}`);

export function accessOf(deps: Deps, conn: ConnectionRow): RemoteAccess {
  return {
    url: conn.repositoryUrl,
    branch: conn.branch,
    username: conn.username,
    password: conn.credentialSealed ? openSecret(deps, conn.id, conn.credentialSealed) : null,
  };
}

/**
 * What a sync needs to reach the remote. A GitHub App connection authenticates as
 * `x-access-token:<installation token>`, minted (or reused from memory) for this sync; an
 * installation GitHub told us is gone or suspended fails at once without asking again.
 */
export async function remoteAccessFor(deps: Deps, conn: ConnectionRow): Promise<RemoteAccess> {
  if (conn.provider !== "github") return accessOf(deps, conn);
  const installationId = conn.githubInstallationId ?? 0;
  const link = deps.db
    .select()
    .from(githubInstallations)
    .where(and(eq(githubInstallations.accountId, conn.accountId), eq(githubInstallations.installationId, installationId)))
    .get();
  if (!link || link.state === "deleted")
    throw new SyncFailure("installation_revoked", "The GitHub App was uninstalled from the repository's account; install it again from the bucket's Git page.");
  if (link.state === "suspended")
    throw new SyncFailure("installation_suspended", "The GitHub App's installation is suspended; unsuspend it in the account's GitHub settings.");
  let token: string;
  try {
    token = await installationToken(deps, installationId);
  } catch (e) {
    throw installationFailure(e);
  }
  // The repository's host is the operator's --github-url, not a user's: no private-address check.
  return { url: conn.repositoryUrl, branch: conn.branch, username: "x-access-token", password: token, operatorHost: true };
}

export function webhookSecretOf(deps: Deps, conn: ConnectionRow): string {
  return openSecret(deps, conn.id, conn.webhookSecretSealed);
}

export function updateConnection(deps: Deps, id: string, set: Partial<ConnectionRow>, db: DbOrTx = deps.db): ConnectionRow | undefined {
  return db
    .update(gitSyncConnections)
    .set({ ...set, updatedAt: deps.clock.now().toISOString() })
    .where(eq(gitSyncConnections.id, id))
    .returning()
    .get();
}
