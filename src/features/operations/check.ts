// `pier admin check`: the data dir doctor. It reads everything a restore or a crash could have
// left wrong — database pages and foreign keys, the blobs live files and live deploys point at,
// temp files nobody will finish, jobs whose worker died — names what is wrong (down to the bucket
// and path a damaged blob belongs to) and, with repair, fixes only what is safe to fix.
import type { Database } from "bun:sqlite";
import { existsSync, readdirSync, statSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { GC_ASIDE_PREFIX, type BlobStore } from "../../blobs/store";
import type { Clock } from "../../core/clock";
import { looseModes, octal, tighten } from "../../core/data-dir-modes";
import { pidAlive } from "../../core/processes";
import { hashFile } from "./layout";

export type FindingKind = "database" | "foreign_key" | "blob_missing" | "blob_size" | "blob_corrupt" | "temp_file" | "job_stuck" | "permissions";

export interface Finding {
  kind: FindingKind;
  message: string;
  /** What --repair did about it; absent = nothing (not safe, or not asked). */
  repaired?: string;
}

export interface CheckReport {
  ok: boolean;
  quick: boolean;
  findings: Finding[];
  checked: { blobs: number; blobs_hashed: number; file_refs: number; deploy_refs: number; temp_files: number; running_jobs: number };
}

export interface CheckTarget {
  sqlite: Database;
  blobs: BlobStore;
  clock: Clock;
  dataDir: string;
}

export interface CheckOptions {
  /** integrity quick_check, and blob hashes for a sample only (presence and size stay complete). */
  quick?: boolean;
  repair?: boolean;
  /** Blobs hashed with quick (default 64). */
  sample?: number;
}

/** A temp file younger than this may belong to an upload in progress on a running server. */
export const TEMP_FILE_AGE_MS = 3600_000;
const OWNERS_NAMED = 3;

interface Owner {
  what: string;
}

export async function checkDataDir(t: CheckTarget, opts: CheckOptions = {}): Promise<CheckReport> {
  const quick = opts.quick === true;
  const findings: Finding[] = [];
  // A damaged page can make any query throw ("database disk image is malformed"): that is a
  // finding about the database, and the checks that do not need the broken part still run.
  const unreadable = (what: string, e: unknown) =>
    findings.push({
      kind: "database",
      message: `database: ${what} failed: ${(e as Error).message} (restore the latest good backup, see /docs/guides/operations#restore)`,
    });
  try {
    checkDatabase(t.sqlite, quick, findings);
  } catch (e) {
    unreadable("the integrity check", e);
  }
  let refs: ReturnType<typeof blobOwners> = { owners: new Map(), files: 0, deploys: 0 };
  try {
    refs = blobOwners(t.sqlite);
  } catch (e) {
    unreadable("reading the files and deploys", e);
  }
  const blobResult = await checkBlobs(t, refs.owners, quick, opts.sample ?? 64, opts.repair === true, findings);
  const temp = await checkTempFiles(t, opts.repair === true, findings);
  checkModes(t, opts.repair === true, findings);
  let jobs = 0;
  try {
    jobs = checkJobs(t, opts.repair === true, findings);
  } catch (e) {
    unreadable("reading the jobs", e);
  }
  return {
    ok: findings.length === 0,
    quick,
    findings,
    checked: {
      blobs: refs.owners.size,
      blobs_hashed: blobResult.hashed,
      file_refs: refs.files,
      deploy_refs: refs.deploys,
      temp_files: temp,
      running_jobs: jobs,
    },
  };
}

function checkDatabase(sqlite: Database, quick: boolean, findings: Finding[]): void {
  const rows = sqlite.query<Record<string, string>, []>(quick ? "PRAGMA quick_check" : "PRAGMA integrity_check").all();
  const messages = rows.map((r) => Object.values(r)[0]!).filter((m) => m !== "ok");
  for (const m of messages.slice(0, 20))
    findings.push({
      kind: "database",
      message: `database: ${m} (not repairable in place: restore the latest good backup, see /docs/guides/operations#restore)`,
    });
  const fks = sqlite.query<{ table: string; rowid: number; parent: string }, []>("PRAGMA foreign_key_check").all();
  const byTable = new Map<string, number>();
  for (const f of fks) byTable.set(`${f.table} -> ${f.parent}`, (byTable.get(`${f.table} -> ${f.parent}`) ?? 0) + 1);
  for (const [edge, n] of byTable)
    findings.push({ kind: "foreign_key", message: `database: ${n} row(s) of ${edge.replace(" -> ", " point at missing ")} rows` });
}

/** Every blob a live file or the live deploy of a site uses, with who uses it (for the messages). */
function blobOwners(sqlite: Database): { owners: Map<string, { size: number; owners: Owner[]; count: number }>; files: number; deploys: number } {
  const owners = new Map<string, { size: number; owners: Owner[]; count: number }>();
  const add = (sha: string, size: number, what: string) => {
    let o = owners.get(sha);
    if (!o) owners.set(sha, (o = { size, owners: [], count: 0 }));
    o.count++;
    if (o.owners.length < OWNERS_NAMED) o.owners.push({ what });
  };
  let files = 0;
  for (const r of sqlite
    .query<{ sha256: string; size: number; path: string; bucket_id: string; title: string }, []>(
      "SELECT f.sha256, f.size, f.path, b.id AS bucket_id, b.title FROM files f JOIN buckets b ON b.id = f.bucket_id",
    )
    .iterate()) {
    files++;
    add(r.sha256, r.size, `file "${r.path}" in bucket "${r.title}" (${r.bucket_id})`);
  }
  let deploys = 0;
  for (const r of sqlite
    .query<
      {
        blob_sha256: string;
        size: number;
        gzip_sha256: string | null;
        gzip_size: number | null;
        br_sha256: string | null;
        br_size: number | null;
        path: string;
        slug: string;
        deploy_id: string;
      },
      []
    >(
      `SELECT df.blob_sha256, df.size, df.gzip_sha256, df.gzip_size, df.br_sha256, df.br_size, df.path, p.public_slug AS slug, df.deploy_id
       FROM publications p JOIN deploy_files df ON df.deploy_id = p.current_deploy_id`,
    )
    .iterate()) {
    deploys++;
    const what = `"${r.path}" of the live deploy ${r.deploy_id} of site ${r.slug}`;
    add(r.blob_sha256, r.size, what);
    if (r.gzip_sha256) add(r.gzip_sha256, r.gzip_size ?? -1, `${what} (gzip)`);
    if (r.br_sha256) add(r.br_sha256, r.br_size ?? -1, `${what} (brotli)`);
  }
  return { owners, files, deploys };
}

function describeOwners(o: { owners: Owner[]; count: number }): string {
  const named = o.owners.map((x) => x.what).join("; ");
  return o.count > o.owners.length ? `${named}; and ${o.count - o.owners.length} more` : named;
}

async function checkBlobs(
  t: CheckTarget,
  owners: Map<string, { size: number; owners: Owner[]; count: number }>,
  quick: boolean,
  sample: number,
  repair: boolean,
  findings: Finding[],
): Promise<{ hashed: number }> {
  const all = [...owners.keys()];
  const toHash = new Set(quick ? pickSample(all, sample) : all);
  let hashed = 0;
  for (const sha of all) {
    const o = owners.get(sha)!;
    const size = await t.blobs.size(sha);
    if (size === null) {
      findings.push({
        kind: "blob_missing",
        message: `blob ${sha} is missing; used by ${describeOwners(o)}. Restore it from a backup (see /docs/guides/operations#restore) or upload the file again.`,
      });
      continue;
    }
    if (o.size >= 0 && size !== o.size) {
      findings.push({
        kind: "blob_size",
        message: `blob ${sha} has ${size} bytes, the database says ${o.size}; used by ${describeOwners(o)}`,
        ...(await quarantine(t, sha, repair)),
      });
      continue;
    }
    if (!toHash.has(sha)) continue;
    hashed++;
    const h = await hashFile(t.blobs.file(sha).name!);
    if (h.sha256 !== sha)
      findings.push({
        kind: "blob_corrupt",
        message: `blob ${sha} is damaged (its content hashes to ${h.sha256}); used by ${describeOwners(o)}`,
        ...(await quarantine(t, sha, repair)),
      });
  }
  return { hashed };
}

/**
 * A damaged blob is moved aside (never deleted: it is evidence, and maybe mostly right): the
 * files using it then answer an error instead of wrong bytes, and a good copy put back under
 * blobs/sha256/ (from a backup) heals them all at once.
 */
async function quarantine(t: CheckTarget, sha: string, repair: boolean): Promise<{ repaired?: string }> {
  if (!repair) return {};
  const dir = join(t.dataDir, "blobs", "quarantine");
  await mkdir(dir, { recursive: true });
  await rename(t.blobs.file(sha).name!, join(dir, sha));
  return {
    repaired: `moved the damaged blob to blobs/quarantine/${sha}: its files now fail to download instead of serving wrong bytes; copy the blob from a backup to blobs/sha256/${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha} to heal them`,
  };
}

function pickSample<T>(items: T[], n: number): T[] {
  if (items.length <= n) return items;
  const copy = [...items];
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, n);
}

/**
 * The data dir and its database and key readable by the group or other users (D262). Every start
 * tightens them, so this finds what that chmod could not change (another owner) or what changed
 * since; --repair tries the chmod again.
 */
function checkModes(t: CheckTarget, repair: boolean, findings: Finding[]): void {
  for (const l of looseModes(t.dataDir)) {
    const f: Finding = {
      kind: "permissions",
      message: `${l.path} is ${octal(l.mode)}: other local users may read it (mail, login codes, leads, the secret key); it should be ${octal(l.want)} (chmod ${octal(l.want)} ${l.path}, as its owner or root)`,
    };
    if (repair) {
      const error = tighten(l);
      if (error === null) f.repaired = `made ${octal(l.want)}`;
      else f.message += ` — chmod failed: ${error}`;
    }
    findings.push(f);
  }
}

/** Temp files of uploads and restores nobody will finish (older than an hour: a live upload is younger). */
async function checkTempFiles(t: CheckTarget, repair: boolean, findings: Finding[]): Promise<number> {
  const cutoff = t.clock.now().getTime() - TEMP_FILE_AGE_MS;
  const candidates: string[] = [];
  const tmpDir = join(t.dataDir, "blobs", "tmp");
  // A blob the collector had moved aside when it stopped is no temp file: the server's start puts it back.
  if (existsSync(tmpDir)) for (const n of readdirSync(tmpDir)) if (!n.startsWith(GC_ASIDE_PREFIX)) candidates.push(join(tmpDir, n));
  // A `.restore-` folder is a crashed restore's staged copy (D242); `.replaced-` folders hold the
  // previous data and are left to the operator.
  for (const n of readdirSync(t.dataDir)) if (/^pier\.db\.(restore-tmp|partial-)|^\.restore-\d+-\d+$/.test(n)) candidates.push(join(t.dataDir, n));
  let stale = 0;
  for (const path of candidates) {
    let mtime: number;
    try {
      mtime = statSync(path).mtimeMs;
    } catch {
      continue; // finished (renamed) meanwhile
    }
    if (mtime > cutoff || restoreStillRunning(basename(path))) continue;
    stale++;
    const f: Finding = { kind: "temp_file", message: `stray temp file ${path} (left by an interrupted upload or restore)` };
    if (repair) {
      await rm(path, { recursive: true, force: true });
      f.repaired = "removed";
    }
    findings.push(f);
  }
  return stale;
}

/**
 * A restore's staging folder is named for its process (`.restore-<pid>-<ms>`): while that process
 * lives the restore is running, however old the folder looks (its top-level mtime does not move
 * while blobs are copied into subfolders, and a large restore takes hours). A reused pid keeps a
 * crashed restore's folder until that process ends too: the safe way to be wrong (D247).
 */
function restoreStillRunning(name: string): boolean {
  const m = /^\.restore-(\d+)-\d+$/.exec(name);
  if (!m) return false;
  return pidAlive(Number(m[1]));
}

/** Running jobs whose lease passed: their worker died. Repair queues them again (what the sweeper does). */
function checkJobs(t: CheckTarget, repair: boolean, findings: Finding[]): number {
  const now = t.clock.now().toISOString();
  const running = t.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM jobs WHERE status = 'running'").get()!.n;
  const stuck = t.sqlite
    .query<{ id: string; kind: string; lease_until: string }, [string]>(
      "SELECT id, kind, lease_until FROM jobs WHERE status = 'running' AND lease_until <= ? ORDER BY lease_until",
    )
    .all(now);
  for (const j of stuck) {
    const f: Finding = { kind: "job_stuck", message: `job ${j.id} (${j.kind}) is running past its deadline (${j.lease_until}): its worker stopped` };
    if (repair) {
      const changed = t.sqlite
        .query(
          "UPDATE jobs SET status = 'queued', lease_until = NULL, worker_id = NULL, updated_at = ?, last_error = coalesce(last_error, 'recovered by pier admin check') WHERE id = ? AND status = 'running' AND lease_until <= ?",
        )
        .run(now, j.id, now).changes;
      f.repaired = changed ? "queued again: the worker runs it on its next poll" : "already recovered meanwhile";
    }
    findings.push(f);
  }
  return running;
}
