// The build job: queued -> processing -> ready | failed. It reads the bucket's current files
// (the `files` table is the newest snapshot; the deploy records which bucket version that was),
// applies publication_root_directory and the exclusion rules, writes an immutable deploy from
// the blobs already stored (nothing is re-uploaded) and switches the site to it atomically.
// A request that changed only settings (no file change since the live deploy's bucket version,
// same root) reuses the live deploy.
import { and, eq } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { deploys, publications } from "../../db/schema";
import { accountOwnerEmail } from "../accounts";
import { notifyAccount } from "../notifications";
import { afterCommit, transaction, type DbOrTx, type Tx } from "../../db/tx";
import { currentFiles, latestVersion } from "../files";
import { mailerFor } from "../mail";
import { activateDeploy, writeDeploy } from "./deploys";
import { emitSiteChange } from "./events";
import { pruneAfterBuild } from "./history";
import { isExcludedFromPublish } from "./exclusions";
import type { PublicationRow } from "./publications";
import type { SavedRequest } from "./accept-publish";

const current = (db: DbOrTx, id: string) => db.select().from(publications).where(eq(publications.id, id)).get();
const tokenOf = (p: PublicationRow) => (p.publishRequest as Partial<SavedRequest>).build_token;

export async function runBuild(deps: Deps, payload: Record<string, unknown>): Promise<Record<string, unknown>> {
  const id = String(payload.publication_id);
  const token = payload.build_token;
  const pub = current(deps.db, id);
  // A newer request (or an unpublish) superseded this job: its own job does the work.
  if (!pub || tokenOf(pub) !== token || pub.status === "unpublishing" || pub.status === "unpublished" || pub.publishState === "ready") return { skipped: true };
  const now = deps.clock.now().toISOString();
  transaction(deps.db, (tx) => {
    tx.update(publications).set({ publishState: "processing", publishStartedAt: now, updatedAt: now }).where(eq(publications.id, id)).run();
  });
  try {
    const result = await build(deps, pub);
    return result;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    await markFailed(deps, id, token, message);
    return { failed: message };
  }
}

async function build(deps: Deps, pub: PublicationRow): Promise<Record<string, unknown>> {
  const req = pub.publishRequest as Partial<SavedRequest>;
  const root = req.publication_root_directory ?? "";
  const version = latestVersion(pub.bucketId, deps.db) ?? null;
  const live = pub.currentDeployId ? deps.db.select().from(deploys).where(eq(deploys.id, pub.currentDeployId)).get() : undefined;

  // Checked where the site switches, in the same transaction: a newer request or an unpublish
  // accepted while this build ran wins, and this build leaves nothing behind.
  const stillWanted = (tx: Tx) => {
    const fresh = current(tx, pub.id);
    return !!fresh && tokenOf(fresh) === tokenOf(pub) && fresh.status !== "unpublishing" && fresh.status !== "unpublished";
  };
  if (live && live.bucketVersionId === (version?.id ?? null) && live.rootDirectory === root) {
    const switched = transaction(deps.db, (tx) => {
      if (!stillWanted(tx)) return false;
      activateDeploy(deps, pub.id, live.id, tx);
      return true;
    });
    if (!switched) return { superseded: true };
    pruneAfterBuild(deps, pub);
    return { deploy_id: live.id, reused: true };
  }
  const prefix = root === "" ? "" : `${root}/`;
  const rows = currentFiles(pub.bucketId, deps.db, { byPath: true });
  const inputs = rows
    // Received mail stays private whatever the publication root (even "_email" itself).
    .filter((f) => f.path.startsWith(prefix) && !isExcludedFromPublish(f.path))
    // A generic stored type says nothing: the site derives it from the name (index.html -> text/html).
    .map((f) => ({
      path: f.path.slice(prefix.length),
      blobSha: f.sha256,
      contentType: f.contentType === "application/octet-stream" ? undefined : f.contentType,
    }))
    .filter((f) => !isExcludedFromPublish(f.path));
  if (inputs.length === 0) {
    throw new Error(
      root ? `Nothing to publish: the folder "${root}" holds no publishable files.` : "Nothing to publish: the bucket holds no publishable files.",
    );
  }
  const result = await writeDeploy(deps, pub.id, inputs, {
    bucketVersionId: version?.id ?? null,
    rootDirectory: root,
    trigger: req.trigger ?? "api",
    goLiveIf: stillWanted,
  });
  if (!result.recorded) return { superseded: true };
  pruneAfterBuild(deps, pub);
  return { deploy_id: result.deployId, reused: false };
}

/** The call that retries this publication's build; a preview's names itself (D244). */
const retryPath = (p: Pick<PublicationRow, "bucketId" | "kind">) =>
  `/api/v1/buckets/${p.bucketId}/publication/retry${p.kind === "preview" ? "?kind=preview" : ""}`;

/** failed + publish_error; the live deploy (if any) stays up; the owner is told. */
export async function markFailed(deps: Deps, id: string, token: unknown, message: string): Promise<void> {
  const now = deps.clock.now().toISOString();
  let ownerTold: Promise<void> | undefined;
  transaction(deps.db, (tx) => {
    const p = tx.select().from(publications).where(eq(publications.id, id)).get();
    if (!p || tokenOf(p) !== token) return;
    // Unpublished while it built: the unpublish superseded this build, as a newer request does,
    // and the failure changes nothing and tells nobody. Recorded, publish_state "failed" hid the
    // unpublish under way (the sweeper finds one by its publish_state "unpublishing") and let a
    // retry queue a build the unpublish then dropped.
    if (p.status === "unpublishing" || p.status === "unpublished") return;
    tx.update(publications)
      .set({
        publishState: "failed",
        publishError: message,
        publishCompletedAt: now,
        updatedAt: now,
        // Never built: nothing is live and nothing blocks archive; a live deploy keeps serving.
        status: p.currentDeployId ? "published" : "unpublished",
      })
      .where(eq(publications.id, id))
      .run();
    notifyAccount(
      deps,
      {
        accountId: p.accountId,
        kind: "publish_failed",
        subject: `Publishing ${p.kind === "preview" ? "the preview of " : ""}${p.publicSlug} failed`,
        body: `The build of ${p.kind === "preview" ? "the preview " : ""}${p.publicSlug} failed: ${message}\nFix the files and retry: POST ${retryPath(p)}`,
        data: { publication_id: p.id, bucket_id: p.bucketId, publish_error: message },
      },
      tx,
    );
    afterCommit(tx, () => emitSiteChange(deps, { publicationId: id }));
    afterCommit(tx, () => {
      ownerTold = mailFailureToOwner(deps, p, message);
    });
  });
  await ownerTold;
}

/** The publish-failed mail to the account owner; a mail that cannot be sent is logged, not thrown. */
async function mailFailureToOwner(deps: Deps, pub: PublicationRow, message: string): Promise<void> {
  const id = pub.id;
  const ownerEmail = accountOwnerEmail(pub.accountId, deps.db);
  if (!ownerEmail) return;
  try {
    await mailerFor(deps).send({
      to: ownerEmail,
      kind: "publish-failed",
      subject: `Pier: publishing ${pub.kind === "preview" ? "the preview of " : ""}${pub.publicSlug} failed`,
      text: `The build of ${pub.kind === "preview" ? "the preview of " : ""}${pub.publicSlug} failed:\n\n  ${message}\n\nFix the files, then retry (pier ${pub.kind === "preview" ? "preview" : "publish"} again, or POST ${retryPath(pub)}).\n`,
    });
  } catch (e) {
    deps.log.warn("publish-failed mail could not be sent", { publication_id: id, error: e });
  }
}

/** The unpublish job: the site goes offline (it already answers 404 while unpublishing). */
export async function runUnpublish(deps: Deps, payload: Record<string, unknown>): Promise<Record<string, unknown>> {
  const id = String(payload.publication_id);
  const now = deps.clock.now().toISOString();
  const done = transaction(deps.db, (tx) => {
    const changed =
      tx
        .update(publications)
        .set({ status: "unpublished", publishState: "ready", currentDeployId: null, publishedFilesCount: 0, publishCompletedAt: now, updatedAt: now })
        .where(and(eq(publications.id, id), eq(publications.status, "unpublishing")))
        .returning({ id: publications.id })
        .all().length > 0;
    if (changed) afterCommit(tx, () => emitSiteChange(deps, { publicationId: id }));
    return changed;
  });
  return { unpublished: done };
}

/** Jobs of `kind` queued or running for a publication. */
export function hasLiveJob(deps: Deps, kind: string, publicationId: string): boolean {
  return !!deps.sqlite
    .query<{ id: string }, [string, string]>(
      "SELECT id FROM jobs WHERE kind = ? AND status IN ('queued','running') AND json_extract(payload, '$.publication_id') = ? LIMIT 1",
    )
    .get(kind, publicationId);
}
