// Background work of publishing: builds, unpublishes and the periodic housekeeping.
import type { JobHandler, PeriodicTask } from "../../jobs/runner";
import { runBuild, runUnpublish } from "./build";
import { prunePublishSessions } from "../publish-sessions/service";
import { endExpiredSites, enforceSiteRenewal, sweepStuckPublications } from "./lifecycle";

export const publishJobs: Record<string, JobHandler> = {
  // One attempt: a failed build is reported (failed + notification) and retried by the owner.
  // The runner's heartbeat renews the lease of a long build; no longer lease needed.
  "publish.build": { run: runBuild, maxAttempts: 1 },
  "publish.unpublish": { run: runUnpublish, maxAttempts: 3 },
  "publish.sweep": { run: async (deps) => ({ ...sweepStuckPublications(deps), ...prunePublishSessions(deps) }), maxAttempts: 1 },
  "publish.expire_previews": { run: async (deps) => endExpiredSites(deps), maxAttempts: 1 },
  "publish.site_renewal": { run: async (deps) => enforceSiteRenewal(deps), maxAttempts: 1 },
};

export const publishPeriodic: PeriodicTask[] = [
  { kind: "publish.sweep", everyMs: 5 * 60_000 },
  { kind: "publish.expire_previews", everyMs: 60_000 },
  { kind: "publish.site_renewal", everyMs: 3600_000 },
];
