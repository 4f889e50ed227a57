// The publish feature: publications, publish sessions, builds, deploys and site rules.
// What other features may use of it: they import "../publish", never a file inside this folder.
// The services: service.ts reads and changes publications (settings, access, recipient links,
// slugs), accept-publish.ts accepts a publish and queues its build, build.ts runs it,
// lifecycle.ts unpublishes and retries, sessions/service.ts runs publish sessions.
export { hasLiveJob } from "./build";
export { retryPublication, unpublishBucket } from "./lifecycle";
export { loadPublication } from "./service";
export { publishFields } from "./model";
export type { PublishInput } from "./model";
export { presentPublication, presentPublishAnswer } from "./present";
export type { PublicationRow } from "./publications";
export { BUILD_JOB, findPublication, requestPublish } from "./accept-publish";
