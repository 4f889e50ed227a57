// The publish feature: publications, publish sessions, builds, deploys and site rules.
// What other features may use of it: they import "../publish", never a file inside this folder.
export { hasLiveJob } from "./build";
export { retryPublication, unpublishBucket } from "./lifecycle";
export { loadPublication } from "./manage";
export { publishFields } from "./model";
export type { PublishInput } from "./model";
export { presentPublication, presentPublishAnswer } from "./present";
export type { PublicationRow } from "./publications";
export { BUILD_JOB, findPublication, requestPublish } from "./request";
