// The lookups behind every authenticated request (an API key's row and the member's role; a
// session's row; the account is service.ts's findAccount), prepared once per database. Built through drizzle on each request, an
// API key's three cost ~85 µs, about a fifth of a small API request (bench/README.md).
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { preparedPerDb } from "../../db/prepared";
import { apiKeys, memberships, sessions, users } from "../../db/schema";

const prepare = (db: Db) => ({
  liveKeyByHash: db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.tokenHash, sql.placeholder("hash")), isNull(apiKeys.revokedAt)))
    .prepare(),
  liveKeyById: db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, sql.placeholder("id")), isNull(apiKeys.revokedAt)))
    .prepare(),
  // Two primary-key lookups, not a join of memberships and users: Bun's SQLite ran that join
  // several times slower than both lookups together (bench/README.md).
  role: db
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.accountId, sql.placeholder("accountId")), eq(memberships.userId, sql.placeholder("userId"))))
    .prepare(),
  userFlags: db
    .select({ admin: users.isInstanceAdmin, disabledAt: users.disabledAt })
    .from(users)
    .where(eq(users.id, sql.placeholder("userId")))
    .prepare(),
  sessionByHash: db
    .select()
    .from(sessions)
    .where(eq(sessions.tokenHash, sql.placeholder("hash")))
    .prepare(),
});

export const credentialQueries = preparedPerDb(prepare);

/** The member's role and the user's flags; undefined when the user is not a member (or gone). */
export function memberOf(db: Db, accountId: string, userId: string) {
  const q = credentialQueries(db);
  const m = q.role.get({ accountId, userId });
  if (!m) return undefined;
  const u = q.userFlags.get({ userId });
  return u ? { role: m.role, admin: u.admin, disabledAt: u.disabledAt } : undefined;
}
