// Scheduled backups (--backup-dir, --backup-every, --backup-keep): a periodic job on the existing
// queue looks every few minutes whether the newest complete backup is older than the period, and
// if so writes a new backup folder. Looking at the folders (not at a timer) means a restart, a
// crash or a server that was off for a week neither skips nor doubles a backup. Each run is a
// self-contained folder; blobs are hard-linked from the previous one (blobs are immutable), so a
// run copies only new blobs and deleting an old folder never breaks a newer one.
import { existsSync, readdirSync, statSync } from "node:fs";
import { link, mkdir, opendir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Deps } from "../../core/context";
import { createBackup } from "./backup";
import { MANIFEST_FILE, readManifest, type BackupManifest } from "./layout";

export const BACKUP_JOB = "operations.backup";
/** How often the job looks whether a backup is due (the period itself is --backup-every). */
export const BACKUP_TICK_MS = 5 * 60_000;
const PREFIX = "pier-backup-";

export interface ScheduledBackup {
  name: string;
  path: string;
  complete: boolean;
  created_at: string | null;
  duration_seconds: number | null;
  database_bytes: number | null;
  blobs: number | null;
  blob_bytes: number | null;
  copied_bytes: number | null;
}

export interface BackupStatus {
  enabled: boolean;
  dir: string | null;
  every_ms: number;
  keep: number;
  /** Newest complete backup. */
  last: ScheduledBackup | null;
  next_due_at: string | null;
  /** The latest run's failure, when it failed after the last success. */
  last_error: { at: string; message: string } | null;
  backups: ScheduledBackup[];
}

export function listScheduledBackups(dir: string): ScheduledBackup[] {
  if (!existsSync(dir)) return [];
  const out: ScheduledBackup[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(PREFIX)) continue;
    const path = join(dir, name);
    if (!statSync(path).isDirectory()) continue;
    let m: BackupManifest | null = null;
    if (existsSync(join(path, MANIFEST_FILE)))
      try {
        m = readManifest(path);
      } catch {
        m = null;
      }
    out.push({
      name,
      path,
      complete: m !== null,
      created_at: m?.created_at ?? null,
      duration_seconds: m?.duration_seconds ?? null,
      database_bytes: m?.database.size ?? null,
      blobs: m?.blobs.count ?? null,
      blob_bytes: m?.blobs.bytes ?? null,
      copied_bytes: m?.blobs.copied_bytes ?? null,
    });
  }
  // Names carry the start time: newest first.
  return out.sort((a, b) => (a.name < b.name ? 1 : -1));
}

export function backupStatus(deps: Pick<Deps, "config" | "jobs" | "clock">): BackupStatus {
  const { backupDir, backupEvery, backupKeep } = deps.config;
  const dir = backupDir ? resolve(backupDir) : null;
  const backups = dir ? listScheduledBackups(dir) : [];
  const last = backups.find((b) => b.complete) ?? null;
  const failed = deps.jobs.recentOfKind(BACKUP_JOB, 5).find((j) => j.lastError && j.finishedAt);
  const lastError = failed && (!last?.created_at || failed.finishedAt! > last.created_at) ? { at: failed.finishedAt!, message: failed.lastError! } : null;
  const nextDue = dir ? (last?.created_at ? new Date(Date.parse(last.created_at) + backupEvery).toISOString() : deps.clock.now().toISOString()) : null;
  return { enabled: dir !== null, dir, every_ms: backupEvery, keep: backupKeep, last, next_due_at: nextDue, last_error: lastError, backups };
}

/** The job: a backup when one is due, then pruning to --backup-keep. */
export async function runScheduledBackup(deps: Deps, opts: { force?: boolean } = {}): Promise<Record<string, unknown>> {
  const status = backupStatus(deps);
  if (!status.dir) return { skipped: "no --backup-dir" };
  const now = deps.clock.now();
  if (!opts.force && status.next_due_at && Date.parse(status.next_due_at) > now.getTime()) return { skipped: "not due", next_due_at: status.next_due_at };
  await mkdir(status.dir, { recursive: true, mode: 0o700 });
  const name = `${PREFIX}${now.toISOString().replace(/[:.]/g, "-")}`;
  const folder = join(status.dir, name);
  const previous = status.last;
  if (previous) await linkBlobs(join(previous.path, "blobs"), join(folder, "blobs"));
  try {
    const r = await createBackup({ dataDir: deps.config.dataDir, to: folder, includeSecretKey: false, now: () => deps.clock.now() });
    for (const p of r.problems) deps.log.warn("scheduled backup: data dir problem", { problem: p });
    deps.log.info("scheduled backup written", {
      folder,
      blobs: r.manifest.blobs.count,
      copied_bytes: r.manifest.blobs.copied_bytes,
      seconds: r.manifest.duration_seconds,
    });
    const pruned = await prune(status.dir, deps.config.backupKeep);
    return { folder, blobs: r.manifest.blobs.count, copied: r.manifest.blobs.copied, copied_bytes: r.manifest.blobs.copied_bytes, pruned };
  } catch (e) {
    // A failed run leaves no folder that could pass for a backup (and none that wastes space).
    await rm(folder, { recursive: true, force: true }).catch(() => {});
    throw e;
  }
}

/** Keep the newest `keep` complete backups; drop older ones and unfinished runs older than the newest. */
async function prune(dir: string, keep: number): Promise<string[]> {
  const all = listScheduledBackups(dir);
  const complete = all.filter((b) => b.complete);
  const newest = complete[0]?.name ?? "";
  const drop = [...complete.slice(keep), ...all.filter((b) => !b.complete && b.name < newest)];
  for (const b of drop) await rm(b.path, { recursive: true, force: true });
  return drop.map((b) => b.name);
}

/** Hard-link every blob of the previous backup into the new folder (same file system: no bytes copied). */
async function linkBlobs(from: string, to: string): Promise<void> {
  if (!existsSync(from)) return;
  const walk = async (rel: string): Promise<void> => {
    for await (const e of await opendir(join(from, rel))) {
      const r = join(rel, e.name);
      if (e.isDirectory()) {
        await mkdir(join(to, r), { recursive: true });
        await walk(r);
      } else if (e.isFile() && !e.name.includes(".tmp-")) {
        // A failed link (another file system) only means that blob is copied instead.
        await link(join(from, r), join(to, r)).catch(() => {});
      }
    }
  };
  await mkdir(to, { recursive: true });
  await walk("");
}
