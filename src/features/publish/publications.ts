// Publication rows and their access settings. The REST routes, the build job and previews call
// these; they decide nothing about HTTP.
import { and, eq, sql } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { newId } from "../../core/ids";
import { randomSecret } from "../../core/crypto";
import { publications, type AccessMode, type PublicationKind, type SiteMode } from "../../db/schema";
import { afterCommit, transaction, type DbOrTx } from "../../db/tx";
import { emitSiteChange } from "./events";

export type PublicationRow = typeof publications.$inferSelect;

export const MIN_SLUG_LENGTH = 9;
const RESERVED_SLUGS = new Set(["administrator", "dashboard", "localhost", "postmaster", "webmaster", "hostmaster", "wellknown", "autodiscover", "autoconfig"]);

/** A usable public slug: DNS label, at least 9 characters, not reserved, not starting with preview-. */
export function validateSlug(slug: string): void {
  if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(slug))
    throw new ApiError("VALIDATION_FAILED", `Slug "${slug}" must be lowercase letters, digits and inner hyphens.`, { slug });
  if (slug.length < MIN_SLUG_LENGTH)
    throw new ApiError("VALIDATION_FAILED", `Slug "${slug}" is shorter than ${MIN_SLUG_LENGTH} characters.`, { slug, min_length: MIN_SLUG_LENGTH });
  if (RESERVED_SLUGS.has(slug) || slug.startsWith("preview-") || slug.startsWith("xn--"))
    throw new ApiError("VALIDATION_FAILED", `Slug "${slug}" is reserved.`, { slug });
}

export interface NewPublication {
  bucketId: string;
  accountId: string;
  kind: PublicationKind;
  slug: string;
  title?: string;
  siteMode?: SiteMode;
  expiresAt?: string | null;
  publishRequest?: Record<string, unknown>;
}

/** A new publication in `queued`; the build writes a deploy and activates it. */
export function createPublication(deps: Deps, input: NewPublication, db: DbOrTx = deps.db): PublicationRow {
  validateSlug(input.slug);
  return transaction(db, (tx) => {
    const taken = tx
      .select({ id: publications.id })
      .from(publications)
      .where(and(eq(publications.kind, input.kind), eq(publications.publicSlug, input.slug)))
      .get();
    if (taken) throw new ApiError("SLUG_TAKEN", `Slug "${input.slug}" is taken.`, { slug: input.slug });
    const now = deps.clock.now().toISOString();
    return tx
      .insert(publications)
      .values({
        id: newId("pub"),
        bucketId: input.bucketId,
        accountId: input.accountId,
        kind: input.kind,
        publicSlug: input.slug,
        title: input.title ?? "",
        status: "publishing",
        publishState: "queued",
        publishEnqueuedAt: now,
        expiresAt: input.expiresAt ?? null,
        siteMode: input.siteMode ?? "static",
        publishRequest: input.publishRequest ?? {},
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get();
  });
}

export function getPublication(deps: Deps, id: string, db: DbOrTx = deps.db): PublicationRow {
  const row = db.select().from(publications).where(eq(publications.id, id)).get();
  if (!row) throw new ApiError("PUBLICATION_NOT_FOUND", `Publication ${id} was not found.`);
  return row;
}

export interface AccessChange {
  mode: AccessMode;
  /** password mode: the new password; omitted keeps the current one or generates one the first time. */
  password?: string;
  regeneratePassword?: boolean;
}

/**
 * Change who may see the site. The password is stored twice: argon2id for the gate, and sealed
 * so the owner can copy it later. Every change bumps access_version, which signs out visitors.
 * Returns the generated password when one was generated (shown to the owner once).
 */
export async function setPublicationAccess(deps: Deps, publicationId: string, change: AccessChange): Promise<{ generatedPassword: string | null }> {
  const pub = getPublication(deps, publicationId);
  let generated: string | null = null;
  let hash = pub.passwordHash;
  let sealed = pub.passwordSealed;
  let plain: string | null = null;
  if (change.mode === "password") {
    let password = change.password;
    if (password !== undefined && (password.length < 6 || password.length > 200)) {
      throw new ApiError("VALIDATION_FAILED", "The site password must be 6 to 200 characters.", { field: "password" });
    }
    if (password === undefined && (change.regeneratePassword || !pub.passwordHash)) password = generated = randomSecret(9);
    if (password !== undefined) {
      plain = password;
      hash = await Bun.password.hash(password, { algorithm: "argon2id" });
      sealed = deps.secrets.seal("site-cookie", password, `site-password:${pub.id}`);
    }
  }
  const now = deps.clock.now().toISOString();
  transaction(deps.db, (tx) => {
    const before = getPublication(deps, pub.id, tx);
    tx.update(publications)
      // Bumped in SQL: another change may have committed while this one awaited its hash.
      .set({ accessMode: change.mode, passwordHash: hash, passwordSealed: sealed, accessVersion: sql`${publications.accessVersion} + 1`, updatedAt: now })
      .where(eq(publications.id, pub.id))
      .run();
    previewFollowsMain(deps, tx, before, { mode: change.mode, hash, plain });
    afterCommit(tx, () => emitSiteChange(deps, { publicationId: pub.id }));
  });
  return { generatedPassword: generated };
}

/**
 * A preview that took its main site's password (D254: the hash was copied; argon2id salts every
 * hash, so two equal ones are always a copy) keeps following it (D304). Otherwise a password
 * rotated because it leaked, or a site switched to email codes, still opened preview-<slug>, an
 * address anyone can derive, with the bucket's newest files for up to 30 days. The preview takes
 * the new password (sealed again for its own id) or the new gated mode, and its access version
 * is bumped (its visitors are signed out). A site made public leaves its preview gated, as D254
 * leaves a gated preview of a public site; a preview with a password of its own is left alone.
 * `main` is the row before the change; `plain` the new password when it changed.
 */
export function previewFollowsMain(deps: Deps, tx: DbOrTx, main: PublicationRow, next: { mode: AccessMode; hash: string | null; plain: string | null }): void {
  if (main.kind !== "main" || main.accessMode !== "password" || main.passwordHash === null || next.mode === "public") return;
  const newPassword = next.mode === "password" && next.hash !== main.passwordHash;
  if (next.mode === "password" && !newPassword) return;
  const preview = tx
    .select()
    .from(publications)
    .where(and(eq(publications.bucketId, main.bucketId), eq(publications.kind, "preview")))
    .get();
  if (!preview || preview.accessMode !== "password" || preview.passwordHash !== main.passwordHash) return;
  tx.update(publications)
    .set({
      accessMode: next.mode,
      ...(newPassword
        ? {
            passwordHash: next.hash,
            passwordSealed: next.plain === null ? null : deps.secrets.seal("site-cookie", next.plain, `site-password:${preview.id}`),
          }
        : {}),
      accessVersion: sql`${publications.accessVersion} + 1`,
      updatedAt: deps.clock.now().toISOString(),
    })
    .where(eq(publications.id, preview.id))
    .run();
  afterCommit(tx, () => emitSiteChange(deps, { publicationId: preview.id }));
}

/** The owner-copyable password (only for account-owner credentials; the caller checks). */
export function revealSitePassword(deps: Deps, pub: PublicationRow): string | null {
  return pub.passwordSealed ? deps.secrets.open("site-cookie", pub.passwordSealed, `site-password:${pub.id}`) : null;
}

/** Take the site offline at once (the unpublish job calls this before cleaning up). */
export function markUnpublished(deps: Deps, publicationId: string): void {
  const now = deps.clock.now().toISOString();
  transaction(deps.db, (tx) => {
    tx.update(publications)
      .set({ status: "unpublished", publishState: "ready", currentDeployId: null, publishedFilesCount: 0, updatedAt: now })
      .where(eq(publications.id, publicationId))
      .run();
    afterCommit(tx, () => emitSiteChange(deps, { publicationId }));
  });
}
