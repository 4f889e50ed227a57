// Operations: backups, restore, the data dir doctor and upgrades (what the CLI, the job table and
// the runtime may use).
export { createBackup, type BackupOptions, type BackupResult } from "./backup";
export { restoreBackup, verifyBackup, type RestoreOptions, type RestoreResult, type VerifyResult } from "./restore";
export { prepareUpgrade, type UpgradePlan } from "./upgrade";
export { readManifest, type BackupManifest } from "./layout";
export { checkDataDir, type CheckReport, type Finding } from "./check";
export { BACKUP_JOB, BACKUP_TICK_MS, backupStatus, listScheduledBackups, runScheduledBackup, type BackupStatus, type ScheduledBackup } from "./scheduled";
export { isArchivePath } from "./archive";
