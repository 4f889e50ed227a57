// The table of background work (GoatCounter cron/cron.go): every job kind with its handler, its
// period when it runs on a timer, and what it is for. Features export the handlers; this file is
// the one place that lists them, so a newcomer reads all background work here.
import { collectGarbage } from "../blobs/gc";
import { purgeExpiredSessionsAndInvites } from "../features/accounts";
import { BUCKET_DELETE_JOB, bucketDeleteJob } from "../features/buckets";
import { expireUploads } from "../features/files";
import { purgeExpiredOAuthCodesAndTokens } from "../features/oauth";
import { markFailed, runBuild, runUnpublish } from "../features/publish";
import { BUILD_JOB } from "../features/publish";
import { endExpiredSites, enforceSiteRenewal, sweepStuckPublications, UNPUBLISH_JOB } from "../features/publish";
import { prunePublishSessions, pruneSlugHolds } from "../features/publish";
import { pruneGateRecords } from "../sites/gate-limits";
import { recheckDueDomains } from "../features/domains";

import { pruneAnalytics } from "../features/analytics";
import { FORMS_NOTIFY_JOB, notifyNewSubmissions } from "../features/forms";
import { GIT_POLL_JOB, GIT_SYNC_JOB, gitSyncJob, pollConnections } from "../features/gitsync";
import type { JobHandler, PeriodicTask } from "./runner";
import { acmeTasks } from "../acme";
import { pruneOutbox } from "../features/mail";
import { BACKUP_JOB, BACKUP_TICK_MS, runScheduledBackup } from "../features/operations";

export interface Task {
  kind: string;
  handler: JobHandler;
  /** Enqueued by the runner on this period; absent = enqueued by a feature when needed. */
  everyMs?: number;
  description: string;
}

const MINUTE = 60_000;
const HOUR = 3600_000;

export const tasks: Task[] = [
  {
    kind: "blobs.gc",
    everyMs: 6 * HOUR,
    handler: { run: async (deps) => collectGarbage(deps), maxAttempts: 1 },
    description: "Mark-and-sweep of blobs no file, version or upload refers to any more",
  },
  {
    kind: "accounts.cleanup",
    everyMs: HOUR,
    handler: { run: async (deps) => purgeExpiredSessionsAndInvites(deps), maxAttempts: 1 },
    description: "Delete expired browser sessions and long-expired unused invites",
  },
  {
    kind: "jobs.prune",
    everyMs: HOUR,
    handler: { run: async (deps) => ({ removed: deps.jobs.prune(7 * 24 * HOUR, 30 * 24 * HOUR) }), maxAttempts: 1 },
    description: "Forget finished jobs: done ones after 7 days, failed ones after 30 (the health page lists those)",
  },
  {
    kind: "mail.outbox_prune",
    everyMs: HOUR,
    handler: { run: async (deps) => ({ removed: pruneOutbox(deps) }), maxAttempts: 1 },
    description: "Forget outbox mail (kept while no SMTP relay is set) after 14 days",
  },
  {
    kind: "uploads.expire",
    everyMs: MINUTE,
    handler: { run: async (deps) => expireUploads(deps), maxAttempts: 1 },
    description: "Expire abandoned upload sessions (releasing their bucket locks) and stale direct uploads",
  },
  {
    kind: "oauth.purge",
    everyMs: HOUR,
    handler: { run: async (deps) => purgeExpiredOAuthCodesAndTokens(deps), maxAttempts: 1 },
    description: "Delete device codes, authorization codes and tokens expired for a day",
  },
  {
    kind: BUCKET_DELETE_JOB,
    handler: bucketDeleteJob,
    description: "Empty a large deleted bucket in small batches, then remove it",
  },
  {
    // One attempt: a failed build is reported (failed + notification) and retried by the owner.
    // The runner's heartbeat renews the lease of a long build; no longer lease needed. A build
    // whose server was killed is reported the same way at the restart (not left "processing"
    // until the next sweep, and not rebuilt by itself: a build that kills the server would loop).
    kind: BUILD_JOB,
    handler: {
      run: runBuild,
      lane: "publish",
      maxAttempts: 1,
      onFailure: (deps, payload, error) =>
        markFailed(deps, String(payload.publication_id), payload.build_token, `The build was interrupted (${error}); retry the publish.`),
    },
    description: "Build a publication from its bucket snapshot and make it live",
  },
  {
    kind: UNPUBLISH_JOB,
    handler: { run: runUnpublish, lane: "publish", maxAttempts: 3 },
    description: "Take a publication's site offline (it already answers 404 while unpublishing)",
  },
  {
    kind: "publish.sweep",
    everyMs: 5 * MINUTE,
    handler: { run: async (deps) => ({ ...sweepStuckPublications(deps), ...prunePublishSessions(deps), ...pruneSlugHolds(deps) }), maxAttempts: 1 },
    description: "Queue again builds and unpublishes whose job is gone; forget publish sessions finished a week ago",
  },
  {
    kind: "publish.expire_previews",
    everyMs: MINUTE,
    handler: { run: async (deps) => endExpiredSites(deps), maxAttempts: 1 },
    description: "End sites a grace week past their expiry (unpublished, no longer blocking archive or delete)",
  },
  {
    kind: "publish.site_renewal",
    everyMs: HOUR,
    handler: { run: async (deps) => enforceSiteRenewal(deps), maxAttempts: 1 },
    description: "Unpublish main sites of plans with site renewal when the account had no dashboard visit in time",
  },
  {
    kind: "sites.prune_gates",
    everyMs: HOUR,
    handler: { run: async (deps) => pruneGateRecords(deps), maxAttempts: 1 },
    description: "Forget site-gate attempt windows that ended and access codes past their expiry and the mail-cap hour",
  },
  {
    kind: "domains.recheck",
    everyMs: MINUTE,
    handler: { run: async (deps) => recheckDueDomains(deps), maxAttempts: 1 },
    description:
      "Check the DNS records (or certificate) of pending custom domains that are due: after 1, 2, 5, 10, 30 minutes, then hourly; give up after 7 days",
  },

  ...acmeTasks,
  {
    kind: "analytics.prune",
    everyMs: HOUR,
    handler: { run: async (deps) => pruneAnalytics(deps), maxAttempts: 1 },
    description: "Delete hourly analytics after 3 days and daily analytics after --analytics-retention-days (all-time hits stay)",
  },
  {
    kind: FORMS_NOTIFY_JOB,
    everyMs: MINUTE,
    handler: { run: async (deps) => ({ mails: await notifyNewSubmissions(deps) }), maxAttempts: 1 },
    description: "Mail each bucket owner once about the form submissions that arrived since the last run (counts and a link, no visitor text)",
  },
  {
    kind: GIT_SYNC_JOB,
    handler: gitSyncJob,
    description:
      "Sync one bucket with its git branch: remote changes become one bucket version, bucket changes one pushed commit; conflicts are reported, never overwritten",
  },
  {
    kind: GIT_POLL_JOB,
    everyMs: 10_000,
    handler: { run: async (deps) => pollConnections(deps), maxAttempts: 1 },
    description: "Queue git syncs that are due: branches due a check (60 s, doubling while quiet, at most 10 min) and buckets changed and then quiet for 10 s",
  },
  {
    kind: BACKUP_JOB,
    everyMs: BACKUP_TICK_MS,
    // Long lease: a large backup copies for a while (the heartbeat renews it anyway).
    handler: { run: async (deps) => runScheduledBackup(deps), maxAttempts: 1, leaseMs: 30 * MINUTE },
    description: "With --backup-dir: write a backup when the newest is older than --backup-every, keep --backup-keep of them",
  },
];

export const jobHandlers: Record<string, JobHandler> = Object.fromEntries(tasks.map((t) => [t.kind, t.handler]));

export const periodicTasks: PeriodicTask[] = tasks.filter((t) => t.everyMs !== undefined).map((t) => ({ kind: t.kind, everyMs: t.everyMs! }));
