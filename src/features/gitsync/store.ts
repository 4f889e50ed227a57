// The connection rows and their sealed secrets. Secrets are sealed with the instance key,
// bound (AAD) to the connection id, and never leave this file except towards the git server.
import { eq } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { gitSyncConnections } from "../../db/schema";
import type { DbOrTx } from "../../db/tx";
import type { RemoteAccess } from "./remote";

export type ConnectionRow = typeof gitSyncConnections.$inferSelect;

export function connectionOf(deps: Deps, bucketId: string, db: DbOrTx = deps.db): ConnectionRow | undefined {
  return db.select().from(gitSyncConnections).where(eq(gitSyncConnections.bucketId, bucketId)).get();
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
