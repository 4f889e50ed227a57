// Deploy history and instant rollback. Every build writes an immutable deploy; the newest
// `deploy_history` of a main site (a plan number) keep their files, older ones are pruned (their
// file rows go, so blob GC frees what nothing else uses). A rollback is the same pointer switch
// a build ends with: publications.current_deploy_id changes in one transaction and the site
// server drops its cached lookup after commit. Bucket files are never touched.
import { and, count, desc, eq, inArray, isNull, lt, max } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { pageWindow, pagination, type Pagination } from "../../core/paging";
import { deployFiles, deploys, publications } from "../../db/schema";
import { entitlementsOf, getAccount } from "../accounts";
import { loadMutableBucket } from "../buckets";
import { afterCommit, transaction } from "../../db/tx";
import { emitSiteChange } from "./events";
import type { PublicationRow } from "./publications";
import { loadPublication } from "./service";

export type DeployRow = typeof deploys.$inferSelect;
export const DEPLOY_PAGE = { defaultLimit: 20, maxLimit: 100 };
/** A preview has no history: only its live deploy keeps files. */
const PREVIEW_KEEP = 1;

/** How many deploys keep their files for this publication (main: the account plan's number). */
export function deployHistoryLimit(deps: Deps, pub: Pick<PublicationRow, "kind" | "accountId">): number {
  if (pub.kind === "preview") return PREVIEW_KEEP;
  const n = entitlementsOf(deps, getAccount(deps, pub.accountId)).deploy_history;
  return Math.max(1, Math.floor(n));
}

/**
 * Prune deploys past the kept history: the newest `keep` by sequence stay, and the live deploy
 * always stays whatever its age. Pruned deploys keep their row (the history still lists them)
 * but lose their file rows, which is what the blob collector marks from.
 */
export function pruneDeploys(deps: Deps, publicationId: string, keep: number): { pruned: number } {
  return transaction(deps.db, (tx) => {
    const pub = tx.select({ live: publications.currentDeployId }).from(publications).where(eq(publications.id, publicationId)).get();
    if (!pub) return { pruned: 0 };
    const kept = tx
      .select({ id: deploys.id })
      .from(deploys)
      .where(eq(deploys.publicationId, publicationId))
      .orderBy(desc(deploys.sequence))
      .limit(keep)
      .all()
      .map((d) => d.id);
    const keepSet = new Set(kept);
    if (pub.live) keepSet.add(pub.live);
    const due = tx
      .select({ id: deploys.id })
      .from(deploys)
      .where(and(eq(deploys.publicationId, publicationId), isNull(deploys.prunedAt)))
      .all()
      .map((d) => d.id)
      .filter((id) => !keepSet.has(id));
    if (due.length === 0) return { pruned: 0 };
    const now = deps.clock.now().toISOString();
    for (let i = 0; i < due.length; i += 500) {
      const chunk = due.slice(i, i + 500);
      tx.delete(deployFiles).where(inArray(deployFiles.deployId, chunk)).run();
      tx.update(deploys).set({ prunedAt: now }).where(inArray(deploys.id, chunk)).run();
    }
    return { pruned: due.length };
  });
}

/** After a build: prune the publication's history to its plan's number. */
export function pruneAfterBuild(deps: Deps, pub: Pick<PublicationRow, "id" | "kind" | "accountId">): void {
  pruneDeploys(deps, pub.id, deployHistoryLimit(deps, pub));
}

export function presentDeploy(pub: Pick<PublicationRow, "id" | "currentDeployId" | "status">, d: DeployRow) {
  return {
    id: d.id,
    publication_id: d.publicationId,
    created_at: d.createdAt,
    bucket_version_id: d.bucketVersionId,
    publication_root_directory: d.rootDirectory,
    files_count: d.fileCount,
    total_bytes: d.totalBytes,
    trigger: d.trigger,
    live: pub.status !== "unpublished" && pub.currentDeployId === d.id,
    rollback_available: d.prunedAt === null,
    pruned_at: d.prunedAt,
  };
}

/** The newest deploy of a publication (by sequence), or undefined. */
export function newestDeploy(deps: Deps, publicationId: string): DeployRow | undefined {
  return deps.db.select().from(deploys).where(eq(deploys.publicationId, publicationId)).orderBy(desc(deploys.sequence)).limit(1).get();
}

/**
 * What the publication read shows about its live deploy: `deploy_id`, and `rolled_back_from`
 * (the newest deploy) when the live one is an earlier deploy.
 */
export function liveDeployFields(deps: Deps, pub: PublicationRow, newestIds?: Map<string, string>): { deploy_id: string | null; rolled_back_from?: string } {
  const live = pub.status === "unpublished" ? null : pub.currentDeployId;
  if (!live) return { deploy_id: null };
  const newest = newestIds ? newestIds.get(pub.id) : newestDeploy(deps, pub.id)?.id;
  return newest && newest !== live ? { deploy_id: live, rolled_back_from: newest } : { deploy_id: live };
}

/**
 * The newest deploy (by sequence) of each of these publications, in one query: what a list
 * page passes to liveDeployFields instead of one query per row. A publication without deploys
 * is absent.
 */
export function newestDeployIds(deps: Deps, publicationIds: string[]): Map<string, string> {
  const newest = new Map<string, string>();
  for (let i = 0; i < publicationIds.length; i += 500) {
    // SQLite takes a bare column from the row that holds the max() of its group.
    const rows = deps.db
      .select({ publicationId: deploys.publicationId, id: deploys.id, sequence: max(deploys.sequence) })
      .from(deploys)
      .where(inArray(deploys.publicationId, publicationIds.slice(i, i + 500)))
      .groupBy(deploys.publicationId)
      .all();
    for (const r of rows) newest.set(r.publicationId, r.id);
  }
  return newest;
}

export function listPublicationDeploys(
  deps: Deps,
  actor: Actor,
  publicationId: string,
  page: { limit?: number; offset?: number } = {},
): { pub: PublicationRow; deploys: DeployRow[]; pagination: Pagination; historyLimit: number } {
  const { pub } = loadPublication(deps, actor, publicationId, "bucket_read");
  const { limit, offset } = pageWindow(page, DEPLOY_PAGE);
  const where = eq(deploys.publicationId, pub.id);
  const total = deps.db.select({ n: count() }).from(deploys).where(where).get()!.n;
  const rows = deps.db.select().from(deploys).where(where).orderBy(desc(deploys.sequence)).limit(limit).offset(offset).all();
  return { pub, deploys: rows, pagination: pagination(limit, offset, rows.length, total), historyLimit: deployHistoryLimit(deps, pub) };
}

function deployOf(deps: Deps, pub: PublicationRow, deployId: string): DeployRow {
  const d = deps.db
    .select()
    .from(deploys)
    .where(and(eq(deploys.id, deployId), eq(deploys.publicationId, pub.id)))
    .get();
  // Another publication's deploy is as unknown as a made-up id: nothing leaks across sites.
  if (!d) throw new ApiError("DEPLOY_NOT_FOUND", `Deploy ${deployId} of publication ${pub.id} was not found.`, { deploy_id: deployId });
  return d;
}

export function getPublicationDeploy(deps: Deps, actor: Actor, publicationId: string, deployId: string) {
  const { pub } = loadPublication(deps, actor, publicationId, "bucket_read");
  return { pub, deploy: deployOf(deps, pub, deployId) };
}

/** The deploy before the live one (by sequence) that can still be rolled back to. */
function previousDeploy(deps: Deps, pub: PublicationRow): DeployRow {
  const live = pub.currentDeployId ? deps.db.select().from(deploys).where(eq(deploys.id, pub.currentDeployId)).get() : undefined;
  const before = live
    ? deps.db
        .select()
        .from(deploys)
        .where(and(eq(deploys.publicationId, pub.id), lt(deploys.sequence, live.sequence), isNull(deploys.prunedAt)))
        .orderBy(desc(deploys.sequence))
        .limit(1)
        .get()
    : undefined;
  if (!before) throw new ApiError("DEPLOY_NOT_FOUND", "There is no earlier deploy to roll back to.", { publication_id: pub.id });
  return before;
}

/**
 * Switch the live site to an earlier (or later) deploy of the same publication, without a
 * rebuild. No deploy_id: the one before the live deploy. Refused for another publication's or
 * an unknown deploy (404), a pruned one or one whose blobs are gone (409), a preview, a site
 * that is not published, or while a build is pending (409 ROLLBACK_NOT_POSSIBLE), and while
 * another credential holds the bucket lock (423 BUCKET_LOCKED).
 */
export async function rollbackPublication(deps: Deps, actor: Actor, publicationId: string, deployId?: string) {
  const { pub } = loadPublication(deps, actor, publicationId, "bucket_admin");
  // Switching the live deploy is a publishing change: another credential's bucket lock (or an
  // archive, or a delete under way) refuses it as it refuses a publish.
  loadMutableBucket(deps, actor, pub.bucketId, { need: "bucket_admin" });
  if (pub.kind === "preview") throw notPossible(pub, "preview", "A preview has no deploy history; publish the preview again instead.");
  const refusal = stateRefusal(pub);
  if (refusal) throw refusal;
  const target = deployId === undefined ? previousDeploy(deps, pub) : deployOf(deps, pub, deployId);
  const from = pub.currentDeployId;
  if (target.prunedAt !== null) throw collected(target, `Deploy ${target.id} fell out of the kept history on ${target.prunedAt}; its files were freed.`);
  // Belt and braces: every blob the deploy serves must still be stored (an operator may have
  // removed blobs by hand); switching to a deploy with holes would serve 5xx.
  if (!(await allBlobsStored(deps, target.id))) throw collected(target, `Deploy ${target.id} refers to files that are no longer stored.`);

  const changed = transaction(deps.db, (tx) => {
    loadMutableBucket(deps, actor, pub.bucketId, { need: "bucket_admin" }, tx);
    const fresh = tx.select().from(publications).where(eq(publications.id, pub.id)).get();
    // Re-checked where the switch happens: a publish or unpublish accepted meanwhile wins.
    if (!fresh) throw notPossible(pub, "not_published", "The site is gone.");
    const changedMeanwhile = stateRefusal(fresh);
    if (changedMeanwhile) throw changedMeanwhile;
    const still = tx.select({ prunedAt: deploys.prunedAt }).from(deploys).where(eq(deploys.id, target.id)).get();
    if (!still || still.prunedAt !== null) throw collected(target, `Deploy ${target.id} fell out of the kept history; its files were freed.`);
    if (fresh.currentDeployId === target.id) return false;
    tx.update(publications)
      .set({ currentDeployId: target.id, publishedFilesCount: target.fileCount, updatedAt: deps.clock.now().toISOString() })
      .where(eq(publications.id, pub.id))
      .run();
    afterCommit(tx, () => emitSiteChange(deps, { publicationId: pub.id }));
    return true;
  });
  if (changed) deps.log.info("publication rolled back", { publication_id: pub.id, from_deploy_id: from, deploy_id: target.id });
  const { pub: after } = loadPublication(deps, actor, pub.id, "bucket_admin");
  return { pub: after, deploy: target, previousDeployId: from, changed };
}

/** Blobs looked up at once when checking a deploy: enough to overlap the file system's latency, few enough to keep file handles for the server. */
const BLOB_CHECKS_AT_ONCE = 32;

/**
 * Whether every blob a deploy serves is still stored, its precompressed copies included (a
 * browser is answered from one, and a missing one is a 500). Each distinct blob is looked up once
 * (a site's copies of one file, or its many identical small files, share one), a batch at a time.
 */
async function allBlobsStored(deps: Deps, deployId: string): Promise<boolean> {
  const shas = [
    ...new Set(
      deps.db
        .select({ sha: deployFiles.blobSha256, gzip: deployFiles.gzipSha256, br: deployFiles.brSha256 })
        .from(deployFiles)
        .where(eq(deployFiles.deployId, deployId))
        .all()
        .flatMap((r) => [r.sha, r.gzip, r.br])
        .filter((sha): sha is string => sha !== null),
    ),
  ];
  for (let i = 0; i < shas.length; i += BLOB_CHECKS_AT_ONCE) {
    const stored = await Promise.all(shas.slice(i, i + BLOB_CHECKS_AT_ONCE).map((sha) => deps.blobs.has(sha)));
    if (stored.includes(false)) return false;
  }
  return true;
}

/** Why the site cannot switch deploys now, or null. A republish keeps status publishing while the old deploy serves. */
function stateRefusal(pub: PublicationRow): ApiError | null {
  if (pub.publishState === "queued" || pub.publishState === "processing")
    return notPossible(pub, "build_pending", "A build is pending and would replace the rolled-back deploy; wait until publish_state is ready or failed.");
  if (pub.status !== "published" || !pub.currentDeployId)
    return notPossible(pub, "not_published", "The site is not published; publish it first (a rollback never brings an unpublished site back).");
  return null;
}

function notPossible(pub: PublicationRow, reason: "preview" | "not_published" | "build_pending", message: string): ApiError {
  return new ApiError("ROLLBACK_NOT_POSSIBLE", message, { reason, publication_id: pub.id, status: pub.status, publish_state: pub.publishState });
}

function collected(d: DeployRow, message: string): ApiError {
  return new ApiError("DEPLOY_COLLECTED", message, { deploy_id: d.id, pruned_at: d.prunedAt });
}
