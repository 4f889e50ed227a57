// A signed-in user's own password and sessions: changing the password (sudo mode AND the current
// password, then every other session of the user ends) and signing out everywhere.
import { eq } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { sessions, users } from "../../db/schema";
import { transaction } from "../../db/tx";
import { endOtherSessions } from "./sessions";
import { checkPasswordStrength, getUser, hashPassword } from "./service";
import { confirmPassword, requireSudo } from "./sudo";

export interface PasswordChange {
  current_password: string;
  new_password: string;
}

/**
 * Change the signed-in user's password. Sudo mode alone is not enough: whoever holds a session
 * that was confirmed a few minutes ago must still know the current password to replace it (a
 * borrowed laptop cannot lock the owner out). Every other session of the user ends; this one stays.
 */
export async function changePassword(deps: Deps, req: Request, actor: Actor, input: PasswordChange, ip: string): Promise<{ endedSessions: number }> {
  requireSudo(deps, req, actor);
  if (actor.kind !== "session" || !actor.userId) throw new ApiError("FORBIDDEN", "Change the password in a signed-in browser.");
  const user = getUser(deps, actor.userId);
  if (!user) throw new ApiError("FORBIDDEN", "Change the password in a signed-in browser.");
  try {
    await confirmPassword(deps, user, input.current_password, ip);
  } catch (e) {
    if (e instanceof ApiError && e.code === "INVALID_CREDENTIALS")
      throw new ApiError("INVALID_CREDENTIALS", "That is not your current password.", { field: "current_password" });
    throw e;
  }
  try {
    checkPasswordStrength(input.new_password);
  } catch (e) {
    if (e instanceof ApiError) throw new ApiError(e.code, e.message, { field: "new_password" });
    throw e;
  }
  if (input.new_password === input.current_password)
    throw new ApiError("VALIDATION_FAILED", "Choose a password different from the current one.", { field: "new_password" });
  const passwordHash = await hashPassword(input.new_password);
  return transaction(deps.db, (tx) => {
    tx.update(users).set({ passwordHash, updatedAt: deps.clock.now().toISOString() }).where(eq(users.id, user.id)).run();
    return { endedSessions: endOtherSessions(tx, user.id, actor.credentialId) };
  });
}

/** End every browser session of the signed-in user, this one included. API keys and agent connections are not sessions and keep working. */
export function signOutEverywhere(deps: Deps, actor: Actor): { endedSessions: number } {
  if (actor.kind !== "session" || !actor.userId) throw new ApiError("FORBIDDEN", "Sign out everywhere from a signed-in browser.");
  const ended = deps.db.delete(sessions).where(eq(sessions.userId, actor.userId)).returning({ id: sessions.id }).all();
  return { endedSessions: ended.length };
}
