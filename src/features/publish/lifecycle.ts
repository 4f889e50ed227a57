// Retry, unpublish and the periodic housekeeping: recovering stuck builds, ending expired
// sites, and the Free-plan renewal rule.
import { and, eq, inArray, isNotNull, lte } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { randomToken } from "../../core/ids";
import { accounts, publications, type PublicationKind } from "../../db/schema";
import { notifyAccount } from "../notifications";
import { afterCommit, transaction, type DbOrTx } from "../../db/tx";
import { assertVisibilityUnlocked, loadMutableBucket } from "../buckets";
import { hasLiveJob } from "./build";
import { emitSiteChange } from "./events";
import { assertPublishAllowed } from "./policy";
import { takePublishToken } from "./limits";
import type { PublicationRow } from "./publications";
import { BUILD_JOB, findPublication, PREVIEW_DEFAULT_MINUTES, type SavedRequest } from "./accept-publish";

export const UNPUBLISH_JOB = "publish.unpublish";
/** Expired sites keep answering 410 this long, then end (404, lifecycle over). */
export const EXPIRED_GRACE_MS = 7 * 24 * 3600_000;

/**
 * Put a publication back in `queued` with a fresh build token and enqueue its build; `check`
 * runs first in the same transaction (a retry is a publish: the plan's limits apply).
 * `expiresAt` replaces the expiry (a retried preview gets its lifetime again).
 */
function requeue(deps: Deps, pub: PublicationRow, check?: (tx: DbOrTx) => void, expiresAt?: string): PublicationRow {
  return transaction(deps.db, (tx) => {
    check?.(tx);
    const now = deps.clock.now().toISOString();
    const request = {
      ...(pub.publishRequest as Record<string, unknown>),
      build_token: randomToken(16),
      ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}),
    };
    const row = tx
      .update(publications)
      .set({
        publishState: "queued",
        status: pub.currentDeployId ? (pub.status === "unpublished" ? "publishing" : pub.status) : "publishing",
        publishError: null,
        publishEnqueuedAt: now,
        publishStartedAt: null,
        publishRequest: request,
        ...(expiresAt !== undefined ? { expiresAt } : {}),
        updatedAt: now,
      })
      .where(eq(publications.id, pub.id))
      .returning()
      .get()!;
    deps.jobs.enqueue(BUILD_JOB, { publication_id: pub.id, build_token: request.build_token }, { maxAttempts: 1 }, tx);
    return row;
  });
}

/** A build that failed, or whose job is gone (stuck): what retry re-runs. */
export function needsRetry(deps: Deps, pub: PublicationRow): boolean {
  if (pub.publishState === "failed") return true;
  return (pub.publishState === "queued" || pub.publishState === "processing") && !hasLiveJob(deps, BUILD_JOB, pub.id);
}

/** Without a kind: the main site when its build needs a retry, else the preview when its does, else whichever exists. */
function defaultRetryTarget(deps: Deps, bucketId: string): PublicationRow | undefined {
  const main = findPublication(bucketId, "main", deps.db);
  if (main && needsRetry(deps, main)) return main;
  const preview = findPublication(bucketId, "preview", deps.db);
  if (preview && needsRetry(deps, preview)) return preview;
  return main ?? preview;
}

/**
 * POST /buckets/:id/publication/retry: re-run the saved request of a failed (or stuck) build.
 * `kind` names the main site or the preview; without it the main site's build is retried when it
 * needs it, otherwise the preview's (D244). A retried preview lives its requested time again.
 */
export function retryPublication(deps: Deps, actor: Actor, bucketId: string, kind?: PublicationKind): PublicationRow {
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_admin" });
  assertVisibilityUnlocked(bucket);
  const pub = kind ? findPublication(bucket.id, kind, deps.db) : defaultRetryTarget(deps, bucket.id);
  if (!pub) {
    throw new ApiError(
      "PUBLICATION_NOT_FOUND",
      kind === "preview" ? `Bucket ${bucket.id} has no preview.` : `Bucket ${bucket.id} was never published${kind ? " (it may have a preview)" : ""}.`,
    );
  }
  if (!needsRetry(deps, pub)) {
    throw new ApiError(
      "NOTHING_TO_RETRY",
      `The ${pub.kind === "preview" ? "preview" : "publication"} is ${pub.publishState}; only a failed or stuck build is retried.`,
      {
        kind: pub.kind,
        publish_state: pub.publishState,
        status: pub.status,
      },
    );
  }
  const saved = pub.publishRequest as Partial<SavedRequest>;
  const expiresAt =
    pub.kind === "preview" ? new Date(deps.clock.now().getTime() + (saved.expires_in_minutes ?? PREVIEW_DEFAULT_MINUTES) * 60_000).toISOString() : undefined;
  // A failed first build left the site unpublished, outside the plan's counts; the plan may also
  // have changed since the request was saved. The publish token is taken only by a retry the plan allows.
  return requeue(
    deps,
    pub,
    (tx) => {
      assertPublishAllowed(deps, pub, tx);
      takePublishToken(deps, actor);
    },
    expiresAt,
  );
}

/**
 * DELETE /buckets/:id/publication: the main site and any live preview go to unpublishing now
 * (they answer 404 at once) and the job finishes them; archive and delete are unblocked then.
 */
export function unpublishBucket(deps: Deps, actor: Actor, bucketId: string): { publication: PublicationRow; changed: boolean } {
  // Unpublish stays available on archived buckets (spec): only locks and deletion refuse it.
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_admin", allowArchived: true });
  assertVisibilityUnlocked(bucket);
  const main = findPublication(bucket.id, "main", deps.db);
  const preview = findPublication(bucket.id, "preview", deps.db);
  const pub = main ?? preview;
  if (!pub) throw new ApiError("PUBLICATION_NOT_FOUND", `Bucket ${bucket.id} was never published.`);
  let changed = false;
  let shown = pub;
  for (const p of [main, preview]) {
    if (!p || p.status === "unpublished" || p.status === "unpublishing") continue;
    const row = startUnpublish(deps, p.id);
    if (row) {
      changed = true;
      if (p === pub) shown = row;
    }
  }
  return { publication: shown, changed };
}

function startUnpublish(deps: Deps, id: string): PublicationRow | null {
  const row = transaction(deps.db, (tx) => {
    const now = deps.clock.now().toISOString();
    const r = tx
      .update(publications)
      .set({ status: "unpublishing", publishState: "unpublishing", publishEnqueuedAt: now, updatedAt: now })
      .where(and(eq(publications.id, id), inArray(publications.status, ["publishing", "published"])))
      .returning()
      .get();
    if (r) deps.jobs.enqueue(UNPUBLISH_JOB, { publication_id: id }, { maxAttempts: 3 }, tx);
    if (r) afterCommit(tx, () => emitSiteChange(deps, { publicationId: id }));
    return r ?? null;
  });
  return row;
}

/**
 * Builds and unpublishes whose job is gone (a crash between commit and claim, a job that failed
 * without reaching its handler) are queued again. The job runner's lease sweeper recovers dead
 * jobs; this recovers publications left without any job.
 */
export function sweepStuckPublications(deps: Deps): { requeued: number } {
  const stuck = deps.db
    .select()
    .from(publications)
    .where(inArray(publications.publishState, ["queued", "processing", "unpublishing"]))
    .all();
  let requeued = 0;
  for (const pub of stuck) {
    if (pub.publishState === "unpublishing") {
      if (hasLiveJob(deps, UNPUBLISH_JOB, pub.id)) continue;
      transaction(deps.db, (tx) => deps.jobs.enqueue(UNPUBLISH_JOB, { publication_id: pub.id }, { maxAttempts: 3 }, tx));
      requeued++;
    } else if (!hasLiveJob(deps, BUILD_JOB, pub.id)) {
      requeue(deps, pub);
      requeued++;
    }
  }
  if (requeued) deps.log.warn("requeued stuck publications", { count: requeued });
  return { requeued };
}

/**
 * Sites past expires_at answer 410 (the site server checks the time on every request). After
 * a grace week they end: unpublished (404), no longer blocking archive or delete.
 */
export function endExpiredSites(deps: Deps): { ended: number } {
  const cutoff = new Date(deps.clock.now().getTime() - EXPIRED_GRACE_MS).toISOString();
  const due = deps.db
    .select({ id: publications.id })
    .from(publications)
    .where(and(isNotNull(publications.expiresAt), lte(publications.expiresAt, cutoff), inArray(publications.status, ["publishing", "published"])))
    .all();
  for (const p of due) startUnpublish(deps, p.id);
  return { ended: due.length };
}

/**
 * Free-plan renewal: a plan with site_renewal_days > 0 keeps its main sites only while the
 * account had a signed-in dashboard visit within that many days (the account's creation counts
 * as the first visit). API, CLI and MCP traffic never renew. Lapsed sites are unpublished (the
 * bucket and its files stay; publishing again after a visit brings the site back) and the
 * owner is notified.
 */
export function enforceSiteRenewal(deps: Deps): { unpublished: number } {
  if (!deps.config.siteRenewal) return { unpublished: 0 };
  const live = deps.db
    .select({ id: publications.id, accountId: publications.accountId, slug: publications.publicSlug, bucketId: publications.bucketId })
    .from(publications)
    .where(and(eq(publications.kind, "main"), inArray(publications.status, ["publishing", "published"])))
    .all();
  const now = deps.clock.now().getTime();
  let n = 0;
  const byAccount = new Map<string, typeof accounts.$inferSelect | undefined>();
  for (const p of live) {
    if (!byAccount.has(p.accountId)) byAccount.set(p.accountId, deps.db.select().from(accounts).where(eq(accounts.id, p.accountId)).get());
    const account = byAccount.get(p.accountId);
    if (!account) continue;
    const days = deps.plans.get(account.plan).entitlements.site_renewal_days;
    if (days <= 0) continue;
    const last = Date.parse(account.lastDashboardVisitAt ?? account.createdAt);
    if (now - last < days * 86_400_000) continue;
    if (!startUnpublish(deps, p.id)) continue;
    n++;
    transaction(deps.db, (tx) =>
      notifyAccount(
        deps,
        {
          accountId: p.accountId,
          kind: "site_renewal_lapsed",
          subject: `${p.slug} was unpublished`,
          body: `Sites on the ${account.plan} plan stay online while you sign in to the dashboard at least every ${days} days. Sign in and publish the bucket again to bring it back.`,
          data: { publication_id: p.id, bucket_id: p.bucketId, site_renewal_days: days },
        },
        tx,
      ),
    );
  }
  return { unpublished: n };
}

export type { SavedRequest };
