// The table of background work: every job kind with its handler, and the periodic tasks
// (GoatCounter cron/cron.go). Features export handlers; this file is the one place that lists them.
import { collectGarbage } from "../blobs/gc";
import { accountJobs } from "../features/accounts/jobs";
import { bucketJobs } from "../features/buckets/jobs";
import { uploadJobs } from "../features/uploads/jobs";
import { oauthJobs } from "../features/oauth/jobs";
import { publishJobs, publishPeriodic } from "../features/publish/jobs";
import type { JobHandler, PeriodicTask } from "./runner";

export const jobHandlers: Record<string, JobHandler> = {
  "blobs.gc": { run: async (deps) => collectGarbage(deps), maxAttempts: 1 },
  ...bucketJobs,
  ...accountJobs,
  ...uploadJobs,
  ...oauthJobs,
  ...publishJobs,
};

export const periodicTasks: PeriodicTask[] = [
  { kind: "blobs.gc", everyMs: 6 * 3600_000 },
  { kind: "accounts.cleanup", everyMs: 3600_000 },
  { kind: "uploads.expire", everyMs: 60_000 },
  { kind: "oauth.purge", everyMs: 3600_000 },
  ...publishPeriodic,
];
