// The analytics feature: visits counted by the site server in memory, rolled up hourly and
// daily, read through /api/v1/analytics, /api/v1/publications/:id/analytics and MCP.
// What other features and src/sites may use of it: they import "../analytics", never a file inside.
export { AnalyticsRecorder } from "./recorder";
export { classify, isDownloadPath, isVisit } from "./classify";
export { accountAnalytics, publicationAnalytics, publicationSummary } from "./service";
export { pruneAnalytics } from "./rollups";
export { checkGeoDb } from "./geo";
export { RANGES } from "./window";
export { ClientEvents, EVENTS_PER_MINUTE } from "./events";
