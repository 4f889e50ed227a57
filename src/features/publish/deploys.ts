// Immutable deploys: writeDeploy stores a set of files (blobs, precompressed variants, strong
// ETags) as a new deploy; activateDeploy switches the live site to it in one transaction.
// Blob I/O and compression happen before the transaction; the rows are written in one go, so a
// crash leaves either a whole deploy or none (orphan blobs are collected by blob GC).
import { and, asc, eq, gt, isNotNull, max } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { newId } from "../../core/ids";
import { deployFiles, deploys, publications, type DeployTrigger } from "../../db/schema";
import { afterCommit, transaction, type DbOrTx, type Tx } from "../../db/tx";
import { contentTypeFor, etagFor, isCompressible, precompressAsync } from "./content";

/** Files prepared at once by a build (bounded: each may hold its bytes and compressed copies). */
const BUILD_CONCURRENCY = 4;
import { emitSiteChange } from "./events";
import { isExcludedFromPublish, normalizeSitePath } from "./exclusions";
import { takeSiteRules } from "./rules/build";
import type { CompiledRules, RulesSummary } from "./rules/syntax";

export interface DeployFileInput {
  path: string;
  /** Either the bytes, or the sha256 of a blob already in the store (bucket files). */
  bytes?: Uint8Array | string;
  blobSha?: string;
  contentType?: string;
}

export interface DeployResult {
  deployId: string;
  fileCount: number;
  totalBytes: number;
  /** Paths refused by the exclusion rules (never stored in the deploy). */
  excluded: string[];
  /** False when `goLiveIf` said no: nothing was recorded (the id names no deploy). */
  recorded: boolean;
}

type DeployFileRow = typeof deployFiles.$inferInsert;

export async function writeDeploy(
  deps: Deps,
  publicationId: string,
  files: DeployFileInput[],
  opts: {
    bucketVersionId?: string | null;
    rootDirectory?: string;
    trigger?: DeployTrigger;
    /**
     * Checked in the transaction that records the deploy: true records it and makes it live in
     * that same transaction, false records nothing. The history then holds only deploys that
     * were served: a build superseded while it prepared files leaves no deploy behind (D243).
     */
    goLiveIf?: (tx: Tx) => boolean;
  } = {},
): Promise<DeployResult> {
  const pub = deps.db.select({ id: publications.id }).from(publications).where(eq(publications.id, publicationId)).get();
  if (!pub) throw new ApiError("PUBLICATION_NOT_FOUND", `Publication ${publicationId} was not found.`);

  const excluded: string[] = [];
  const seen = new Set<string>();
  const accepted: Array<DeployFileInput & { path: string }> = [];
  for (const f of files) {
    const path = normalizeSitePath(f.path);
    if (path === null) throw new ApiError("VALIDATION_FAILED", `Invalid file path "${f.path}".`, { path: f.path });
    if (isExcludedFromPublish(path)) {
      excluded.push(path);
      continue;
    }
    if (seen.has(path)) throw new ApiError("VALIDATION_FAILED", `Duplicate file path "${path}".`, { path });
    if ((f.bytes === undefined) === (f.blobSha === undefined)) throw new ApiError("VALIDATION_FAILED", `File "${path}" needs exactly one of bytes or blobSha.`);
    seen.add(path);
    accepted.push({ ...f, path });
  }
  const siteRules = await takeSiteRules(deps, accepted);

  // Variants already computed for the same content in an earlier deploy are reused: a
  // republish with one changed file compresses one file. Same content in two paths of this
  // deploy is compressed once (the promise is shared).
  type Variants = Pick<DeployFileRow, "gzipSha256" | "gzipSize" | "brSha256" | "brSize">;
  const known = new Map<string, Promise<Variants>>();
  const deployId = newId("dpl");
  const variantsFor = (sha: string, bytes: Uint8Array | null): Promise<Variants> => {
    let p = known.get(sha);
    if (!p) {
      p = (async () => {
        // Copies another deploy stores may lose that deploy while this build runs (its bucket
        // deleted, its history pruned) and the blob collector runs in another job lane: renewed
        // before they are trusted, so a collection that marked before this deploy is recorded
        // keeps them; one it already took is compressed again.
        const prev = previousVariants(deps, sha);
        if (prev && (await renewed(deps, [prev.gzipSha256, prev.brSha256]))) return prev;
        const data = bytes ?? new Uint8Array(await deps.blobs.file(sha).arrayBuffer());
        const c = await precompressAsync(data);
        const gz = c.gzip ? await deps.blobs.putBytes(c.gzip) : null;
        const br = c.br ? await deps.blobs.putBytes(c.br) : null;
        return { gzipSha256: gz?.sha256 ?? null, gzipSize: gz?.size ?? null, brSha256: br?.sha256 ?? null, brSize: br?.size ?? null };
      })();
      known.set(sha, p);
    }
    return p;
  };
  const rowFor = async (f: DeployFileInput & { path: string }): Promise<DeployFileRow> => {
    let sha: string;
    let size: number;
    let bytes: Uint8Array | null = null;
    if (f.bytes !== undefined) {
      bytes = typeof f.bytes === "string" ? new TextEncoder().encode(f.bytes) : f.bytes;
      const info = await deps.blobs.putBytes(bytes);
      sha = info.sha256;
      size = info.size;
    } else {
      sha = f.blobSha!.toLowerCase();
      const s = await deps.blobs.size(sha);
      if (s === null) throw new ApiError("VALIDATION_FAILED", `File "${f.path}" refers to a blob that is not stored.`, { path: f.path });
      size = s;
    }
    const contentType = f.contentType ?? contentTypeFor(f.path);
    const row: DeployFileRow = { deployId, path: f.path, blobSha256: sha, size, contentType, etag: etagFor(sha) };
    if (isCompressible(contentType, size)) Object.assign(row, await variantsFor(sha, bytes));
    return row;
  };
  // A few files at a time: compression runs on zlib's thread pool, so cores work in parallel
  // and the event loop (which also serves the sites) stays free.
  const rows: DeployFileRow[] = new Array(accepted.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(BUILD_CONCURRENCY, accepted.length) }, async () => {
      while (next < accepted.length) {
        const i = next++;
        rows[i] = await rowFor(accepted[i]!);
      }
    }),
  );
  const totalBytes = rows.reduce((n, r) => n + r.size, 0);

  const now = deps.clock.now().toISOString();
  const recorded = transaction(deps.db, (tx) => {
    if (opts.goLiveIf && !opts.goLiveIf(tx)) return false;
    const last =
      tx
        .select({ n: max(deploys.sequence) })
        .from(deploys)
        .where(eq(deploys.publicationId, publicationId))
        .get()?.n ?? 0;
    tx.insert(deploys)
      .values({
        id: deployId,
        publicationId,
        bucketVersionId: opts.bucketVersionId ?? null,
        rootDirectory: opts.rootDirectory ?? "",
        fileCount: rows.length,
        totalBytes,
        createdAt: now,
        siteRules: siteRules ? (siteRules.rules as unknown as Record<string, unknown>) : null,
        siteRulesSummary: siteRules ? (siteRules.summary as unknown as Record<string, unknown>) : null,

        sequence: last + 1,
        trigger: opts.trigger ?? "api",
      })
      .run();
    // One prepared statement run per row: building 500-row inserts through drizzle made a
    // 20,000-file deploy's write take 630-850 ms instead of 330-470 (the rows are the same).
    const insert = deps.sqlite.query(
      "INSERT INTO deploy_files (deploy_id, path, blob_sha256, size, content_type, etag, gzip_sha256, gzip_size, br_sha256, br_size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    for (const r of rows)
      insert.run(
        r.deployId,
        r.path,
        r.blobSha256,
        r.size,
        r.contentType,
        r.etag,
        r.gzipSha256 ?? null,
        r.gzipSize ?? null,
        r.brSha256 ?? null,
        r.brSize ?? null,
      );
    if (opts.goLiveIf) activateDeploy(deps, publicationId, deployId, tx);
    return true;
  });
  return { deployId, fileCount: rows.length, totalBytes, excluded, recorded };
}

/** Whether every one of these blobs is still stored, each given a fresh mtime (null: no such variant). */
async function renewed(deps: Deps, shas: Array<string | null>): Promise<boolean> {
  const kept = await Promise.all(shas.map((sha) => (sha === null ? true : deps.blobs.renew(sha))));
  return kept.every(Boolean);
}

/** Compressed variants stored for the same content by any earlier deploy (compressible only). */
function previousVariants(deps: Deps, sha: string) {
  const prev = deps.db
    .select({ gzipSha256: deployFiles.gzipSha256, gzipSize: deployFiles.gzipSize, brSha256: deployFiles.brSha256, brSize: deployFiles.brSize })
    .from(deployFiles)
    .where(and(eq(deployFiles.blobSha256, sha), isNotNull(deployFiles.gzipSha256)))
    .limit(1)
    .get();
  return prev ?? undefined;
}

/**
 * Make a written deploy the live one. One transaction: the publication row points at the new
 * deploy and becomes ready/published together; the site server's cache is dropped after commit.
 */
export function activateDeploy(deps: Deps, publicationId: string, deployId: string, db: DbOrTx = deps.db): void {
  transaction(db, (tx) => {
    const d = tx
      .select()
      .from(deploys)
      .where(and(eq(deploys.id, deployId), eq(deploys.publicationId, publicationId)))
      .get();
    if (!d) throw new ApiError("DEPLOY_NOT_FOUND", `Deploy ${deployId} of publication ${publicationId} was not found.`);
    const now = deps.clock.now().toISOString();
    tx.update(publications)
      .set({
        currentDeployId: deployId,
        publishedFilesCount: d.fileCount,
        status: "published",
        publishState: "ready",
        publishError: null,
        publishCompletedAt: now,
        updatedAt: now,
      })
      .where(eq(publications.id, publicationId))
      .run();
    afterCommit(tx, () => emitSiteChange(deps, { publicationId }));
  });
}

export type DeployFile = typeof deployFiles.$inferSelect;

/**
 * One step of a deploy's files in path order, after `afterPath` (null: from the first). A deploy
 * is never read whole at once: the site server (SiteDirectory.manifest) and the publication's
 * manifest (present.ts) read it in steps.
 */
export function deployManifestPage(deps: Deps, deployId: string, afterPath: string | null, limit: number): DeployFile[] {
  const where = afterPath === null ? eq(deployFiles.deployId, deployId) : and(eq(deployFiles.deployId, deployId), gt(deployFiles.path, afterPath));
  return deps.db.select().from(deployFiles).where(where).orderBy(asc(deployFiles.path)).limit(limit).all();
}

/** Rows a whole-deploy read takes per step: a few milliseconds of the event loop each. */
export const DEPLOY_FILES_STEP = 2_000;

/**
 * A deploy's files after `afterPath` (null: all of them) in path order, DEPLOY_FILES_STEP rows
 * at a time with a turn of the event loop before each step, so other requests are answered
 * between. A caller that wants the first step at once reads it with deployManifestPage.
 */
export async function* deployFilesInSteps(deps: Deps, deployId: string, afterPath: string | null): AsyncGenerator<DeployFile[]> {
  for (let after = afterPath; ; ) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const rows = deployManifestPage(deps, deployId, after, DEPLOY_FILES_STEP);
    if (rows.length) yield rows;
    if (rows.length < DEPLOY_FILES_STEP) return;
    after = rows[rows.length - 1]!.path;
  }
}

/**
 * `limit` of a deploy's files in path order from position `offset`: the dashboard's Site tab
 * shows a page of them (a walk of the (deploy_id, path) key, not the whole deploy in memory).
 */
export function deployManifestSlice(deps: Deps, deployId: string, offset: number, limit: number): DeployFile[] {
  return deps.db.select().from(deployFiles).where(eq(deployFiles.deployId, deployId)).orderBy(asc(deployFiles.path)).limit(limit).offset(offset).all();
}

/** Whether a deploy still has its files (not pruned from the kept history, not deleted). */
export function deployHasFiles(deps: Deps, deployId: string): boolean {
  const row = deps.db.select({ prunedAt: deploys.prunedAt }).from(deploys).where(eq(deploys.id, deployId)).get();
  return row !== undefined && row.prunedAt === null;
}

/** The compiled `_redirects`/`_headers` of a deploy (null: neither file). */
export function deploySiteRules(deps: Deps, deployId: string): CompiledRules | null {
  const row = deps.db.select({ rules: deploys.siteRules }).from(deploys).where(eq(deploys.id, deployId)).get();
  return (row?.rules as CompiledRules | null | undefined) ?? null;
}

/** Counts and warnings of a deploy's rules, as the publication shows them. */
export function deploySiteRulesSummary(deps: Deps, deployId: string): RulesSummary | null {
  const row = deps.db.select({ summary: deploys.siteRulesSummary }).from(deploys).where(eq(deploys.id, deployId)).get();
  return (row?.summary as RulesSummary | null | undefined) ?? null;
}

/** Deploys of a publication still referenced (for rollback listings and cleanup). */
export function listDeploys(deps: Deps, publicationId: string) {
  return deps.db.select().from(deploys).where(eq(deploys.publicationId, publicationId)).all();
}
