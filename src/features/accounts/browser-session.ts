// The signed-in browser session behind a page request: its actor, user, CSRF token and sudo
// state, and the check of a signed-in form's CSRF field. The cookie plumbing is src/http/.
import type { Actor, Deps } from "../../core/context";
import { formExpired } from "../../http/browser";
import { sessionTokenOf } from "../../http/session-cookie";
import { actorFromSession, checkCsrf, csrfToken, findSession, type SessionRow } from "./sessions";
import { getUser, type UserRow } from "./service";
import { inSudoMode } from "./sudo";

export interface BrowserSession {
  session: SessionRow;
  actor: Actor;
  user: UserRow;
  /** The token forms of this session must echo (hidden field `csrf`). */
  csrf: string;
  /** The password was entered in this session in the last few minutes (sudo.ts). */
  sudo: boolean;
}

export function browserSession(deps: Deps, req: Request): BrowserSession | null {
  const session = findSession(deps, sessionTokenOf(deps, req));
  if (!session) return null;
  const actor = actorFromSession(deps, session);
  const user = getUser(deps, session.userId);
  if (!actor || !user) return null;
  return { session, actor, user, csrf: csrfToken(deps, session.id), sudo: inSudoMode(deps, req, session.id) };
}

export function checkSessionCsrf(deps: Deps, s: BrowserSession, field: string | undefined): void {
  if (!checkCsrf(deps, s.session.id, field)) throw formExpired();
}
