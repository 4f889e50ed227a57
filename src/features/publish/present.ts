// The Publication resource as the spec shows it. Passwords and share text only reach
// account-owner credentials, and only once the build is ready (never in the publish response).
import type { Actor, Deps } from "../../core/context";
import { mailerFor } from "../mail";
import { deployFilesInSteps, deployManifestPage, deployManifestSlice, deploySiteRulesSummary, type DeployFile } from "./deploys";
import { liveDeployFields, newestDeployIds } from "./history";
import { revealSitePassword, type PublicationRow } from "./publications";
import type { SavedRequest } from "./accept-publish";

export function siteHost(deps: Deps, pub: Pick<PublicationRow, "kind" | "publicSlug">): string {
  return `${pub.kind === "preview" ? "preview-" : ""}${pub.publicSlug}.${deps.urls.sitesDomain}`;
}
/** The main site's address switches to its custom domain once one is active; the managed URL keeps working. */
export const publicUrlOf = (deps: Deps, pub: Pick<PublicationRow, "kind" | "publicSlug"> & { bucketId?: string }) => {
  const custom = pub.kind === "main" && pub.bucketId ? deps.customDomainOf(pub.bucketId) : null;
  return deps.urls.siteUrl(custom ?? siteHost(deps, pub));
};

/** How much of a manifest is shown inside publications (D284); the whole list is at /manifest. Tests shorten them. */
export const manifestLimits = {
  /** Files shown inside one publication (its read, or a list entry). */
  inline: 1_000,
  /** Files shown inside all the publications of one list page together. */
  listBudget: 10_000,
};

const manifestEntry = (f: DeployFile) => ({ path: f.path, size: f.size, content_type: f.contentType, sha256: f.blobSha256, etag: f.etag });
const servesFiles = (pub: PublicationRow): pub is PublicationRow & { currentDeployId: string } => pub.currentDeployId !== null && pub.status !== "unpublished";

/** The first `limit` published files in path order, and whether there are more. */
function inlineManifest(deps: Deps, pub: PublicationRow, limit: number) {
  if (!servesFiles(pub)) return { manifest: [], manifest_truncated: false };
  const rows = deployManifestPage(deps, pub.currentDeployId, null, limit + 1);
  return { manifest: rows.slice(0, limit).map(manifestEntry), manifest_truncated: rows.length > limit };
}

/**
 * GET /publications/:id/manifest: every published file in path order, as JSON text in pieces
 * read a step at a time (a 200,000-file deploy is tens of megabytes of JSON: never built whole,
 * and the event loop turns between steps).
 */
export async function* fullManifestJson(deps: Deps, pub: PublicationRow): AsyncGenerator<string> {
  yield `{"data":{"publication_id":${JSON.stringify(pub.id)},"manifest":[`;
  if (servesFiles(pub)) {
    let first = true;
    for await (const rows of deployFilesInSteps(deps, pub.currentDeployId, null)) {
      yield (first ? "" : ",") + rows.map((f) => JSON.stringify(manifestEntry(f))).join(",");
      first = false;
    }
  }
  yield "]}}";
}

/** A page of the live deploy's files (the manifest's entries), for pages that show the manifest paged. */
export function manifestPageOf(deps: Deps, pub: PublicationRow, offset: number, limit: number) {
  // Past the end (any ?offset= a URL carries, however large) there is nothing to read.
  if (!servesFiles(pub) || offset >= pub.publishedFilesCount) return [];
  return deployManifestSlice(deps, pub.currentDeployId, offset, limit).map(manifestEntry);
}

/** `_redirects`/`_headers` of the live deploy: counts and warnings with line numbers (null: neither file). */
function siteRulesOf(deps: Deps, pub: PublicationRow) {
  if (!pub.currentDeployId || pub.status === "unpublished") return null;
  return deploySiteRulesSummary(deps, pub.currentDeployId);
}

export interface PublicationWarning {
  code: "EMAIL_CODES_IN_OUTBOX";
  message: string;
  operator_hint: string;
}

/**
 * What the owner should know about how the site will behave. With no SMTP relay (the default),
 * a require_email gate cannot mail its codes: they wait in the outbox for the operator.
 */
export function publicationWarnings(deps: Deps, pub: Pick<PublicationRow, "accessMode">): PublicationWarning[] {
  if (pub.accessMode !== "require_email" || mailerFor(deps).via === "relay") return [];
  return [
    {
      code: "EMAIL_CODES_IN_OUTBOX",
      message:
        "No outbound mail relay is configured, so visitors' one-time codes are not emailed: they wait in the instance's outbox and the gate tells visitors to ask you for their code. " +
        "The operator reads them with `pier admin mail outbox` on the server, or sets --smtp-relay-url so codes are mailed. " +
        "Or send each visitor a personal link (Recipients on the Site tab, or POST /api/v1/publications/:id/recipient_links): it lets them in without a code.",
      operator_hint: "pier admin mail outbox",
    },
  ];
}

export interface PresentOptions {
  includeManifest?: boolean;
  /** Files of the manifest shown inline (default manifestLimits.inline; a list page shares manifestLimits.listBudget). */
  manifestLimit?: number;
  /** The immediate answer to a publish/access change: secrets are never in it. */
  immediate?: boolean;
  /** A list page's newest deploy per publication (newestDeployIds), read once for all its rows. */
  newestDeployIds?: Map<string, string>;
}

export function presentPublication(deps: Deps, actor: Actor, pub: PublicationRow, opts: PresentOptions = {}) {
  const url = publicUrlOf(deps, pub);
  const req = pub.publishRequest as Partial<SavedRequest>;
  const ready = pub.publishState === "ready" && pub.status === "published";
  const reveal = actor.isAccountOwner && ready && !opts.immediate;
  const password = reveal && pub.accessMode === "password" ? revealSitePassword(deps, pub) : null;
  const shareText = !reveal
    ? undefined
    : pub.accessMode === "password"
      ? `${pub.title || pub.publicSlug}: ${url}\nPassword: ${password}`
      : pub.accessMode === "require_email"
        ? `${pub.title || pub.publicSlug}: ${url}\nOpen the link and confirm your email address with the code you receive.`
        : `${pub.title || pub.publicSlug}: ${url}`;
  return {
    id: pub.id,
    bucket_id: pub.bucketId,
    kind: pub.kind,
    preview: pub.kind === "preview",
    title: pub.title,
    description: pub.description,
    public_url: url,
    asset_base_url: url,
    public_slug: pub.publicSlug,
    status: pub.status,
    publish_state: pub.publishState,
    publish_pending: pub.publishState === "queued" || pub.publishState === "processing",
    ...(pub.publishState === "failed" ? { publish_error: pub.publishError } : {}),
    publish_enqueued_at: pub.publishEnqueuedAt,
    publish_started_at: pub.publishStartedAt,
    publish_completed_at: pub.publishCompletedAt,
    expires_at: pub.expiresAt,
    expired: pub.expiresAt !== null && pub.expiresAt <= deps.clock.now().toISOString(),
    site_mode: pub.siteMode,
    clean_urls: pub.cleanUrls,
    site_rules: siteRulesOf(deps, pub),
    site_type: "website" as const,
    access_mode: pub.accessMode,
    warnings: publicationWarnings(deps, pub),
    password_configured: pub.passwordHash !== null,
    ...(password !== null ? { access_password: password } : {}),
    ...(password !== null && req.password_generated ? { generated_password: password } : {}),
    ...(shareText !== undefined ? { share_text: shareText } : {}),
    publication_root_directory: req.publication_root_directory ?? "",
    tracking_enabled: pub.trackingEnabled,
    publication_analytics_enabled: pub.analyticsEnabled,
    publication_client_events_enabled: pub.clientEventsEnabled,
    analytics: deps.analytics.summary(pub),
    published_files_count: pub.status === "unpublished" ? 0 : pub.publishedFilesCount,
    ...liveDeployFields(deps, pub, opts.newestDeployIds),
    created_at: pub.createdAt,
    updated_at: pub.updatedAt,
    ...(opts.includeManifest ? inlineManifest(deps, pub, opts.manifestLimit ?? manifestLimits.inline) : {}),
  };
}

/** A page of publications: their newest deploys are read in one query for all rows. */
export function presentPublications(deps: Deps, actor: Actor, pubs: PublicationRow[], opts: Omit<PresentOptions, "newestDeployIds"> = {}) {
  const newest = newestDeployIds(
    deps,
    pubs.map((p) => p.id),
  );
  let budget = manifestLimits.listBudget;
  return pubs.map((p) => {
    const manifestLimit = Math.min(manifestLimits.inline, budget);
    const shown = presentPublication(deps, actor, p, { ...opts, manifestLimit, newestDeployIds: newest });
    budget -= shown.manifest?.length ?? 0;
    return shown;
  });
}

/**
 * The immediate answer to publish, preview, retry and unpublish (REST and MCP): the publication
 * without secrets (they appear on reads once the build is ready), plus what the caller adds.
 */
export function presentPublishAnswer<Extra extends Record<string, unknown>>(deps: Deps, actor: Actor, pub: PublicationRow, extra?: Extra) {
  return { publication: presentPublication(deps, actor, pub, { immediate: true }), ...(extra ?? ({} as Extra)) };
}
