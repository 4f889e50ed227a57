// The publish feature: publications, publish sessions, builds, deploys and site rules.
// What other features may use of it: they import "../publish", never a file inside this folder.
// The services: service.ts reads and changes publications (settings, access, recipient links,
// slugs), accept-publish.ts accepts a publish and queues its build, build.ts runs it,
// lifecycle.ts unpublishes and retries, sessions/service.ts runs publish sessions.
import { registerBucketDeletion } from "../buckets";
import { holdBucketSlugs } from "./slugs";

// A deleted bucket's slugs stay its account's for a while, as a rename's old slug does (D316).
registerBucketDeletion(holdBucketSlugs);

export { needsRetry, retryPublication, unpublishBucket } from "./lifecycle";
export { loadPublication } from "./service";
export { PatchPublicationBody, publishFields } from "./model";
export type { PublishInput } from "./model";
export { manifestPageOf, presentPublication, presentPublishAnswer } from "./present";
export type { PublicationRow } from "./publications";
export { BUILD_JOB, findPublication, requestPublish } from "./accept-publish";
// Used by the task table, the site server (src/sites) and the CLI outside src/features.
export { runBuild, runUnpublish } from "./build";
export { endExpiredSites, enforceSiteRenewal, sweepStuckPublications, UNPUBLISH_JOB } from "./lifecycle";
export { prunePublishSessions } from "./sessions/service";
export { DEPLOY_FILES_STEP, deployFilesInSteps, deployHasFiles, deployManifestPage } from "./deploys";
export type { DeployFile } from "./deploys";
export { onSiteChange } from "./events";
export { isExcludedFromPublish } from "./exclusions";
export { verifyRecipientToken } from "./service";
export { getAutoIndexTemplate } from "./autoindex-templates";
export { pruneSlugHolds, sanitizeSlug, SLUG_HOLD_DAYS, SLUG_HOLDS_PER_ACCOUNT } from "./slugs";
export { MIN_SLUG_LENGTH } from "./publications";
// The domains feature tells the site server when a custom domain starts or stops serving.
export { emitSiteChange } from "./events";
// The dashboard's Site tab calls the same services as the REST routes.
export { endPreview, getAccess, leadsCsv, patchAccess, patchPublication, recipientLinks, renameSlug } from "./service";
export { PREVIEW_DEFAULT_MINUTES, PREVIEW_MAX_MINUTES } from "./accept-publish";

// Used by analytics (site lists and URLs for its figures).
export { listPublications } from "./service";
export { publicUrlOf } from "./present";

// Site rules (`_redirects`, `_headers`): compiled per deploy by the build, matched by the site server.
export { deploySiteRules } from "./deploys";
export { SiteRules } from "./rules/match";
export { PROTECTED_HEADERS } from "./rules/syntax";

// Deploy history and rollback (REST, MCP, CLI and the dashboard's Site tab).
export { getPublicationDeploy, listPublicationDeploys, newestDeploy, presentDeploy, rollbackPublication } from "./history";
export { markFailed } from "./build";
