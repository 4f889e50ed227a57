// One sync of a connection: a three-way comparison against the base both sides last agreed on
// (commit lastCommit, bucket version lastVersion). Remote changes become ONE bucket version
// through the files service; bucket changes become ONE commit on top of the remote head, pushed.
// A path changed differently on both sides is a conflict: nothing is written on either side
// until a choice (bucket or repository) is given for every such path. The comparison is by
// trees, not history, so a force push (history rewritten) is just another set of changed paths
// and no bucket version is lost.
import { createHash } from "node:crypto";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { bucketMetadataOf } from "../buckets";
import {
  assertAllowedFile,
  assertNotExecutable,
  commitChanges,
  guessContentType,
  isMailPath,
  latestVersion,
  normalizePath,
  pathsChangedSince,
  snapshotAt,
  type BlobRef,
  type Change,
} from "../files";
import {
  SyncFailure,
  asSyncFailure,
  commitAndPush,
  commitMessage,
  diffTrees,
  fetchBranch,
  openStore,
  readBlob,
  treeOf,
  updateTree,
  writeBlob,
  type GitStore,
  type RemoteAccess,
  type Traffic,
  type TreeEntry,
} from "./remote";
import { assertFilesFit, assertPushFits, charge } from "./limits";
import { remoteAccessFor, type ConnectionRow } from "./store";
import { transaction } from "../../db/tx";

export type Side = "bucket" | "repository";

export interface SyncOutcome {
  state: "in_sync" | "conflict";
  pulled: number;
  pushed: number;
  conflicts: string[];
  commit: string | null;
  version: number;
  traffic: Traffic;
}

type BucketFile = BlobRef | null;

/** Read whole only for a push, after assertFilesFit bounded its size. */
async function bucketBytes(deps: Deps, f: NonNullable<BucketFile>): Promise<Uint8Array> {
  return new Uint8Array(await deps.blobs.file(f.sha256).arrayBuffer());
}

/** A bucket file's git object id (sha1 of "blob <size>\0" and the bytes), streamed: never held whole. */
async function gitOidOf(deps: Deps, f: NonNullable<BucketFile>): Promise<string> {
  const h = createHash("sha1").update(`blob ${f.size}\0`);
  for await (const chunk of deps.blobs.file(f.sha256).stream() as unknown as AsyncIterable<Uint8Array>) h.update(chunk);
  return h.digest("hex");
}

const FILE_MODE = "100644";

/**
 * The side chosen for a path. Paths are keys of a plain object: `choices["constructor"]` would be
 * Object.prototype's function, so only an own property naming a side counts.
 */
export function choiceOf(choices: Record<string, unknown>, path: string): Side | undefined {
  if (!Object.hasOwn(choices, path)) return undefined;
  const side = choices[path];
  return side === "bucket" || side === "repository" ? side : undefined;
}

/**
 * Run one sync. `choices` resolves conflicts path by path. Throws SyncFailure for anything the
 * user must act on; the caller records it in the connection's state.
 */
export async function runSync(deps: Deps, conn: ConnectionRow, choices: Record<string, Side> = {}, traffic?: Traffic): Promise<SyncOutcome> {
  const access: RemoteAccess = await remoteAccessFor(deps, conn);
  const store = openStore(deps, conn.id, access, traffic);
  const bucket = bucketMetadataOf(deps, conn.bucketId);
  if (!bucket) throw new SyncFailure("bucket_gone", "The bucket no longer exists.");

  const head = await fetchBranch(store, access, conn.lastCommit === null);
  const baseTree = await treeOf(store, conn.lastCommit).catch(() => null);
  const headTree = await treeOf(store, head);
  const remote =
    conn.lastCommit !== null && baseTree === null ? await diffAgainstLastVersion(deps, store, conn, headTree) : await diffTrees(store, baseTree, headTree);
  const currentVersion = latestVersion(conn.bucketId, deps.db)?.number ?? 0;
  const local: Map<string, BucketFile> = pathsChangedSince(deps, conn.bucketId, conn.lastVersion ?? 0);
  // Received mail is private to the bucket (never published, never synced): it never goes to a
  // repository, and nothing in a repository writes or deletes it.
  for (const map of [remote, local] as Map<string, unknown>[]) for (const path of map.keys()) if (isMailPath(path)) map.delete(path);
  // Files over the cap are refused before any is read, except those the repository changed too:
  // that conflict is the user's to choose, and choosing the repository's side pushes nothing.
  assertFilesFit(
    store.limits,
    [...local].filter(([path]) => !remote.has(path)),
  );

  // Paths changed on both sides: the same content on both is no conflict.
  const conflicts: string[] = [];
  const localOids = new Map<string, string | null>();
  for (const [path, file] of local) {
    // An oversized file the repository changed too cannot be equal to it (the fetch refuses objects over the cap).
    const oversized = file !== null && file.size > store.limits.fileBytes;
    const oid = file && !oversized ? await gitOidOf(deps, file) : null;
    localOids.set(path, oid);
    if (!remote.has(path)) continue;
    const theirs = remote.get(path)?.oid ?? null;
    if (!oversized && theirs === oid) {
      remote.delete(path);
      local.delete(path);
    } else conflicts.push(path);
  }
  conflicts.sort();
  const initial = conn.lastCommit === null && conn.initialDirection !== null;
  const unresolved = conflicts.filter((p) => !choiceOf(choices, p) && !(initial && conn.initialDirection));
  if (unresolved.length) {
    return {
      state: "conflict",
      pulled: remote.size,
      pushed: local.size,
      conflicts: unresolved,
      commit: conn.lastCommit,
      version: conn.lastVersion ?? 0,
      traffic: store.traffic,
    };
  }
  for (const path of conflicts) {
    // The first sync takes the chosen direction's side; later ones the user's choice.
    const side: Side = choiceOf(choices, path) ?? (conn.initialDirection === "import" ? "repository" : "bucket");
    if (side === "bucket") remote.delete(path);
    else local.delete(path);
  }
  // The conflicts settled for the bucket's side are the only files not checked above.
  assertFilesFit(
    store.limits,
    conflicts.filter((path) => local.has(path)).map((path) => [path, local.get(path)!] as [string, BucketFile]),
  );
  assertPushFits(store.limits, local);

  // Whatever can fail runs before the bucket is written: the repository's files are read and
  // checked, the bucket's changes pushed, and only then the pull committed (D237). A failed
  // push leaves the bucket as it was.
  const pull = await preparePull(deps, conn, store, remote, head);
  let commit = head;
  if (local.size) commit = await pushFromBucket(deps, conn, store, access, local, localOids, headTree, head, bucket.title, currentVersion);
  const pulledVersion = pull ? commitPull(deps, conn, pull, currentVersion) : null;
  let version = currentVersion;
  if (pulledVersion !== null) version = pulledVersion === currentVersion + 1 ? pulledVersion : currentVersion;
  return { state: "in_sync", pulled: remote.size, pushed: local.size, conflicts: [], commit, version, traffic: store.traffic };
}

/**
 * The repository's changes when the store no longer holds the last synced commit (restored from
 * a backup, which keeps no git stores, or removed by hand): the bucket at the last synced
 * version is what that commit held (every sync that ends in_sync leaves both sides equal, mail
 * aside), so the head is compared with it, a file by its git blob id. Reads each file of that
 * version once; without it every repository file looked changed (a false conflict at each path
 * the bucket changed since) and the repository's deletions never reached the bucket.
 */
async function diffAgainstLastVersion(deps: Deps, store: GitStore, conn: ConnectionRow, headTree: string | null): Promise<Map<string, TreeEntry | null>> {
  deps.log.info("git sync: the object store lacks the last synced commit; comparing with the bucket's last synced version", { connection: conn.id });
  const head = await diffTrees(store, null, headTree);
  const out = new Map<string, TreeEntry | null>();
  const base = new Set<string>();
  for (const entry of snapshotAt(conn.bucketId, conn.lastVersion ?? 0, deps.db)) {
    if (isMailPath(entry.path)) continue;
    base.add(entry.path);
    const theirs = head.get(entry.path);
    if (!theirs) out.set(entry.path, null);
    else if (theirs.oid !== (await gitOidOf(deps, entry.blob))) out.set(entry.path, theirs);
  }
  for (const [path, entry] of head) if (!base.has(path)) out.set(path, entry);
  return out;
}

interface PreparedPull {
  changes: Change[];
  comment: string;
}

/** The repository's changes read, checked and their blobs stored; nothing of the bucket written yet. */
async function preparePull(
  deps: Deps,
  conn: ConnectionRow,
  store: GitStore,
  remote: Map<string, TreeEntry | null>,
  head: string | null,
): Promise<PreparedPull | null> {
  if (!remote.size) return null;
  const refused: { path: string; reason: string }[] = [];
  const changes: Change[] = [];
  // Each object passed the pack check when it was fetched; one blob at many paths counts per path,
  // against a budget of its own (the pack check's count stays apart).
  const budget = { ...store.limits, inflated: 0 };
  for (const [path, entry] of remote) {
    try {
      const normalized = normalizePath(path);
      if (normalized !== path) throw new ApiError("VALIDATION_FAILED", "the path is not in normal form (NFC)");
      if (!entry) {
        changes.push({ path, blob: null });
        continue;
      }
      const contentType = guessContentType(path);
      assertAllowedFile(path, contentType);
      const bytes = await readBlob(store, entry.oid);
      charge(budget, bytes.length, path);
      assertNotExecutable(bytes, path);
      const info = await deps.blobs.putBytes(bytes);
      changes.push({ path, blob: { sha256: info.sha256, size: info.size, md5: info.md5, contentType } });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      refused.push({ path, reason: e.message });
    }
  }
  if (refused.length) {
    // Nothing is taken in while any file is refused: the bucket keeps its last good state.
    throw new SyncFailure(
      "refused_files",
      `The repository holds ${refused.length} file(s) a bucket refuses (${refused
        .slice(0, 5)
        .map((r) => r.path)
        .join(", ")}); remove them from the branch and push again.`,
      { paths: refused.slice(0, 100) },
    );
  }
  const subject = head ? await commitMessage(store, head) : "";
  const comment = `Git sync from ${conn.branch} @ ${head?.slice(0, 12) ?? "(empty)"}${subject ? `: ${subject}` : ""}`.slice(0, 500);
  return { changes, comment };
}

/** The prepared pull as one bucket version; its number (null when nothing changed). */
function commitPull(deps: Deps, conn: ConnectionRow, { changes, comment }: PreparedPull, readAt: number): number | null {
  try {
    return transaction(deps.db, (tx) => {
      // The comparison read the bucket at version readAt, then awaited git; a path written since
      // (a user's upload) would be overwritten unseen. Take nothing in then: the next sync
      // compares again and shows it as a conflict.
      const since = pathsChangedSince(deps, conn.bucketId, readAt);
      const raced = changes.filter((c) => since.has(c.path)).map((c) => c.path);
      if (raced.length)
        throw new SyncFailure(
          "bucket_changed",
          `The bucket changed during the sync at ${raced.length} path(s) coming from the repository (${raced.slice(0, 5).join(", ")}); nothing was taken in, the next sync compares again.`,
          { paths: raced.slice(0, 100) },
        );
      const r = commitChanges(deps, { kind: "system", name: "git-sync" }, conn.bucketId, changes, { kind: "write", comment }, tx);
      return r.version?.number ?? null;
    });
  } catch (e) {
    throw e instanceof ApiError ? new SyncFailure(e.code.toLowerCase(), e.message) : e;
  }
}

async function pushFromBucket(
  deps: Deps,
  conn: ConnectionRow,
  store: GitStore,
  access: RemoteAccess,
  local: Map<string, BucketFile>,
  localOids: Map<string, string | null>,
  headTree: string | null,
  head: string | null,
  title: string,
  version: number,
): Promise<string | null> {
  const changes = new Map<string, TreeEntry | null>();
  for (const [path, file] of local) {
    if (!file) {
      changes.set(path, null);
      continue;
    }
    const oid = await writeBlob(store, await bucketBytes(deps, file));
    if (oid !== localOids.get(path)) throw new Error("git object id mismatch");
    changes.set(path, { oid, mode: FILE_MODE });
  }
  const tree = await updateTree(store, headTree, changes);
  if (tree === headTree && head) return head;
  const paths = [...local.keys()].sort();
  const removed = paths.filter((p) => !local.get(p));
  const changed = paths.filter((p) => local.get(p));
  const subject =
    paths.length === 1 ? `${removed.length ? "Delete" : "Update"} ${paths[0]}` : `Update ${changed.length} file(s), delete ${removed.length} from Pier`;
  const body = [
    `From the Pier bucket "${title}" (version ${version}).`,
    "",
    ...changed.slice(0, 50).map((p) => `  changed: ${p}`),
    ...removed.slice(0, 50).map((p) => `  deleted: ${p}`),
    ...(paths.length > 100 ? [`  ... and ${paths.length - 100} more`] : []),
  ].join("\n");
  const host = new URL(deps.urls.baseUrl).hostname || "localhost";
  return commitAndPush(store, access, {
    tree,
    parent: head,
    message: `${subject.slice(0, 72)}\n\n${body}\n`,
    author: { name: "Pier", email: `git-sync@${host}` },
    now: deps.clock.now(),
  });
}

export { SyncFailure, asSyncFailure };
