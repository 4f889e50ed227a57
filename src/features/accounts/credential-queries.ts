// The lookups behind every authenticated request (an API key's row, its account and the member's
// role; a session's row), prepared once per database. Built through drizzle on each request, an
// API key's three cost ~85 µs, about a fifth of a small API request (bench/README.md).
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { preparedPerDb } from "../../db/prepared";
import { accounts, apiKeys, memberships, sessions, users } from "../../db/schema";

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
  accountExists: db
    .select({ id: accounts.id })
    .from(accounts)
    .where(eq(accounts.id, sql.placeholder("id")))
    .prepare(),
  member: db
    .select({ role: memberships.role, admin: users.isInstanceAdmin, disabledAt: users.disabledAt })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.accountId, sql.placeholder("accountId")), eq(memberships.userId, sql.placeholder("userId"))))
    .prepare(),
  sessionByHash: db
    .select()
    .from(sessions)
    .where(eq(sessions.tokenHash, sql.placeholder("hash")))
    .prepare(),
});

export const credentialQueries = preparedPerDb(prepare);
