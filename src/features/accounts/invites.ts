// Invite codes for `invite` sign-up mode. The code is shown once; only its SHA-256 is stored.
// An invite may be bound to one email address; it is used up by the sign-up that consumes it.
import { and, eq, isNull } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { sha256Hex } from "../../core/crypto";
import { ApiError } from "../../core/errors";
import { newId, randomToken } from "../../core/ids";
import { invites } from "../../db/schema";
import type { DbOrTx } from "../../db/tx";
import { normalizeEmail } from "./service";
import { isoAfter } from "../../core/clock";

export type InviteRow = typeof invites.$inferSelect;
const DEFAULT_DAYS = 7;

export function createInvite(deps: Deps, input: { email?: string | null; createdBy?: string | null; days?: number }): { code: string; invite: InviteRow } {
  const days = input.days ?? DEFAULT_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > 365) throw new ApiError("VALIDATION_FAILED", "Invite lifetime must be 1-365 days.", { field: "days" });
  const code = `inv-${randomToken(24)}`;
  const now = deps.clock.now();
  const invite = deps.db
    .insert(invites)
    .values({
      id: newId("inv"),
      codeHash: sha256Hex(code),
      email: input.email ? normalizeEmail(input.email) : null,
      createdBy: input.createdBy ?? null,
      createdAt: now.toISOString(),
      expiresAt: isoAfter(now, days * 86400_000),
    })
    .returning()
    .get();
  return { code, invite };
}

/** The unused, unexpired invite with this code that `email` may use, or throw INVITE_INVALID. Reads only. */
export function usableInvite(deps: Deps, code: string, email: string, db: DbOrTx): InviteRow {
  const row = db
    .select()
    .from(invites)
    .where(and(eq(invites.codeHash, sha256Hex(code.trim())), isNull(invites.usedAt)))
    .get();
  if (!row || row.expiresAt <= deps.clock.now().toISOString() || (row.email && row.email !== email)) {
    throw new ApiError("INVITE_INVALID", "That invite code is wrong, already used, expired, or meant for another email address.", { field: "invite" });
  }
  return row;
}

/** Mark the invite used by `userId` inside the sign-up transaction, or throw INVITE_INVALID. */
export function consumeInvite(deps: Deps, code: string, email: string, userId: string, db: DbOrTx): void {
  const row = usableInvite(deps, code, email, db);
  db.update(invites).set({ usedAt: deps.clock.now().toISOString(), usedBy: userId }).where(eq(invites.id, row.id)).run();
}
