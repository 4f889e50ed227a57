// Plan policy for publishing: how many permanent live sites an account may have, and whether
// main sites may be protected (password / require_email). Previews are exempt from both.
import { and, eq, gt, inArray, isNull, ne, or, sql } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { publications, type AccessMode, type PublicationKind } from "../../db/schema";
import type { DbOrTx } from "../../db/tx";
import { planHelp, planLimitError, withPlanHelp } from "../accounts";
import { entitlementsOf, getAccount } from "../accounts";

/** Main sites that count as live: publishing or published and not past their expiry. */
function liveMainSites(deps: Deps, accountId: string, exceptBucketId: string, protectedOnly: boolean, db: DbOrTx): number {
  const now = deps.clock.now().toISOString();
  return db
    .select({ n: sql<number>`count(*)` })
    .from(publications)
    .where(
      and(
        eq(publications.accountId, accountId),
        eq(publications.kind, "main"),
        ne(publications.bucketId, exceptBucketId),
        inArray(publications.status, ["publishing", "published"]),
        or(isNull(publications.expiresAt), gt(publications.expiresAt, now)),
        protectedOnly ? ne(publications.accessMode, "public") : undefined,
      ),
    )
    .get()!.n;
}

/**
 * Refuse a main publish the plan does not allow. Never falls back to public: a protected
 * request on a plan without protected sites fails with the three choices the caller has.
 */
export function assertPublishAllowed(
  deps: Deps,
  input: { accountId: string; bucketId: string; kind: PublicationKind; accessMode: AccessMode },
  db: DbOrTx,
): void {
  if (input.kind === "preview") return;
  const account = getAccount(deps, input.accountId, db);
  const ent = entitlementsOf(deps, account);
  const base = `/api/v1/buckets/${input.bucketId}/publication`;
  if (input.accessMode !== "public") {
    if (!ent.protected_sites) {
      const help = planHelp(deps, account, (e) => e.protected_sites && e.max_protected_sites > 0);
      throw new ApiError("PUBLICATION_UPGRADE_REQUIRED", withPlanHelp(`The ${account.plan} plan cannot publish a permanent ${input.accessMode} site.`, help), {
        requested_access_mode: input.accessMode,
        ...help,
        choices: [
          {
            action: "preview",
            description: "Publish a temporary, noindex preview with the same access (allowed on every plan).",
            method: "POST",
            url: `${deps.urls.baseUrl}${base}/preview`,
            body: { access_mode: input.accessMode },
          },
          // Self-hosted: the upgrade is the operator's command, not a checkout page.
          { action: "upgrade", description: `${help.ask_operator} Then publish again.`, operator_hint: help.operator_hint, plan: help.suggested_plan },
          {
            action: "public",
            description: "Publish publicly instead (anyone with the link can see it).",
            method: "POST",
            url: `${deps.urls.baseUrl}${base}`,
            body: { access_mode: "public" },
          },
        ],
      });
    }
    const used = liveMainSites(deps, input.accountId, input.bucketId, true, db);
    if (used >= ent.max_protected_sites) {
      const help = planHelp(deps, account, (e) => e.protected_sites && e.max_protected_sites > used);
      throw planLimitError(`The plan allows ${ent.max_protected_sites} protected sites and ${used} are live.`, "max_protected_sites", help, {
        max_protected_sites: ent.max_protected_sites,
        active_count: used,
      });
    }
  }
  const live = liveMainSites(deps, input.accountId, input.bucketId, false, db);
  if (live >= ent.max_live_sites) {
    const help = planHelp(deps, account, (e) => e.max_live_sites > live);
    throw planLimitError(
      `The plan allows ${ent.max_live_sites} live site${ent.max_live_sites === 1 ? "" : "s"} and ${live} ${live === 1 ? "is" : "are"} live; unpublish one or publish a preview.`,
      "max_live_sites",
      help,
      {
        max_live_sites: ent.max_live_sites,
        active_count: live,
        choices: [{ action: "preview", method: "POST", url: `${deps.urls.baseUrl}/api/v1/buckets/${input.bucketId}/publication/preview` }],
      },
    );
  }
}
