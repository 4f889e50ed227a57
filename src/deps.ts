// A Pier process's dependencies (Deps): the data dir opened and migrated, the blob store, and the
// per-process state every feature shares. Used by the primary (src/runtime.ts), by serving
// workers (src/serving-process.ts), which load nothing else of the app, and by admin commands.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createCertificateManager } from "./acme";
import { DiskBlobStore } from "./blobs/disk";
import { ConfigError, ensureSecretKey, resolveUrls, type Config } from "./config";
import { systemClock, type Clock } from "./core/clock";
import type { Deps } from "./core/context";
import { SecretBox } from "./core/crypto";
import { describeModes, tightenDataDir } from "./core/data-dir-modes";
import { createLogger, type Logger } from "./core/log";
import { PierMetrics } from "./core/pier-metrics";
import { openDatabase } from "./db/client";
import { migrate } from "./db/migrate";
import { PlanCatalog } from "./features/accounts/plans";
import { SigninGuard } from "./features/accounts/signin-limits";
import { newUsedTotpSteps } from "./features/accounts/totp";
import { ActivityRecorder } from "./features/agent-auth/activity";
import { newEmailCodeLog } from "./features/agent-auth/email-code";
import { AnalyticsRecorder, checkGeoDb } from "./features/analytics";
import { activeCustomDomain, activeCustomDomains } from "./features/domains";
import { bucketSyncFields } from "./features/gitsync";
import { recordMessageRead } from "./features/mail/messages";
import { newMailer } from "./features/mail/outbound";
import { prepareUpgrade, type UpgradePlan } from "./features/operations";
import type { SiteChangeListener } from "./features/publish/events";
import { newPublishLimiters } from "./features/publish/limits";
import { JobQueue } from "./jobs/queue";
import { jobHandlers } from "./jobs/tasks";

export interface DepsOptions {
  clock?: Clock;
  log?: Logger;
  /** false for admin commands: a server on the same data dir may be writing upload temp files. */
  clearTempFiles?: boolean;
  /** This process is a serving worker: the primary's temp files are left alone, certificates are followed. */
  servingWorker?: boolean;
  /** The pid of a server running on this data dir (admin commands): pending migrations are refused. */
  servedBy?: number | null;
  /** Tests: how git sync resolves a git server's name (Deps.gitLookup). */
  gitLookup?: (host: string) => Promise<string[]>;
}

/** Open the data dir and database and apply migrations (also used by `pier admin`). */
export function openData(config: Config, opts: { servedBy?: number | null } = {}) {
  // 0700 and 0600: the database and secret.key are for Pier's user only. mkdir's mode applies
  // only when it creates the folder, so an existing one is tightened, before the database is
  // opened and again after (SQLite creates pier.db, -wal and -shm under the umask).
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // Nothing to expose yet (a first start in ./data as git checked it out): not worth a warning.
  const fresh = !existsSync(join(config.dataDir, "pier.db"));
  const modes = tightenDataDir(config.dataDir);
  const handle = openDatabase(join(config.dataDir, "pier.db"));
  const after = tightenDataDir(config.dataDir);
  modes.tightened.push(...after.tightened);
  modes.failed.push(...after.failed.filter((f) => !modes.failed.some((m) => m.path === f.path)));
  let upgrade: UpgradePlan;
  try {
    upgrade = prepareUpgrade(handle.sqlite, config.dataDir, { servedBy: opts.servedBy });
  } catch (e) {
    handle.close();
    throw e;
  }
  const applied = migrate(handle.sqlite);
  return { handle, applied, preMigrateBackup: upgrade.backup, modes, fresh };
}

/** Dependencies without listeners (CLI admin commands use these directly). */
export async function createDeps(config: Config, httpPort: number, opts: DepsOptions = {}): Promise<Deps & { close(): void }> {
  const log = opts.log ?? createLogger(config.logLevel, undefined, config.logFormat);
  const geoProblem = checkGeoDb(config.geoipDb);
  if (geoProblem) throw new ConfigError(geoProblem);
  const plans = PlanCatalog.load(config.plansFile, config.defaultPlan, config.ownerPlan);
  const { handle, applied, preMigrateBackup, modes, fresh } = openData(config, { servedBy: opts.servedBy });
  if (modes.tightened.length && fresh) log.info("the new data dir was made private to Pier's user", { paths: describeModes(modes.tightened) });
  else if (modes.tightened.length)
    log.warn("the data dir was readable by other local users; its permissions were tightened", { paths: describeModes(modes.tightened) });
  if (modes.failed.length)
    log.error("the data dir is readable by other local users and Pier could not change that: run chmod as its owner (or root)", {
      paths: describeModes(modes.failed),
      errors: modes.failed.map((f) => `${f.path}: ${f.error}`).join(", "),
      fix: `chmod 700 ${config.dataDir} && chmod 600 ${config.dataDir}/pier.db* ${config.dataDir}/secret.key`,
    });
  if (preMigrateBackup) log.info("database backed up before migrating", { backup: preMigrateBackup, pending: applied });
  if (applied.length) log.info("migrations applied", { migrations: applied });
  const blobs = new DiskBlobStore(join(config.dataDir, "blobs"));
  // Admin commands and serving workers must not clear the blob store's temp folder: a running
  // server's (the primary's) uploads are in it.
  await blobs.init(!opts.servingWorker && (opts.clearTempFiles ?? true));
  const clock = opts.clock ?? systemClock;
  // The recorder and the mailer hold Deps themselves: they are attached once the rest exists.
  const base = {
    config,
    urls: resolveUrls(config, httpPort),
    db: handle.db,
    sqlite: handle.sqlite,
    blobs,
    jobs: new JobQueue(handle.db, clock),
    clock,
    log,
    secrets: new SecretBox(ensureSecretKey(config)),
    plans,
    emailCodesSent: newEmailCodeLog(),
    publishLimiters: newPublishLimiters(config),
    usedTotpSteps: newUsedTotpSteps(),
    signinGuard: new SigninGuard(),
    onFileRead: [recordMessageRead],
    certificates: null,
    close: () => handle.close(),
    siteChangeListeners: new Set<SiteChangeListener>(),
    metrics: new PierMetrics(Object.keys(jobHandlers)),
    ...(opts.gitLookup ? { gitLookup: opts.gitLookup } : {}),
  };
  const deps = base as typeof base & Pick<Deps, "agentActivity" | "mailer" | "customDomainOf" | "customDomainsOf" | "analytics" | "gitSyncOf">;
  deps.agentActivity = new ActivityRecorder(deps);
  deps.mailer = newMailer(deps);
  deps.customDomainOf = (bucketId) => activeCustomDomain(deps, bucketId);
  deps.customDomainsOf = (bucketIds) => activeCustomDomains(deps, bucketIds);
  deps.analytics = new AnalyticsRecorder(deps);
  deps.gitSyncOf = (bucket) => bucketSyncFields(deps, bucket);
  (deps as Deps).certificates = createCertificateManager(deps, opts.servingWorker === true);
  return deps;
}
