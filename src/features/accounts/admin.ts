// Operator actions behind `pier admin`: they act with the operator's authority (direct access
// to the data dir), so they skip plan entitlements but keep every other rule (roles cap key
// scopes, plans must exist, emails must be valid).
import { and, asc, count, eq, or, sql } from "drizzle-orm";
import type { Deps, Scope } from "../../core/context";
import { scopeRank } from "../../core/context";
import { ApiError } from "../../core/errors";
import { accounts, memberships, sessions, users } from "../../db/schema";
import { transaction } from "../../db/tx";
import { createApiKey } from "./keys";
import { roleScope } from "./roles";
import {
  addMember,
  checkPasswordStrength,
  defaultAccountOf,
  findUserByEmail,
  getAccount,
  hashPassword,
  insertAccount,
  insertUserWithAccount,
  membership,
  normalizeEmail,
  setPlan,
  type AccountRow,
  type UserRow,
} from "./service";

function userByEmail(deps: Deps, email: string): UserRow {
  const user = findUserByEmail(deps, normalizeEmail(email));
  if (!user) throw new ApiError("USER_NOT_FOUND", `No user with email ${email}.`);
  return user;
}

export async function adminCreateUser(deps: Deps, input: { email: string; password: string; plan?: string }) {
  checkPasswordStrength(input.password);
  return insertUserWithAccount(deps, { email: input.email, passwordHash: await hashPassword(input.password), plan: input.plan });
}

export function adminCreateAccount(deps: Deps, input: { name: string; ownerEmail: string; plan?: string }): AccountRow {
  const name = input.name.trim();
  if (!name) throw new ApiError("VALIDATION_FAILED", "Give the account a name.", { field: "name" });
  const owner = userByEmail(deps, input.ownerEmail);
  return transaction(deps.db, (tx) => {
    const account = insertAccount(deps, { name, plan: input.plan }, tx);
    addMember(deps, account.id, owner.id, "owner", tx);
    return account;
  });
}

/** A new key for a user on one of their accounts (default: the account they act on by default). */
export function adminCreateKey(deps: Deps, input: { email: string; accountId?: string; scope?: Scope; label?: string }): { key: string; accountId: string } {
  const user = userByEmail(deps, input.email);
  const accountId = input.accountId ?? defaultAccountOf(deps, user.id);
  if (!accountId) throw new ApiError("ACCOUNT_NOT_FOUND", `${user.email} belongs to no account; create one with pier admin account create.`);
  getAccount(deps, accountId);
  const role = membership(deps, accountId, user.id);
  if (!role) throw new ApiError("FORBIDDEN", `${user.email} is not a member of ${accountId}.`);
  const scope = input.scope ?? "bucket_admin";
  if (scopeRank[scope] > scopeRank[roleScope(role)]) throw new ApiError("FORBIDDEN", `A ${role} can hold at most ${roleScope(role)} keys.`);
  const { key } = createApiKey(deps, {
    accountId,
    userId: user.id,
    label: (input.label ?? "admin CLI").slice(0, 100),
    kind: role === "owner" ? "owner" : "named",
    scope,
  });
  return { key, accountId };
}

/** A new password; every browser session of the user ends. */
export async function adminSetPassword(deps: Deps, email: string, password: string): Promise<UserRow> {
  checkPasswordStrength(password);
  const user = userByEmail(deps, email);
  const passwordHash = await hashPassword(password);
  return transaction(deps.db, (tx) => {
    tx.delete(sessions).where(eq(sessions.userId, user.id)).run();
    return tx.update(users).set({ passwordHash, updatedAt: deps.clock.now().toISOString() }).where(eq(users.id, user.id)).returning().get()!;
  });
}

/** For a user who lost their authenticator: two-factor off, sessions ended. */
export function adminDisableTwoFactor(deps: Deps, email: string): void {
  const user = userByEmail(deps, email);
  transaction(deps.db, (tx) => {
    tx.delete(sessions).where(eq(sessions.userId, user.id)).run();
    tx.update(users).set({ totpSealed: null, totpEnabledAt: null, updatedAt: deps.clock.now().toISOString() }).where(eq(users.id, user.id)).run();
  });
}

function ownedAccount(deps: Deps, userId: string): AccountRow | null {
  const row = deps.db
    .select({ accountId: memberships.accountId })
    .from(memberships)
    .where(and(eq(memberships.userId, userId), eq(memberships.role, "owner")))
    .orderBy(memberships.createdAt)
    .get();
  return row ? getAccount(deps, row.accountId) : null;
}

export interface BootstrapResult {
  key: string;
  user: UserRow;
  account: AccountRow;
  createdUser: boolean;
  createdAccount: boolean;
}

/**
 * Idempotent set-up for operators and test harnesses: the user and an account they own exist
 * afterwards (created when missing, never modified except for an explicitly requested plan),
 * and a NEW account-owner bucket_admin key is returned. An existing user's password is not
 * changed (use `pier admin user password`).
 */
export async function bootstrap(deps: Deps, input: { email: string; password: string; plan?: string }): Promise<BootstrapResult> {
  const email = normalizeEmail(input.email);
  if (input.plan && !deps.plans.has(input.plan))
    throw new ApiError("VALIDATION_FAILED", `Unknown plan "${input.plan}" (known: ${deps.plans.ids().join(", ")}).`);
  let createdUser = false;
  let createdAccount = false;
  let user = findUserByEmail(deps, email);
  let account: AccountRow | null = null;
  if (!user) {
    checkPasswordStrength(input.password);
    const passwordHash = await hashPassword(input.password);
    try {
      const created = insertUserWithAccount(deps, { email, passwordHash, plan: input.plan });
      ({ user, account } = created);
      createdUser = createdAccount = true;
    } catch (e) {
      // Another bootstrap created the same user meanwhile: carry on with theirs.
      if (!(e instanceof ApiError && e.code === "CONFLICT")) throw e;
      user = findUserByEmail(deps, email)!;
    }
  }
  account ??= ownedAccount(deps, user.id);
  if (!account) {
    const u = user;
    account = transaction(deps.db, (tx) => {
      const a = insertAccount(deps, { name: u.email.split("@")[0]!, plan: input.plan }, tx);
      addMember(deps, a.id, u.id, "owner", tx);
      return a;
    });
    createdAccount = true;
  }
  if (input.plan && account.plan !== input.plan) account = setPlan(deps, account.id, input.plan);
  const { key } = createApiKey(deps, { accountId: account.id, userId: user.id, label: "bootstrap", kind: "owner", scope: "bucket_admin" });
  return { key, user, account, createdUser, createdAccount };
}

export interface AdminUserView {
  id: string;
  email: string;
  instanceAdmin: boolean;
  twoFactor: boolean;
  disabled: boolean;
  lastLoginAt: string | null;
  createdAt: string;
}

/** The instance's users, oldest first, filtered by a text in the email; one page and the total. */
export function adminListUsers(deps: Deps, q: { search?: string; limit: number; offset: number }): { users: AdminUserView[]; total: number } {
  // instr, not LIKE: the search text is matched literally (no % or _ wildcards).
  const where = q.search ? sql`instr(${users.email}, ${q.search.toLowerCase()}) > 0` : undefined;
  const rows = deps.db.select().from(users).where(where).orderBy(asc(users.createdAt), asc(users.id)).limit(q.limit).offset(q.offset).all();
  const total = deps.db.select({ n: count() }).from(users).where(where).get()!.n;
  return {
    users: rows.map((u) => ({
      id: u.id,
      email: u.email,
      instanceAdmin: u.isInstanceAdmin,
      twoFactor: !!u.totpEnabledAt,
      disabled: !!u.disabledAt,
      lastLoginAt: u.lastLoginAt,
      createdAt: u.createdAt,
    })),
    total,
  };
}

/**
 * Make a user an instance admin or take it away. The last admin stays one: an instance nobody
 * can administer from the browser would need the CLI to recover.
 */
export function adminSetInstanceAdmin(deps: Deps, email: string, admin: boolean): UserRow {
  const user = userByEmail(deps, email);
  return transaction(deps.db, (tx) => {
    if (!admin && user.isInstanceAdmin) {
      const admins = tx.select({ n: count() }).from(users).where(eq(users.isInstanceAdmin, true)).get()!.n;
      if (admins <= 1) throw new ApiError("CONFLICT", `${user.email} is the only instance admin; make someone else admin first.`);
    }
    return tx.update(users).set({ isInstanceAdmin: admin, updatedAt: deps.clock.now().toISOString() }).where(eq(users.id, user.id)).returning().get()!;
  });
}

export interface AdminAccountView {
  id: string;
  name: string;
  plan: string;
  readOnly: boolean;
  ownerEmail: string | null;
  createdAt: string;
}

/** Accounts with their plan and owner, oldest first, filtered by a text in the name or owner email. */
export function adminListAccounts(deps: Deps, q: { search?: string; limit: number; offset: number }): { accounts: AdminAccountView[]; total: number } {
  const text = q.search ? q.search.toLowerCase() : null;
  const owner = and(eq(memberships.accountId, accounts.id), eq(memberships.role, "owner"));
  const where = text ? or(sql`instr(lower(${accounts.name}), ${text}) > 0`, sql`instr(${users.email}, ${text}) > 0`) : undefined;
  const base = deps.db
    .select({ account: accounts, email: users.email })
    .from(accounts)
    .leftJoin(memberships, owner)
    .leftJoin(users, eq(users.id, memberships.userId))
    .where(where);
  const rows = base.orderBy(asc(accounts.createdAt), asc(accounts.id)).limit(q.limit).offset(q.offset).all();
  const total = deps.db
    .select({ n: sql<number>`count(distinct ${accounts.id})` })
    .from(accounts)
    .leftJoin(memberships, owner)
    .leftJoin(users, eq(users.id, memberships.userId))
    .where(where)
    .get()!.n;
  // An account with two owners appears once (the first owner found).
  const seen = new Set<string>();
  const list = rows.filter((r) => (seen.has(r.account.id) ? false : (seen.add(r.account.id), true)));
  return {
    accounts: list.map((r) => ({
      id: r.account.id,
      name: r.account.name,
      plan: r.account.plan,
      readOnly: r.account.readOnly,
      ownerEmail: r.email,
      createdAt: r.account.createdAt,
    })),
    total,
  };
}

/**
 * Disable a user (no sign-in; their sessions end; their API keys and agent connections stop
 * working) or enable them again (keys and connections work again; sessions do not come back).
 * An instance admin is not disabled: take admin away first, so the instance never loses its
 * last admin this way.
 */
export function adminSetDisabled(deps: Deps, email: string, disabled: boolean): UserRow {
  const user = userByEmail(deps, email);
  if (disabled && user.isInstanceAdmin) throw new ApiError("CONFLICT", `${user.email} is an instance admin; remove admin first, then disable.`);
  const now = deps.clock.now().toISOString();
  return transaction(deps.db, (tx) => {
    if (disabled) tx.delete(sessions).where(eq(sessions.userId, user.id)).run();
    return tx
      .update(users)
      .set({ disabledAt: disabled ? (user.disabledAt ?? now) : null, updatedAt: now })
      .where(eq(users.id, user.id))
      .returning()
      .get()!;
  });
}
