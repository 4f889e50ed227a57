// A connection's object store only ever grows: each fetch adds a pack of what changed, each push
// its blobs, trees and commit, and isomorphic-git has no gc. What a later sync reads is the last
// synced commit's snapshot alone (the next sync diffs against its tree, and a thin pack's deltas
// build on its objects), so once the store has grown to twice its size after the last compaction
// (and by a floor), that snapshot is copied into a fresh store that replaces the old one (D280).
import * as fs from "node:fs";
import { join } from "node:path";
import type { Deps } from "../../core/context";
import { walkTree } from "../../core/walk";
import { isoGit } from "./iso-git";

/** Tests shorten them. */
export const compactionLimits = {
  /** The store is compacted when its bytes exceed this many times its bytes after the last compaction... */
  factor: 2,
  /** ...and it grew by at least this much (a small store is never worth the copy). */
  minGrowthBytes: 64 * 1024 * 1024,
};

/** The store's size after its last compaction (or its first sync), in bytes, as text. */
const BASELINE = "pier-baseline-bytes";

export interface Compaction {
  bytesBefore: number;
  bytesAfter: number;
  objects: number;
}

/** Bytes of every file under the store's objects/ folder (packs, indexes, loose objects). */
export async function storeBytes(gitdir: string): Promise<number> {
  let total = 0;
  for await (const { path, entry } of walkTree(join(gitdir, "objects"))) {
    if (entry.isFile()) total += fs.statSync(path, { throwIfNoEntry: false })?.size ?? 0;
  }
  return total;
}

/**
 * After a sync that moved: compact the store when it has outgrown its baseline, keeping only
 * `commit` (the connection's last synced commit) and everything its tree holds. Null when the
 * store was left as it was. A failure leaves the old store in place (the next sync works as
 * before) and is the caller's to log.
 */
export async function compactIfGrown(deps: Deps, connectionId: string, commit: string, branch: string): Promise<Compaction | null> {
  const gitdir = storePath(deps, connectionId);
  const bytes = await storeBytes(gitdir);
  const baseline = readBaseline(gitdir);
  if (baseline === null) {
    writeBaseline(gitdir, bytes);
    return null;
  }
  if (bytes <= baseline * compactionLimits.factor || bytes - baseline < compactionLimits.minGrowthBytes) return null;
  const fresh = `${gitdir}.compact`;
  fs.rmSync(fresh, { recursive: true, force: true });
  try {
    const objects = await copySnapshot(gitdir, fresh, commit, branch);
    const bytesAfter = await storeBytes(fresh);
    if (bytesAfter >= bytes) {
      // The copy is loose objects, each compressed alone: a snapshot of many similar files that
      // the fetched packs held as deltas can take more room than the whole grown store. Keep the
      // store, and try again only once it has doubled from here.
      writeBaseline(gitdir, bytes);
      return null;
    }
    writeBaseline(fresh, bytesAfter);
    // Two renames: a crash between them leaves `<id>.old` alone, which openStore puts back.
    const old = `${gitdir}.old`;
    fs.rmSync(old, { recursive: true, force: true });
    fs.renameSync(gitdir, old);
    fs.renameSync(fresh, gitdir);
    fs.rmSync(old, { recursive: true, force: true });
    return { bytesBefore: bytes, bytesAfter, objects };
  } finally {
    fs.rmSync(fresh, { recursive: true, force: true });
  }
}

export const storePath = (deps: Deps, connectionId: string) => join(deps.config.dataDir, "git", connectionId);

/** A store left as `<id>.old` by a crash in the middle of a swap is put back. */
export function recoverStore(gitdir: string): void {
  const old = `${gitdir}.old`;
  if (!fs.existsSync(gitdir) && fs.existsSync(old)) fs.renameSync(old, gitdir);
}

/** Copy one commit and its whole tree (one object at a time: memory stays at the largest file) into a new bare store. */
async function copySnapshot(from: string, to: string, commit: string, branch: string): Promise<number> {
  const git = await isoGit();
  const cache = {};
  await git.init({ fs, gitdir: to, bare: true, defaultBranch: "pier-internal" });
  fs.copyFileSync(join(from, "config"), join(to, "config"));
  const copied = new Set<string>();
  const copy = async (oid: string) => {
    if (copied.has(oid)) return;
    copied.add(oid);
    const { type, object } = await git.readObject({ fs, cache, gitdir: from, oid, format: "content" });
    const written = await git.writeObject({
      fs,
      gitdir: to,
      type: type as "blob" | "tree" | "commit" | "tag",
      object: object as Uint8Array,
      format: "content",
    });
    if (written !== oid) throw new Error(`object ${oid} was copied as ${written}`);
  };
  const walk = async (tree: string): Promise<void> => {
    await copy(tree);
    const { tree: entries } = await git.readTree({ fs, cache, gitdir: from, oid: tree });
    for (const e of entries) {
      if (e.type === "tree") await walk(e.oid);
      else if (e.type === "blob") await copy(e.oid);
      // A submodule entry names a commit of another repository: nothing to copy.
    }
  };
  const { commit: parsed } = await git.readCommit({ fs, cache, gitdir: from, oid: commit });
  await copy(commit);
  await walk(parsed.tree);
  // Its parents are not copied: the commit is the store's shallow boundary, as after a depth-1 fetch.
  fs.writeFileSync(join(to, "shallow"), `${commit}\n`);
  await git.writeRef({ fs, gitdir: to, ref: `refs/heads/${branch}`, value: commit, force: true });
  return copied.size;
}

function readBaseline(gitdir: string): number | null {
  try {
    const n = Number(fs.readFileSync(join(gitdir, BASELINE), "utf8"));
    return Number.isFinite(n) && n >= 0 ? n : null;
  } catch {
    return null;
  }
}

function writeBaseline(gitdir: string, bytes: number): void {
  fs.writeFileSync(join(gitdir, BASELINE), String(bytes));
}
