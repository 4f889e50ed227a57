// The git side of a sync, inside the binary (isomorphic-git, no system git): fetch a branch into
// the connection's own object store under the data dir, compare trees, build a commit on top of
// the remote head and push it. Every request to the remote is bounded in time and in bytes, so
// a hanging or enormous remote ends as a clear error instead of a stuck job.
import * as fs from "node:fs";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import type { GitAuth, HttpClient } from "isomorphic-git";
import type { Deps } from "../../core/context";
import { recoverStore, storePath } from "./compact";
import { isoGit } from "./iso-git";
import { SyncFailure } from "./failure";
import { boundedHttp } from "./http-client";
import { syncLimits, visitPath, type SyncLimits } from "./limits";

export { SyncFailure };

export interface RemoteAccess {
  url: string;
  branch: string;
  username: string;
  password: string | null;
  /** The host comes from the operator's configuration (the GitHub App's), not from a user. */
  operatorHost?: boolean;
}

export interface Traffic {
  sent: number;
  received: number;
}

export interface GitStore {
  gitdir: string;
  http: HttpClient;
  onAuth: () => GitAuth;
  traffic: Traffic;
  /** What this sync may unpack (files, total); the fetched pack is checked against it. */
  limits: SyncLimits;
  /** isomorphic-git's parsed-packfile cache for this sync (without it every read re-parses the pack index). */
  cache: object;
}

export function openStore(deps: Deps, connectionId: string, access: RemoteAccess, traffic: Traffic = { sent: 0, received: 0 }): GitStore {
  const gitdir = storePath(deps, connectionId);
  recoverStore(gitdir);
  fs.mkdirSync(gitdir, { recursive: true, mode: 0o700 });
  // `tls.ca` replaces the trusted roots: keep the usual ones beside the private CA, so remotes with
  // public certificates (GitHub, GitLab.com) still verify on an instance that sets --git-ca-root.
  const ca = deps.config.gitCaRoot ? [...rootCertificates, fs.readFileSync(deps.config.gitCaRoot, "utf8")] : null;
  const limits = syncLimits(deps);
  const publicOnly = deps.config.gitAllowPrivateNetwork !== "on" && !access.operatorHost;
  const http = boundedHttp({ timeoutMs: deps.config.gitTimeout * 1000, ca, traffic, limits, publicOnly, lookup: deps.gitLookup });
  // Basic auth; a token-only credential goes in the password (GitHub, Gitea and GitLab accept any user name then).
  const onAuth = (): GitAuth => (access.password ? { username: access.username || "pier", password: access.password } : {});
  return { gitdir, http, onAuth, traffic, limits, cache: {} };
}

export function removeStore(deps: Deps, connectionId: string): void {
  fs.rmSync(storePath(deps, connectionId), { recursive: true, force: true });
}

/**
 * Translate what isomorphic-git throws into a SyncFailure a user can act on. Its messages quote
 * what the remote answered (a page's body when the URL is not a git server), so only its error
 * code goes into the message: a user's URL must not turn Pier into a reader of internal pages.
 */
export function asSyncFailure(e: unknown): SyncFailure {
  if (e instanceof SyncFailure) return e;
  const err = e as { code?: string; data?: { statusCode?: number }; message?: string };
  const status = err?.data?.statusCode;
  // UserCanceledError: onAuthFailure cancels instead of retrying the refused credential.
  if (status === 401 || status === 403 || err?.code === "UserCanceledError")
    return new SyncFailure("auth_failed", "The git server refused the saved credential (revoked or without access); save a new one on the bucket's Git page.");
  if (status === 404) return new SyncFailure("repository_not_found", "The repository was not found (deleted, renamed, or not visible to the credential).");
  if (err?.code === "PushRejectedError") return new SyncFailure("push_rejected", "The branch moved while Pier pushed; the next sync tries again.");
  if (err?.code === "HttpError")
    return new SyncFailure("remote_error", `The git server answered HTTP ${Number(status) || "with an error"}; the next sync tries again.`);
  if (err?.code === "SmartHttpError" || err?.code === "ParseError" || err?.code === "EmptyServerResponseError")
    return new SyncFailure("not_a_git_repository", "The URL did not answer as a git repository; check the repository URL (it usually ends in .git).");
  const code = typeof err?.code === "string" && /^[A-Za-z]{1,60}$/.test(err.code) ? ` (${err.code})` : "";
  return new SyncFailure("git_error", `Git sync failed${code}.`);
}

/** The branch head on the remote, or null for an empty repository / missing branch. */
export async function fetchBranch(store: GitStore, access: RemoteAccess, shallow: boolean): Promise<string | null> {
  const git = await isoGit();
  try {
    if (!fs.existsSync(join(store.gitdir, "config"))) await git.init({ fs, gitdir: store.gitdir, bare: true, defaultBranch: "pier-internal" });
    await git.setConfig({ fs, gitdir: store.gitdir, path: "remote.origin.url", value: access.url });
    await git.setConfig({ fs, gitdir: store.gitdir, path: "remote.origin.fetch", value: `+refs/heads/${access.branch}:refs/remotes/origin/${access.branch}` });
    const info = await git.getRemoteInfo2({
      http: store.http,
      url: access.url,
      protocolVersion: 1,
      onAuth: store.onAuth,
      onAuthFailure: () => ({ cancel: true }),
    });
    const head = (info.refs ?? []).find((r) => r.ref === `refs/heads/${access.branch}`);
    const thinPack = info.capabilities?.["thin-pack"] === true;
    if (!head) return null;
    if (await hasObject(store, head.oid)) {
      await rememberHead(store, access, head.oid);
      return head.oid;
    }
    const r = await git.fetch({
      fs,
      cache: store.cache,
      http: store.http,
      gitdir: store.gitdir,
      url: access.url,
      remote: "origin",
      ref: access.branch,
      remoteRef: access.branch,
      singleBranch: true,
      tags: false,
      // Only the tip: a sync compares the last synced tree (already here) with the tip's, so
      // the commits in between are never read. Fetching them brought every version of a file
      // changed many times since the last sync, each counted against the repository cap (and
      // resolved, and partly held, by isomorphic-git while it indexes the pack). A later fetch
      // is shallow only with a thin pack (boundedHttp asks for one): without it, the server
      // would send the tip's whole tree again (D250).
      ...(shallow || thinPack ? { depth: 1 } : {}),
      onAuth: store.onAuth,
      onAuthFailure: () => ({ cancel: true }),
    });
    const fetched = r.fetchHead ?? head.oid;
    await rememberHead(store, access, fetched);
    return fetched;
  } catch (e) {
    throw asSyncFailure(e);
  }
}

/**
 * Keep refs/heads/<branch> at the newest commit known on the remote: isomorphic-git offers the
 * fetched ref's local namesake as "have", so the next fetch brings only new objects instead of
 * the whole tree again.
 */
async function rememberHead(store: GitStore, access: RemoteAccess, oid: string): Promise<void> {
  const git = await isoGit();
  await git.writeRef({ fs, gitdir: store.gitdir, ref: `refs/heads/${access.branch}`, value: oid, force: true });
}

async function hasObject(store: GitStore, oid: string): Promise<boolean> {
  const git = await isoGit();
  try {
    await git.readObject({ fs, cache: store.cache, gitdir: store.gitdir, oid, format: "deflated" });
    return true;
  } catch {
    return false;
  }
}

export interface TreeEntry {
  oid: string;
  mode: string;
}

/** path -> new entry (null: removed) between two trees; equal subtrees are skipped unread (O(changed)). */
export async function diffTrees(store: GitStore, from: string | null, to: string | null, prefix = "", out = new Map<string, TreeEntry | null>()) {
  if (from === to) return out;
  const [a, b] = await Promise.all([readTreeMap(store, from), readTreeMap(store, to)]).catch((e) => {
    throw unsafePathFailure(e, prefix);
  });
  for (const [name, eb] of b) {
    const ea = a.get(name);
    if (ea && ea.oid === eb.oid) continue;
    visitPath(store.limits);
    const path = prefix + name;
    if (eb.type === "tree") await diffTrees(store, ea?.type === "tree" ? ea.oid : null, eb.oid, `${path}/`, out);
    else if (eb.type === "blob") out.set(path, { oid: eb.oid, mode: eb.mode });
    // Submodules (commit entries) have no bytes here: a bucket cannot hold them.
    if (ea && ea.type !== eb.type) {
      if (ea.type === "tree") await diffTrees(store, ea.oid, null, `${path}/`, out);
      else if (ea.type === "blob" && eb.type !== "blob") out.set(path, null);
    }
  }
  for (const [name, ea] of a) {
    if (b.has(name)) continue;
    visitPath(store.limits);
    const path = prefix + name;
    if (ea.type === "tree") await diffTrees(store, ea.oid, null, `${path}/`, out);
    else if (ea.type === "blob") out.set(path, null);
  }
  return out;
}

/**
 * isomorphic-git refuses a whole tree holding a name git itself forbids in a checkout (a
 * backslash, "..", ".git" and its NTFS/HFS aliases): a path a bucket cannot hold either, so it is
 * reported like the other refused files rather than as a generic git error.
 */
function unsafePathFailure(e: unknown, prefix: string): unknown {
  const err = e as { code?: string; data?: { filepath?: string } };
  if (err?.code !== "UnsafeFilepathError") return e;
  const path = `${prefix}${err.data?.filepath ?? ""}`;
  return new SyncFailure("refused_files", `The repository holds a path a bucket refuses (${path}); remove it from the branch and push again.`, {
    paths: [{ path, reason: "git refuses this name in a checkout (backslash, '..', '.git' or an alias of it)" }],
  });
}

type RawEntry = { oid: string; mode: string; type: "blob" | "tree" | "commit" };

async function readTreeMap(store: GitStore, oid: string | null): Promise<Map<string, RawEntry>> {
  const git = await isoGit();
  const m = new Map<string, RawEntry>();
  if (!oid) return m;
  const { tree } = await git.readTree({ fs, cache: store.cache, gitdir: store.gitdir, oid });
  for (const e of tree) m.set(e.path, { oid: e.oid, mode: e.mode, type: e.type });
  return m;
}

export async function treeOf(store: GitStore, commit: string | null): Promise<string | null> {
  const git = await isoGit();
  if (!commit) return null;
  const { commit: c } = await git.readCommit({ fs, cache: store.cache, gitdir: store.gitdir, oid: commit });
  return c.tree;
}

/** The entry at a path in a tree (null when absent). */
export async function entryAt(store: GitStore, tree: string | null, path: string): Promise<TreeEntry | null> {
  let current = tree;
  const parts = path.split("/");
  for (let i = 0; i < parts.length; i++) {
    if (!current) return null;
    const m = await readTreeMap(store, current);
    const e = m.get(parts[i]!);
    if (!e) return null;
    if (i === parts.length - 1) return e.type === "blob" ? { oid: e.oid, mode: e.mode } : null;
    current = e.type === "tree" ? e.oid : null;
  }
  return null;
}

export async function readBlob(store: GitStore, oid: string): Promise<Uint8Array> {
  const git = await isoGit();
  return (await git.readBlob({ fs, cache: store.cache, gitdir: store.gitdir, oid })).blob;
}

export async function writeBlob(store: GitStore, bytes: Uint8Array): Promise<string> {
  const git = await isoGit();
  return git.writeBlob({ fs, gitdir: store.gitdir, blob: bytes });
}

/** A new tree: `base` with the changes applied; only the directories on changed paths are rewritten. */
export async function updateTree(store: GitStore, base: string | null, changes: Map<string, TreeEntry | null>): Promise<string | null> {
  const git = await isoGit();
  const entries = await readTreeMap(store, base);
  const byDir = new Map<string, Map<string, TreeEntry | null>>();
  for (const [path, entry] of changes) {
    const slash = path.indexOf("/");
    if (slash < 0) {
      if (entry) entries.set(path, { oid: entry.oid, mode: entry.mode, type: "blob" });
      else entries.delete(path);
    } else {
      const dir = path.slice(0, slash);
      if (!byDir.has(dir)) byDir.set(dir, new Map());
      byDir.get(dir)!.set(path.slice(slash + 1), entry);
    }
  }
  for (const [dir, sub] of byDir) {
    const existing = entries.get(dir);
    const oid = await updateTree(store, existing?.type === "tree" ? existing.oid : null, sub);
    if (oid) entries.set(dir, { oid, mode: "040000", type: "tree" });
    else entries.delete(dir);
  }
  if (entries.size === 0) return null;
  const tree = [...entries].map(([path, e]) => ({ path, oid: e.oid, mode: e.mode, type: e.type }));
  return git.writeTree({ fs, gitdir: store.gitdir, tree });
}

export async function commitAndPush(
  store: GitStore,
  access: RemoteAccess,
  input: { tree: string | null; parent: string | null; message: string; author: { name: string; email: string }; now: Date },
): Promise<string> {
  const git = await isoGit();
  const tree = input.tree ?? (await git.writeTree({ fs, gitdir: store.gitdir, tree: [] }));
  const timestamp = Math.floor(input.now.getTime() / 1000);
  const oid = await git.commit({
    fs,
    gitdir: store.gitdir,
    message: input.message,
    tree,
    parent: input.parent ? [input.parent] : [],
    author: { ...input.author, timestamp, timezoneOffset: 0 },
    ref: "refs/pier/sync",
  });
  try {
    const r = await git.push({
      fs,
      cache: store.cache,
      http: store.http,
      gitdir: store.gitdir,
      url: access.url,
      ref: "refs/pier/sync",
      remoteRef: `refs/heads/${access.branch}`,
      onAuth: store.onAuth,
      onAuthFailure: () => ({ cancel: true }),
    });
    const result = r.refs?.[`refs/heads/${access.branch}`];
    if (!r.ok || (result && !result.ok))
      throw new SyncFailure(
        "push_rejected",
        "The git server refused the push (a protected branch, a server hook, or the branch moved); the next sync tries again.",
      );
    await rememberHead(store, access, oid);
  } catch (e) {
    throw asSyncFailure(e);
  }
  return oid;
}

export async function commitMessage(store: GitStore, oid: string): Promise<string> {
  const git = await isoGit();
  try {
    const { commit } = await git.readCommit({ fs, cache: store.cache, gitdir: store.gitdir, oid });
    return commit.message.split("\n")[0]!.slice(0, 200);
  } catch {
    return "";
  }
}
