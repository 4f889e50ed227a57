// Authentication and the route-level scope guard. Every API route declares what it needs with
// the `auth` macro (`auth: "bucket_read"`, "public", "any", "session"); the declaration is also
// published in the OpenAPI document as `x-pier-auth`, and a test walks the route table to
// prove each scope gets exactly what it should. Bucket-level permission (selected buckets) is
// checked by the services, which know the bucket.
import { Elysia } from "elysia";
import type { Actor, Deps, Scope } from "../core/context";
import { scopeRank } from "../core/context";
import { ApiError } from "../core/errors";
import { actorFromSession, checkCsrf, findSession } from "../features/accounts/sessions";
import { sessionTokenOf } from "./session-cookie";
import { getAccount, membership } from "../features/accounts/service";
import { roleScope } from "../features/accounts/roles";
import { RateLimiter } from "./rate-limit";
import { clientKey, isMutation } from "./request-info";

/**
 * What a route needs: a scope, "any" credential, a browser "session", nothing ("public"), or
 * "signed": the URL carries its own signature (storage uploads/downloads), so no credential is
 * read and no per-IP anonymous budget is spent (a 1,000-file publish is 1,000 PUTs); or
 * "probe": public health checks (/livez, /readyz) that likewise read no credential and spend no
 * per-IP budget, since a load balancer asks every few seconds from one address.
 */
export type RouteAuth = Scope | "public" | "any" | "session" | "signed" | "probe";

/** Hooks for other credential kinds (OAuth access tokens) to plug into bearer resolution. */
export type BearerResolver = (deps: Deps, token: string) => Actor | null;

export function bearerToken(req: Request): string | null {
  const h = req.headers.get("authorization");
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1]! : "";
}

export interface AuthOptions {
  resolvers: BearerResolver[];
  accountLimiter: RateLimiter;
  anonLimiter: RateLimiter;
}

/** Identify the caller; null when no credential was sent. Throws 401 for a bad one. */
export function authenticate(deps: Deps, req: Request, opts: AuthOptions): Actor | null {
  const bearer = bearerToken(req);
  if (bearer !== null) {
    for (const resolve of opts.resolvers) {
      const actor = resolve(deps, bearer);
      if (actor) return actor;
    }
    opts.anonLimiter.take(`ip:${clientKey(req)}`);
    throw new ApiError("UNAUTHORIZED", "The API key or access token is missing, invalid, revoked or expired.");
  }
  const session = findSession(deps, sessionTokenOf(deps, req));
  if (!session) return null;
  const actor = actorFromSession(deps, session);
  // Browsers send cookies cross-site on top-level navigations; mutations also need the
  // session-bound CSRF token (header for XHR, form field for pages, checked there).
  if (actor && isMutation(req.method) && new URL(req.url).pathname.startsWith("/api/")) {
    if (!checkCsrf(deps, session.id, req.headers.get("x-pier-csrf"))) throw new ApiError("CSRF_FAILED");
  }
  return actor;
}

/** Switch the actor to another account it is a member of (`account_id` in body or query). */
export function selectAccount(deps: Deps, actor: Actor, accountId: string | undefined): Actor {
  if (!accountId || accountId === actor.accountId) return actor;
  const role = actor.userId ? membership(deps, accountId, actor.userId) : null;
  if (!role) throw new ApiError("FORBIDDEN", "This credential has no access to that account.", { account_id: accountId });
  const cap = roleScope(role);
  const scope = scopeRank[actor.scope] <= scopeRank[cap] ? actor.scope : cap;
  // Per-bucket grants name buckets of the key's own account: they do not carry over.
  if (actor.bucketAccess === "selected") throw new ApiError("FORBIDDEN", "A key limited to selected buckets cannot switch accounts.");
  return { ...actor, accountId, scope, isAccountOwner: role === "owner" && scope === "bucket_admin" };
}

function requestedAccountId(method: string, query: Record<string, unknown>, body: unknown): string | undefined {
  const fromBody = isMutation(method) && body && typeof body === "object" ? (body as Record<string, unknown>).account_id : undefined;
  const v = fromBody ?? query.account_id;
  if (v === undefined) return undefined;
  if (typeof v !== "string" || !/^acc_[a-z0-9]{1,40}$/.test(v)) throw new ApiError("VALIDATION_FAILED", "account_id must be an account id (acc_...).");
  return v;
}

export function authPlugin(deps: Deps, opts: AuthOptions) {
  return new Elysia({ name: "pier-auth" }).macro({
    auth: (need: RouteAuth) => ({
      detail: { "x-pier-auth": need } as Record<string, unknown>,
      resolve({ request, query, body }: { request: Request; query: Record<string, unknown>; body: unknown }) {
        if (need === "signed" || need === "probe") return { actor: null as Actor | null };
        let actor = authenticate(deps, request, opts);
        if (!actor) {
          opts.anonLimiter.take(`ip:${clientKey(request)}`); // anonymous callers are limited per client IP
          if (need === "public") return { actor: null as Actor | null };
          throw new ApiError("UNAUTHORIZED", "Send an API key as `Authorization: Bearer pier_...` (create one with `pier login` or in the dashboard).");
        }
        if (need === "session" && actor.kind !== "session") throw new ApiError("FORBIDDEN", "This endpoint is available to signed-in browsers only.");
        actor = selectAccount(deps, actor, requestedAccountId(request.method, query ?? {}, body));
        opts.accountLimiter.take(`acct:${actor.accountId}`);
        if (need !== "public" && need !== "any" && need !== "session" && scopeRank[actor.scope] < scopeRank[need]) {
          throw new ApiError("FORBIDDEN", `This action needs the ${need} scope; the credential has ${actor.scope}.`, {
            required_scope: need,
            scope: actor.scope,
          });
        }
        if (isMutation(request.method)) {
          const account = getAccount(deps, actor.accountId);
          if (account.readOnly)
            throw new ApiError(
              "ACCOUNT_READ_ONLY",
              `The account is read-only${account.readOnlyReason ? ` (${account.readOnlyReason})` : ""}; reads still work.`,
              { read_only: true },
            );
        }
        return { actor: actor as Actor | null };
      },
    }),
  });
}

/** For handlers of routes whose auth is not "public": the actor is always there. */
export function must(actor: Actor | null): Actor {
  if (!actor) throw new ApiError("UNAUTHORIZED");
  return actor;
}
