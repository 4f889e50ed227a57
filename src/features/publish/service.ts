// Reading and changing publications: list, read, manifest, settings, access, recipient links
// and slug renames. Every publication is reached through its bucket, so per-bucket grants and
// account boundaries apply exactly as for bucket routes.
import { and, count, desc, eq, inArray, sql } from "drizzle-orm";
import type { Actor, Deps, Scope } from "../../core/context";
import { ApiError } from "../../core/errors";
import { pageWindow, pagination, type Pagination } from "../../core/paging";
import { publications, type AccessMode } from "../../db/schema";
import { afterCommit, transaction } from "../../db/tx";
import { assertVisibilityUnlocked, effectiveScope, loadBucket, loadMutableBucket } from "../buckets";
import { accessDetails, leadsCsvStream, type LeadsPage } from "./visitor-access";
import { emitSiteChange } from "./events";
import { PUBLICATION_PAGE, type PatchPublicationInput } from "./model";
import { assertPublishAllowed } from "./policy";
import { setPublicationAccess, validateSlug, type PublicationRow } from "./publications";
import { publicUrlOf } from "./present";
import { findPublication, PREVIEW_MAX_MINUTES } from "./accept-publish";
import { holdSlug, slugTaken } from "./slugs";
import { newestFirstPage, preparedPerDb } from "../../db/prepared";

function visiblePublication(deps: Deps, actor: Actor, id: string): PublicationRow {
  const pub = deps.db
    .select()
    .from(publications)
    .where(and(eq(publications.id, id), eq(publications.accountId, actor.accountId)))
    .get();
  // Another account's publication, or one whose bucket the key cannot see: not found, no leak.
  if (!pub || effectiveScope(actor, pub.bucketId) === null) throw new ApiError("PUBLICATION_NOT_FOUND", `Publication ${id} was not found.`);
  return pub;
}

/** A publication the actor may use at `need` (its bucket decides); others are not found. */
export function loadPublication(deps: Deps, actor: Actor, id: string, need: Scope) {
  const pub = visiblePublication(deps, actor, id);
  return { pub, bucket: loadBucket(deps, actor, pub.bucketId, need) };
}

/** A publication whose settings the actor is about to change: its bucket must be mutable. */
function loadMutablePublication(deps: Deps, actor: Actor, id: string) {
  const pub = visiblePublication(deps, actor, id);
  return { pub, bucket: loadMutableBucket(deps, actor, pub.bucketId, { need: "bucket_admin" }) };
}

// The page without a key's selection, prepared once per database (D230).
const preparedPublicationPage = preparedPerDb((db) => newestFirstPage(db, publications, eq(publications.accountId, sql.placeholder("accountId"))));

/** One page of the account's publications the actor can see, newest first. */
export function listPublications(
  deps: Deps,
  actor: Actor,
  page: { limit?: number; offset?: number } = {},
): { publications: PublicationRow[]; pagination: Pagination } {
  const { limit, offset } = pageWindow(page, PUBLICATION_PAGE);
  const selected = actor.bucketAccess === "selected" ? Object.keys(actor.bucketPermissions) : null;
  if (!selected) {
    const q = preparedPublicationPage(deps.db);
    const rows = q.rows.all({ accountId: actor.accountId, limit, offset });
    return { publications: rows, pagination: pagination(limit, offset, rows.length, q.total.get({ accountId: actor.accountId })!.n) };
  }
  const where = and(eq(publications.accountId, actor.accountId), inArray(publications.bucketId, selected));
  const total = deps.db.select({ n: count() }).from(publications).where(where).get()!.n;
  const rows = deps.db.select().from(publications).where(where).orderBy(desc(publications.createdAt), desc(publications.id)).limit(limit).offset(offset).all();
  return { publications: rows, pagination: pagination(limit, offset, rows.length, total) };
}

export function patchPublication(deps: Deps, actor: Actor, id: string, input: PatchPublicationInput): PublicationRow {
  const { pub, bucket } = loadMutablePublication(deps, actor, id);
  if (input.expires_at !== undefined && input.expires_at !== null && new Date(input.expires_at).toISOString() <= deps.clock.now().toISOString()) {
    throw new ApiError("VALIDATION_FAILED", "expires_at must be in the future (or null).", { field: "expires_at" });
  }
  // An expiry takes the site down (410; `pier unpublish --preview` ends a preview this way) and
  // moving a past one brings it back: a visibility change like an unpublish or a publish (D281).
  const expiresAt = input.expires_at === undefined ? undefined : input.expires_at === null ? null : new Date(input.expires_at).toISOString();
  if (expiresAt !== undefined && expiresAt !== pub.expiresAt) assertVisibilityUnlocked(bucket);
  if (pub.kind === "preview" && input.expires_at === null)
    throw new ApiError("VALIDATION_FAILED", "Previews always expire; expires_at cannot be null.", { field: "expires_at" });
  const now = deps.clock.now().toISOString();
  if (pub.kind === "preview" && input.expires_at) {
    // The same cap as publishing a preview: otherwise a preview becomes a permanent site outside the plan's counts.
    const latest = deps.clock.now().getTime() + PREVIEW_MAX_MINUTES * 60_000;
    if (new Date(input.expires_at).getTime() > latest) {
      throw new ApiError("VALIDATION_FAILED", `A preview expires at most ${PREVIEW_MAX_MINUTES / 1440} days from now.`, {
        field: "expires_at",
        max: new Date(latest).toISOString(),
      });
    }
  }
  // An expired main site no longer counts against the plan: bringing it back is publishing it again.
  const revives =
    pub.kind === "main" &&
    input.expires_at !== undefined &&
    pub.expiresAt !== null &&
    pub.expiresAt <= now &&
    (pub.status === "publishing" || pub.status === "published");
  const row = transaction(deps.db, (tx) => {
    if (revives) assertPublishAllowed(deps, pub, tx);
    // Routing, titles and expiry apply to the live deploy at once: no rebuild needed.
    afterCommit(tx, () => emitSiteChange(deps, { publicationId: pub.id }));
    return tx
      .update(publications)
      .set({
        ...(input.title !== undefined ? { title: input.title } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.site_mode !== undefined ? { siteMode: input.site_mode } : {}),
        ...(input.tracking_enabled !== undefined ? { trackingEnabled: input.tracking_enabled } : {}),
        ...((input.publication_analytics_enabled ?? input.analytics_enabled) !== undefined
          ? { analyticsEnabled: (input.publication_analytics_enabled ?? input.analytics_enabled)! }
          : {}),
        ...((input.publication_client_events_enabled ?? input.client_events_enabled) !== undefined
          ? { clientEventsEnabled: (input.publication_client_events_enabled ?? input.client_events_enabled)! }
          : {}),
        ...(input.clean_urls !== undefined ? { cleanUrls: input.clean_urls } : {}),
        ...(expiresAt !== undefined ? { expiresAt } : {}),
        publishRequest: { ...(pub.publishRequest as object), ...(input.site_mode ? { site_mode: input.site_mode } : {}) },
        updatedAt: now,
      })
      .where(eq(publications.id, pub.id))
      .returning()
      .get()!;
  });
  return row;
}

/**
 * End a bucket's live preview now, leaving the main site up: it answers 410 Gone from this
 * moment, as an expired preview does, and the expiry job takes it down (the API's way is a PATCH
 * of its `expires_at`, which must lie in the future). False when there was no live preview.
 */
export function endPreview(deps: Deps, actor: Actor, bucketId: string): boolean {
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_admin" });
  return transaction(deps.db, (tx) => {
    const preview = findPublication(bucket.id, "preview", tx);
    const now = deps.clock.now().toISOString();
    const live = preview && (preview.status === "published" || preview.status === "publishing") && !(preview.expiresAt !== null && preview.expiresAt <= now);
    if (!live) return false;
    assertVisibilityUnlocked(bucket); // taking a site off its address, as an expiry set through the API is (D281)
    tx.update(publications).set({ expiresAt: now, updatedAt: now }).where(eq(publications.id, preview.id)).run();
    afterCommit(tx, () => emitSiteChange(deps, { publicationId: preview.id }));
    return true;
  });
}

export function getAccess(deps: Deps, actor: Actor, id: string, leads: LeadsPage = {}) {
  const { pub } = loadPublication(deps, actor, id, "bucket_admin");
  const ready = pub.publishState === "ready" && pub.status === "published";
  return { publication_id: pub.id, ...accessDetails(deps, pub.id, { revealPassword: actor.isAccountOwner && ready, leads }) };
}

/** The site's leads as a CSV download, for the bucket's administrators (as getAccess). */
export function leadsCsv(deps: Deps, actor: Actor, id: string): { slug: string; body: ReadableStream<Uint8Array> } {
  const { pub } = loadPublication(deps, actor, id, "bucket_admin");
  return { slug: pub.publicSlug, body: leadsCsvStream(deps, pub.id) };
}

export async function patchAccess(deps: Deps, actor: Actor, id: string, input: { access_mode: AccessMode; password?: string; regenerate_password?: boolean }) {
  const { pub, bucket } = loadMutablePublication(deps, actor, id);
  assertVisibilityUnlocked(bucket);
  if (input.access_mode !== "password" && input.password !== undefined)
    throw new ApiError("VALIDATION_FAILED", "password is only used with access_mode password.", { field: "password" });
  assertPublishAllowed(deps, { accountId: pub.accountId, bucketId: pub.bucketId, kind: pub.kind, accessMode: input.access_mode }, deps.db);
  const { generatedPassword } = await setPublicationAccess(deps, pub.id, {
    mode: input.access_mode,
    password: input.password,
    regeneratePassword: input.regenerate_password,
  });
  if (input.access_mode === "password" && (input.password !== undefined || generatedPassword !== null)) {
    const fresh = findPublication(pub.bucketId, pub.kind, deps.db)!;
    transaction(deps.db, (tx) =>
      tx
        .update(publications)
        .set({ publishRequest: { ...(fresh.publishRequest as object), access_mode: input.access_mode, password_generated: generatedPassword !== null } })
        .where(eq(publications.id, pub.id))
        .run(),
    );
  }
  return getAccess(deps, actor, id);
}

export const RECIPIENT_LINK_DAYS = 30;

/** Sign a link that lets `email` through a require_email gate without a code (see docs/publishing.md). */
export function recipientToken(deps: Deps, pub: PublicationRow, email: string, expiresAtSec: number): string {
  const body = Buffer.from(JSON.stringify({ p: pub.id, e: email, v: pub.accessVersion, x: expiresAtSec })).toString("base64url");
  return `${body}.${deps.secrets.sign("site-cookie", `recipient.${body}`)}`;
}

/** The email a recipient token vouches for, or null (bad signature, expired, access changed). */
export function verifyRecipientToken(deps: Deps, pub: Pick<PublicationRow, "id" | "accessVersion">, token: string): string | null {
  const dot = token.indexOf(".");
  if (dot <= 0) return null;
  const body = token.slice(0, dot);
  if (!deps.secrets.verify("site-cookie", `recipient.${body}`, token.slice(dot + 1))) return null;
  try {
    const c = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as { p: string; e: string; v: number; x: number };
    if (c.p !== pub.id || c.v !== pub.accessVersion || c.x * 1000 <= deps.clock.now().getTime()) return null;
    return c.e;
  } catch {
    return null;
  }
}

export function recipientLinks(deps: Deps, actor: Actor, id: string, input: { emails: string[]; expires_in_days?: number }) {
  const { pub } = loadPublication(deps, actor, id, "bucket_admin");
  if (pub.accessMode !== "require_email")
    throw new ApiError("VALIDATION_FAILED", "Recipient links exist only for require_email publications.", { access_mode: pub.accessMode });
  const days = input.expires_in_days ?? RECIPIENT_LINK_DAYS;
  const exp = Math.floor(deps.clock.now().getTime() / 1000) + days * 86400;
  const base = publicUrlOf(deps, pub);
  const emails = [...new Set(input.emails.map((e) => e.trim().toLowerCase()))];
  return {
    publication_id: pub.id,
    expires_at: new Date(exp * 1000).toISOString(),
    recipient_links: emails.map((email) => ({ email, url: `${base}_pier/gate/recipient?token=${recipientToken(deps, pub, email, exp)}` })),
  };
}

/** PATCH /buckets/:id/custom_domains/public_slug: the main site moves to the new slug at once. */
/** The main site's new address; `renamed` is false when it already had that one (nothing changed). */
export function renameSlug(deps: Deps, actor: Actor, bucketId: string, slug: string): { publication: PublicationRow; renamed: boolean } {
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_admin" });
  assertVisibilityUnlocked(bucket);
  const next = slug.trim().toLowerCase();
  validateSlug(next);
  return transaction(deps.db, (tx) => {
    // Read in the transaction: the old slug held below is the one this rename replaces.
    const pub = findPublication(bucket.id, "main", tx);
    if (!pub) throw new ApiError("PUBLICATION_NOT_FOUND", `Bucket ${bucket.id} has no publication; publish it first.`);
    if (next === pub.publicSlug) return { publication: pub, renamed: false };
    const at = deps.clock.now();
    const now = at.toISOString();
    if (slugTaken(next, { bucketId: bucket.id, accountId: bucket.accountId, now }, tx))
      throw new ApiError("SLUG_TAKEN", `Slug "${next}" is taken.`, { public_slug: next });
    // The old address stays this account's for a while: a link to it must not open someone else's site.
    holdSlug(tx, bucket.id, pub.publicSlug, bucket.accountId, at);
    // The preview moves along: left on the old slug, preview-<old> would stay this bucket's
    // while another account could take <old> itself.
    const preview = findPublication(bucket.id, "preview", tx);
    if (preview && preview.publicSlug === pub.publicSlug) {
      tx.update(publications).set({ publicSlug: next, updatedAt: now }).where(eq(publications.id, preview.id)).run();
      afterCommit(tx, () => emitSiteChange(deps, { publicationId: preview.id }));
    }
    afterCommit(tx, () => emitSiteChange(deps, { publicationId: pub.id }));
    const publication = tx.update(publications).set({ publicSlug: next, updatedAt: now }).where(eq(publications.id, pub.id)).returning().get()!;
    return { publication, renamed: true };
  });
}
