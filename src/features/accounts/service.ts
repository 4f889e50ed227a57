// Users, accounts and memberships. Sign-up, bootstrap and the admin CLI all come through here.
import { and, count, eq, sql, type Placeholder } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { newId } from "../../core/ids";
import { accounts, memberships, users } from "../../db/schema";
import { transaction, type DbOrTx } from "../../db/tx";
import { isConnection, preparedPerDb } from "../../db/prepared";
import type { Role } from "./roles";

export type UserRow = typeof users.$inferSelect;
export type AccountRow = typeof accounts.$inferSelect;

const EMAIL = /^[^\s@<>()",;:\\[\]]{1,64}@[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email)) throw new ApiError("VALIDATION_FAILED", "Enter a valid email address.", { field: "email" });
  return email;
}

export function checkPasswordStrength(password: string): void {
  if (password.length < 10) throw new ApiError("VALIDATION_FAILED", "Use a password of at least 10 characters.", { field: "password" });
  if (password.length > 1024) throw new ApiError("VALIDATION_FAILED", "Password is too long (1024 characters at most).", { field: "password" });
}

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

export function findUserByEmail(deps: Deps, email: string, db: DbOrTx = deps.db): UserRow | undefined {
  return db.select().from(users).where(eq(users.email, email.trim().toLowerCase())).get();
}

export function getUser(deps: Deps, id: string): UserRow | undefined {
  return deps.db.select().from(users).where(eq(users.id, id)).get();
}

const accountQuery = (db: DbOrTx, id: string | Placeholder) => db.select().from(accounts).where(eq(accounts.id, id));
const preparedAccount = preparedPerDb((db) => accountQuery(db, sql.placeholder("id")).prepare());

/** The account, or undefined when there is none (getAccount refuses instead). */
export function findAccount(deps: Deps, id: string, db: DbOrTx = deps.db): AccountRow | undefined {
  return isConnection(db) ? preparedAccount(db).get({ id }) : accountQuery(db, id).get();
}

export function getAccount(deps: Deps, id: string, db: DbOrTx = deps.db): AccountRow {
  const a = findAccount(deps, id, db);
  if (!a) throw new ApiError("ACCOUNT_NOT_FOUND");
  return a;
}

export function countUsers(deps: Deps): number {
  return deps.db.select({ n: count() }).from(users).get()!.n;
}

export interface CreatedUser {
  user: UserRow;
  account: AccountRow;
}

/**
 * Create a user with its own account (the user owns it). The first user of an instance
 * becomes instance admin and (unless a plan is given) gets the owner plan. `passwordHash` is computed by the caller (async) before the
 * synchronous transaction.
 */
export function insertUserWithAccount(
  deps: Deps,
  input: { email: string; passwordHash: string; displayName?: string; plan?: string; accountName?: string },
  db: DbOrTx = deps.db,
): CreatedUser {
  const email = normalizeEmail(input.email);
  if (input.plan !== undefined && !deps.plans.has(input.plan))
    throw new ApiError("VALIDATION_FAILED", `Unknown plan "${input.plan}" (known: ${deps.plans.ids().join(", ")}).`);
  return transaction(db, (tx) => {
    if (findUserByEmail(deps, email, tx)) throw new ApiError("CONFLICT", "A user with this email already exists.", { field: "email" });
    const now = deps.clock.now().toISOString();
    const first = tx.select({ n: count() }).from(users).get()!.n === 0;
    // The person who set the instance up runs it: their account gets the owner plan unless the
    // operator named one (pier admin ... --plan). Everyone after them gets the default plan.
    const plan = input.plan ?? (first ? deps.config.ownerPlan : deps.config.defaultPlan);
    const user = tx
      .insert(users)
      .values({
        id: newId("usr"),
        email,
        passwordHash: input.passwordHash,
        displayName: input.displayName ?? "",
        isInstanceAdmin: first,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get();
    const account = insertAccount(deps, { name: input.accountName ?? (input.displayName || email.split("@")[0]!), plan }, tx);
    addMember(deps, account.id, user.id, "owner", tx);
    return { user, account };
  });
}

export function insertAccount(deps: Deps, input: { name: string; plan?: string }, db: DbOrTx = deps.db): AccountRow {
  const plan = input.plan ?? deps.config.defaultPlan;
  if (!deps.plans.has(plan)) throw new ApiError("VALIDATION_FAILED", `Unknown plan "${plan}".`);
  const now = deps.clock.now().toISOString();
  return db
    .insert(accounts)
    .values({ id: newId("acc"), name: input.name.slice(0, 200), plan, createdAt: now, updatedAt: now })
    .returning()
    .get();
}

export function addMember(deps: Deps, accountId: string, userId: string, role: Role, db: DbOrTx = deps.db): void {
  db.insert(memberships)
    .values({ accountId, userId, role, createdAt: deps.clock.now().toISOString() })
    .onConflictDoUpdate({ target: [memberships.accountId, memberships.userId], set: { role } })
    .run();
}

export function membership(deps: Deps, accountId: string, userId: string): Role | null {
  return (
    deps.db
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.accountId, accountId), eq(memberships.userId, userId)))
      .get()?.role ?? null
  );
}

/** The account a user acts on by default: the oldest one they own, else the oldest membership. */
export function defaultAccountOf(deps: Deps, userId: string): string | null {
  const rows = deps.db
    .select({ accountId: memberships.accountId, role: memberships.role, createdAt: memberships.createdAt })
    .from(memberships)
    .where(eq(memberships.userId, userId))
    .all();
  rows.sort((a, b) => (a.role === "owner" ? 0 : 1) - (b.role === "owner" ? 0 : 1) || a.createdAt.localeCompare(b.createdAt));
  return rows[0]?.accountId ?? null;
}

export function setPlan(deps: Deps, accountId: string, plan: string): AccountRow {
  if (!deps.plans.has(plan)) throw new ApiError("VALIDATION_FAILED", `Unknown plan "${plan}" (known: ${deps.plans.ids().join(", ")}).`);
  getAccount(deps, accountId);
  return deps.db.update(accounts).set({ plan, updatedAt: deps.clock.now().toISOString() }).where(eq(accounts.id, accountId)).returning().get()!;
}

export function setReadOnly(deps: Deps, accountId: string, readOnly: boolean, reason: string | null = null): AccountRow {
  getAccount(deps, accountId);
  return deps.db
    .update(accounts)
    .set({ readOnly, readOnlyReason: readOnly ? reason : null, updatedAt: deps.clock.now().toISOString() })
    .where(eq(accounts.id, accountId))
    .returning()
    .get()!;
}

export function entitlementsOf(deps: Deps, account: AccountRow) {
  return deps.plans.get(account.plan).entitlements;
}

/** The email of the account's owner (where mail about the account goes), if it has one. */
export function accountOwnerEmail(accountId: string, db: DbOrTx): string | undefined {
  return db
    .select({ email: users.email })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.accountId, accountId), eq(memberships.role, "owner")))
    .get()?.email;
}
