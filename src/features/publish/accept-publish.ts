// Accepting a publish (main or preview): validate and normalize the request, check the plan,
// prepare the password hash (async), then ONE transaction writes the publication row in
// `queued` and enqueues its build. Publish-session finalize runs the same commit inside its own
// transaction, so files, publication and job commit together.
import { and, eq } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { newId, randomToken } from "../../core/ids";
import { randomSecret } from "../../core/crypto";
import { publications, type AccessMode, type DeployTrigger, type PublicationKind, type SiteMode } from "../../db/schema";
import { afterCommit, transaction, type DbOrTx, type Tx } from "../../db/tx";
import { assertVisibilityUnlocked, loadMutableBucket, type BucketRow } from "../buckets";
import { emitSiteChange } from "./events";
import { normalizeSitePath } from "./exclusions";
import { takePublishToken } from "./limits";
import type { PublishInput } from "./model";
import { assertPublishAllowed } from "./policy";
import { previewFollowsMain, type PublicationRow } from "./publications";
import { pickSlug, slugTaken } from "./slugs";

export const PREVIEW_DEFAULT_MINUTES = 15;
export const PREVIEW_MAX_MINUTES = 43200;
export const BUILD_JOB = "publish.build";

/** What the build reads back (and retry re-runs). */
export interface SavedRequest {
  site_mode: SiteMode;
  access_mode: AccessMode;
  publication_root_directory: string;
  expires_at: string | null;
  /** Identifies the newest accepted request: an older build that finishes late is dropped. */
  build_token: string;
  /** True while the stored password is one Pier generated (shown as generated_password). */
  password_generated: boolean;
  /** What asked for this publish; recorded on the deploy the build writes. */
  trigger?: DeployTrigger;
  /** Previews: the lifetime asked for, so a retry gives the preview that long again (D244). */
  expires_in_minutes?: number;
}

export interface PreparedPublish {
  bucket: BucketRow;
  kind: PublicationKind;
  existing: PublicationRow | undefined;
  publicationId: string;
  slugSuggestions: string[];
  title: string | undefined;
  request: SavedRequest;
  tracking: { trackingEnabled: boolean; analyticsEnabled: boolean; clientEventsEnabled: boolean };
  cleanUrls: boolean;
  /** New password material when the access settings change. */
  access: null | { mode: AccessMode; hash: string | null; sealed: string | null; generated: string | null };
}

export function findPublication(bucketId: string, kind: PublicationKind, db: DbOrTx): PublicationRow | undefined {
  return db
    .select()
    .from(publications)
    .where(and(eq(publications.bucketId, bucketId), eq(publications.kind, kind)))
    .get();
}

/**
 * The bucket's main site when it is gated and a preview asked for no access mode would be less
 * protected: no preview yet, or a public one. The preview serves the bucket's files at an address
 * anyone can derive from the site's (`preview-<slug>`), so it keeps the site's gate unless the
 * request names another mode (the spec: never fall back silently to public access; D254).
 */
function gatedMainSite(bucketId: string, preview: PublicationRow | undefined, db: DbOrTx): PublicationRow | undefined {
  if (preview && preview.accessMode !== "public") return undefined;
  const main = findPublication(bucketId, "main", db);
  return main && main.accessMode !== "public" ? main : undefined;
}

/** "" = whole bucket; otherwise a normalized folder path without slashes at either end. */
export function normalizeRoot(raw: unknown): string {
  if (raw === undefined || raw === null || raw === "") return "";
  if (typeof raw !== "string") throw new ApiError("VALIDATION_FAILED", "publication_root_directory must be a string.", { field: "publication_root_directory" });
  const trimmed = raw.replace(/^\/+|\/+$/g, "");
  if (trimmed === "" || trimmed === ".") return "";
  const norm = normalizeSitePath(trimmed);
  if (norm === null)
    throw new ApiError("VALIDATION_FAILED", `publication_root_directory "${raw}" is not a usable folder path.`, { field: "publication_root_directory" });
  return norm;
}

/** Everything that can fail before the transaction: access, rules, plan, password hashing. */
export async function preparePublish(
  deps: Deps,
  actor: Actor,
  bucketId: string,
  input: PublishInput,
  kind: PublicationKind,
  opts: { skipRateLimit?: boolean; trigger?: DeployTrigger } = {},
  db: DbOrTx = deps.db,
): Promise<PreparedPublish> {
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_admin" }, db);
  assertVisibilityUnlocked(bucket);
  if (!opts.skipRateLimit) takePublishToken(deps, actor);
  const existing = findPublication(bucket.id, kind, db);
  if (existing?.status === "unpublishing")
    throw new ApiError("PUBLICATION_BUSY", "The site is being unpublished; publish again once it is unpublished.", { publication_id: existing.id });

  const now = deps.clock.now();
  let expiresAt: string | null;
  if (kind === "preview") {
    const minutes = input.expires_in_minutes ?? PREVIEW_DEFAULT_MINUTES;
    if (!Number.isInteger(minutes) || minutes < 1 || minutes > PREVIEW_MAX_MINUTES) {
      throw new ApiError("VALIDATION_FAILED", `expires_in_minutes must be 1 to ${PREVIEW_MAX_MINUTES}.`, {
        field: "expires_in_minutes",
        max: PREVIEW_MAX_MINUTES,
      });
    }
    expiresAt = new Date(now.getTime() + minutes * 60_000).toISOString();
  } else if (input.expires_at !== undefined) {
    expiresAt = input.expires_at === null ? null : new Date(input.expires_at).toISOString();
    if (expiresAt !== null && expiresAt <= now.toISOString())
      throw new ApiError("VALIDATION_FAILED", "expires_at must be in the future (or null for no expiry).", { field: "expires_at" });
  } else {
    expiresAt = existing?.expiresAt && existing.expiresAt > now.toISOString() ? existing.expiresAt : null;
  }

  const fromMetadata = (bucket.metadata as Record<string, unknown>)?.publication_root_directory;
  const root = normalizeRoot(input.publication_root_directory !== undefined ? input.publication_root_directory : fromMetadata);
  const gatedMain = kind === "preview" && input.access_mode === undefined ? gatedMainSite(bucket.id, existing, db) : undefined;
  const accessMode: AccessMode = input.access_mode ?? gatedMain?.accessMode ?? existing?.accessMode ?? "public";
  const previous = (existing?.publishRequest ?? {}) as Partial<SavedRequest>;
  assertPublishAllowed(deps, { accountId: bucket.accountId, bucketId: bucket.id, kind, accessMode }, db);

  const publicationId = existing?.id ?? newId("pub");
  let access: PreparedPublish["access"] = null;
  let passwordGenerated = previous.password_generated ?? false;
  if (accessMode === "password") {
    let password = input.password;
    let generated: string | null = null;
    if (gatedMain?.passwordHash && password === undefined && !input.regenerate_password) {
      // The preview opens with the main site's password: the visitors who may see the site may see its preview.
      const plain = gatedMain.passwordSealed ? deps.secrets.open("site-cookie", gatedMain.passwordSealed, `site-password:${gatedMain.id}`) : null;
      passwordGenerated = ((gatedMain.publishRequest ?? {}) as Partial<SavedRequest>).password_generated ?? false;
      access = {
        mode: accessMode,
        generated: null,
        hash: gatedMain.passwordHash,
        sealed: plain === null ? null : deps.secrets.seal("site-cookie", plain, `site-password:${publicationId}`),
      };
    } else if (password === undefined && (input.regenerate_password || !existing?.passwordHash)) password = generated = randomSecret(9);
    if (password !== undefined) {
      passwordGenerated = generated !== null;
      access = {
        mode: accessMode,
        generated,
        hash: await Bun.password.hash(password, { algorithm: "argon2id" }),
        sealed: deps.secrets.seal("site-cookie", password, `site-password:${publicationId}`),
      };
    }
  } else if (input.password !== undefined) {
    throw new ApiError("VALIDATION_FAILED", "password is only used with access_mode password.", { field: "password" });
  }
  if (!access && existing && existing.accessMode !== accessMode)
    access = { mode: accessMode, hash: existing.passwordHash, sealed: existing.passwordSealed, generated: null };

  return {
    bucket,
    kind,
    existing,
    publicationId,
    title: input.title,
    access,
    slugSuggestions: input.slug_suggestions ?? [],
    request: {
      site_mode: input.site_mode ?? existing?.siteMode ?? "static",
      access_mode: accessMode,
      publication_root_directory: root,
      expires_at: expiresAt,
      build_token: randomToken(16),
      password_generated: passwordGenerated,
      trigger: opts.trigger ?? "api",
      ...(kind === "preview" ? { expires_in_minutes: input.expires_in_minutes ?? PREVIEW_DEFAULT_MINUTES } : {}),
    },
    tracking: {
      trackingEnabled: input.tracking_enabled ?? existing?.trackingEnabled ?? true,
      analyticsEnabled: input.publication_analytics_enabled ?? input.analytics_enabled ?? existing?.analyticsEnabled ?? true,
      clientEventsEnabled: input.publication_client_events_enabled ?? input.client_events_enabled ?? existing?.clientEventsEnabled ?? true,
    },
    cleanUrls: input.clean_urls ?? existing?.cleanUrls ?? true,
  };
}

/** Write the publication row (queued) and its build job; in the caller's transaction if any. */
export function commitPublish(deps: Deps, p: PreparedPublish, db: DbOrTx = deps.db): PublicationRow {
  return transaction(db, (tx: Tx) => {
    // The plan is checked again where it is enforced: two concurrent publishes cannot both pass.
    assertPublishAllowed(deps, { accountId: p.bucket.accountId, bucketId: p.bucket.id, kind: p.kind, accessMode: p.request.access_mode }, tx);
    const now = deps.clock.now().toISOString();
    const common = {
      status: "publishing" as const,
      publishState: "queued" as const,
      publishError: null,
      publishEnqueuedAt: now,
      publishStartedAt: null,
      expiresAt: p.request.expires_at,
      siteMode: p.request.site_mode,
      publishRequest: { ...p.request },
      updatedAt: now,
      ...p.tracking,
      cleanUrls: p.cleanUrls,
      ...(p.title !== undefined ? { title: p.title } : {}),
    };
    let row: PublicationRow;
    // Looked up again by bucket and kind, not by the id seen when prepared: another first publish
    // of the same site may have created the row while this one hashed its password (D74: the
    // newest request wins, so this one becomes a republish instead of a second insert).
    const existing = findPublication(p.bucket.id, p.kind, tx);
    if (existing) {
      if (existing.status === "unpublishing") throw new ApiError("PUBLICATION_BUSY", "The site is being unpublished; publish again once it is unpublished.");
      const access = p.existing ? p.access : sameAsInsert(deps, p, existing.id);
      if (access && p.kind === "main") {
        // Sealed for this row's id (as prepared, or by sameAsInsert).
        const plain =
          access.sealed && access.hash !== existing.passwordHash ? deps.secrets.open("site-cookie", access.sealed, `site-password:${existing.id}`) : null;
        previewFollowsMain(deps, tx, existing, { mode: access.mode, hash: access.hash, plain });
      }
      const accessSet = access
        ? { accessMode: access.mode, passwordHash: access.hash, passwordSealed: access.sealed, accessVersion: existing.accessVersion + 1 }
        : {};
      row = tx
        .update(publications)
        .set({ ...common, ...accessSet })
        .where(eq(publications.id, existing.id))
        .returning()
        .get()!;
    } else {
      let slug: string;
      const claim = { bucketId: p.bucket.id, accountId: p.bucket.accountId, now };
      if (p.kind === "preview") {
        const main = findPublication(p.bucket.id, "main", tx);
        slug =
          main && !slugTaken(main.publicSlug, claim, tx) ? main.publicSlug : pickSlug(claim, main ? [main.publicSlug] : p.slugSuggestions, p.bucket.title, tx);
      } else {
        // A preview published first named the bucket's slug: the main site takes it too.
        const preview = findPublication(p.bucket.id, "preview", tx);
        slug =
          preview && !p.slugSuggestions.length && !slugTaken(preview.publicSlug, claim, tx)
            ? preview.publicSlug
            : pickSlug(claim, p.slugSuggestions, p.bucket.title, tx);
      }
      // (The sibling's slug is checked too: before slugs were one namespace, another bucket could
      // hold it under the other kind, and taking it would break the unique index.)
      row = tx
        .insert(publications)
        .values({
          id: p.publicationId,
          bucketId: p.bucket.id,
          accountId: p.bucket.accountId,
          kind: p.kind,
          publicSlug: slug,
          title: p.title ?? p.bucket.title,
          createdAt: now,
          ...common,
          accessMode: p.request.access_mode,
          passwordHash: p.access?.hash ?? null,
          passwordSealed: p.access?.sealed ?? null,
        })
        .returning()
        .get();
    }
    deps.jobs.enqueue(BUILD_JOB, { publication_id: row.id, build_token: p.request.build_token }, { maxAttempts: 1 }, tx);
    // New access settings apply to the live deploy at once; inside a publish-session finalize
    // this waits for the session's own transaction.
    const publicationId = row.id;
    if (p.access) afterCommit(tx, () => emitSiteChange(deps, { publicationId }));
    return row;
  });
}

/**
 * The access settings a request prepared as a first publish would have inserted, for the row
 * another request created meanwhile: the whole set, and the sealed password bound to that row's id
 * (it was sealed for the id this request would have used).
 */
function sameAsInsert(deps: Deps, p: PreparedPublish, rowId: string): NonNullable<PreparedPublish["access"]> {
  const plain = p.access?.sealed ? deps.secrets.open("site-cookie", p.access.sealed, `site-password:${p.publicationId}`) : null;
  return {
    mode: p.request.access_mode,
    hash: p.access?.hash ?? null,
    sealed: plain === null ? null : deps.secrets.seal("site-cookie", plain, `site-password:${rowId}`),
    generated: p.access?.generated ?? null,
  };
}

/** POST /buckets/:id/publication and /publication/preview. */
export async function requestPublish(deps: Deps, actor: Actor, bucketId: string, input: PublishInput, kind: PublicationKind, trigger: DeployTrigger = "api") {
  const prepared = await preparePublish(deps, actor, bucketId, input, kind, { trigger });
  const row = commitPublish(deps, prepared);
  return { publication: row, generatedPassword: prepared.access?.generated ?? null };
}
