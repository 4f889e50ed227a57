// Connecting a bucket to a repository through the GitHub App: an existing repository that a
// linked installation grants, or a new private one created for an export. The git side is then
// the same as for any host: HTTPS with an installation token (minted per sync, never stored).
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { newId, randomToken } from "../../core/ids";
import { gitSyncConnections } from "../../db/schema";
import { transaction } from "../../db/tx";
import { loadBucket, loadMutableBucket, type BucketRow } from "../buckets";
import { createOrgRepository, GithubError, installationFailure, installationRepositories, installationRepository, type GithubRepository } from "./github-app";
import { accountInstallation, accountInstallations, allowRepository, configuredApp, type InstallationRow } from "./github-setup";
import { createUserRepository } from "./github-user";
import { settingsUrl } from "./present";
import { SyncFailure } from "./remote";
import { assertEligible, checkBranch, checkRepositoryUrl, startFirstSync } from "./service";
import { connectionOf, sealSecret, updateConnection, type ConnectionRow } from "./store";

const REPOSITORY_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/;

export interface GithubConnectInput {
  direction: "import" | "export";
  repository: string;
  branch?: string;
  installation_id?: number;
}

export interface GithubExportInput {
  owner?: string;
  name?: string;
  branch?: string;
  installation_id?: number;
}

/** A GitHub failure as an API error (the route answers it; nothing was changed). */
function apiErrorOf(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const f = e instanceof SyncFailure ? e : installationFailure(e);
  if (f.code === "installation_revoked" || f.code === "installation_suspended") return new ApiError("GITHUB_INSTALLATION_REQUIRED", f.message);
  return new ApiError("GITHUB_UNAVAILABLE", undefined, { reason: f.message });
}

/** The linked, active installation to use: the one named, or the one on the repository's owner. */
function pickInstallation(deps: Deps, bucket: BucketRow, owner: string | null, installationId?: number): InstallationRow {
  const active = accountInstallations(deps, bucket.accountId).filter((i) => i.state === "active");
  const found =
    installationId !== undefined
      ? active.find((i) => i.installationId === installationId)
      : owner
        ? active.find((i) => i.targetLogin.toLowerCase() === owner.toLowerCase())
        : active.length === 1
          ? active[0]
          : undefined;
  if (!found)
    throw new ApiError("GITHUB_INSTALLATION_REQUIRED", undefined, {
      installations: active.map((i) => ({ installation_id: i.installationId, account_login: i.targetLogin })),
    });
  return found;
}

/** Connect an existing repository the app can reach, with a first direction; the first sync is queued. */
export async function connectGithub(deps: Deps, actor: Actor, bucketId: string, input: GithubConnectInput): Promise<ConnectionRow> {
  configuredApp(deps);
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_admin" });
  assertEligible(deps, bucket);
  const fullName = input.repository.trim();
  if (!REPOSITORY_NAME.test(fullName)) throw new ApiError("VALIDATION_FAILED", "Name the repository as owner/name.", { field: "repository" });
  const installation = pickInstallation(deps, bucket, fullName.split("/")[0]!, input.installation_id);
  // The same answer whether the installation lacks the repository or the GitHub user who linked
  // it cannot see it: a member learns nothing about repositories hidden from them.
  const notGranted = () =>
    new ApiError(
      "GITHUB_INSTALLATION_REQUIRED",
      `The app's installation on ${installation.targetLogin} does not grant ${fullName} to you (or it does not exist); if it was granted since, link the installation again on the Git page.`,
      { field: "repository" },
    );
  let repo: GithubRepository;
  try {
    repo = await installationRepository(deps, installation.installationId, fullName);
  } catch (e) {
    if (e instanceof GithubError && e.status === 404) throw notGranted();
    throw apiErrorOf(e);
  }
  if (!installation.visibleRepositoryIds?.includes(repo.id)) throw notGranted();
  const branch = checkBranch(input.branch || repo.default_branch);
  return saveAndStart(deps, bucket, installation, repo, branch, input.direction);
}

/**
 * Export to a new private repository named after the bucket. In an organization the installation
 * token creates it (POST /orgs/{org}/repos); in a personal account, which installation tokens
 * cannot create repositories in, the account owner's kept authorization does (POST /user/repos,
 * github-user.ts). Either way nothing is created unless every check before it passed.
 */
export async function exportGithub(deps: Deps, actor: Actor, bucketId: string, input: GithubExportInput): Promise<ConnectionRow> {
  configuredApp(deps);
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_admin" });
  assertEligible(deps, bucket);
  const existing = connectionOf(deps, bucket.id);
  if (existing && existing.state !== "not_connected") throw new ApiError("GIT_SYNC_ALREADY_CONNECTED");
  const installation = pickInstallation(deps, bucket, input.owner?.trim() || null, input.installation_id);
  const name = (input.name?.trim() || repositoryNameFor(bucket.title)).slice(0, 100);
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(name) || name === "." || name === "..")
    throw new ApiError("VALIDATION_FAILED", "A repository name uses letters, digits, '.', '-' and '_' only.", { field: "name" });
  const branch = checkBranch(input.branch || "main");
  let repo: GithubRepository;
  try {
    repo =
      installation.targetType === "Organization"
        ? await createOrgRepository(deps, installation.installationId, installation.targetLogin, name)
        : await createUserRepository(deps, installation, name, settingsUrl(deps, bucket.id));
  } catch (e) {
    if (e instanceof GithubError && e.status === 422)
      throw new ApiError("VALIDATION_FAILED", `GitHub refused the name ${installation.targetLogin}/${name} (it may exist already).`, { field: "name" });
    if (e instanceof GithubError && e.status === 403)
      throw new ApiError(
        "GITHUB_REPOSITORY_CREATE_UNAVAILABLE",
        `The app may not create repositories in ${installation.targetLogin} (the operator's GitHub App needs the Administration: write repository permission).`,
        { account_login: installation.targetLogin },
      );
    throw apiErrorOf(e);
  }
  // Created by Pier for this account: connectable (again, after a disconnect) by its members.
  allowRepository(deps, bucket.accountId, installation.installationId, repo.id);
  return saveAndStart(deps, bucket, installation, repo, branch, "export");
}

/** A repository name from a bucket title: "My Site!" -> "my-site". */
export function repositoryNameFor(title: string): string {
  const slug = title
    .normalize("NFKD")
    .replace(/[^\w.-]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "")
    .toLowerCase()
    .slice(0, 100);
  return slug || "pier-bucket";
}

function saveAndStart(
  deps: Deps,
  bucket: BucketRow,
  installation: InstallationRow,
  repo: GithubRepository,
  branch: string,
  direction: "import" | "export",
): ConnectionRow {
  // The clone URL comes from GitHub; the same rules as a typed URL apply (https, or http when allowed).
  const url = checkRepositoryUrl(deps, repo.clone_url);
  const now = deps.clock.now().toISOString();
  return transaction(deps.db, (tx) => {
    const existing = connectionOf(deps, bucket.id, tx);
    if (existing && existing.state !== "not_connected") throw new ApiError("GIT_SYNC_ALREADY_CONNECTED");
    const github = {
      provider: "github" as const,
      repositoryUrl: url,
      branch,
      username: "",
      credentialSealed: null,
      githubInstallationId: installation.installationId,
      githubRepositoryId: repo.id,
      githubRepository: repo.full_name,
    };
    const id = newId("gsc");
    const row = existing
      ? updateConnection(deps, existing.id, github, tx)!
      : tx
          .insert(gitSyncConnections)
          .values({
            id,
            bucketId: bucket.id,
            accountId: bucket.accountId,
            ...github,
            // Unused for GitHub (the app's webhook secret signs its deliveries) but never empty.
            webhookSecretSealed: sealSecret(deps, id, randomToken(32)),
            state: "not_connected",
            pollIntervalMs: deps.config.gitPollInterval * 1000,
            createdAt: now,
            updatedAt: now,
          })
          .returning()
          .get();
    return startFirstSync(deps, bucket, row, direction, tx);
  });
}

/** The setup lists: linked installations and the repositories each grants (asked of GitHub now). */
export async function githubSetupLists(deps: Deps, actor: Actor, bucketId: string) {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_read");
  const installations = accountInstallations(deps, bucket.accountId);
  const repositories: { installation_id: number; full_name: string; private: boolean; default_branch: string }[] = [];
  const shown = [];
  for (const i of installations) {
    let error: string | null = null;
    if (i.state === "active") {
      try {
        for (const r of await installationRepositories(deps, i.installationId))
          if (i.visibleRepositoryIds?.includes(r.id))
            repositories.push({ installation_id: i.installationId, full_name: r.full_name, private: r.private, default_branch: r.default_branch });
      } catch (e) {
        error = (e instanceof SyncFailure ? e : installationFailure(e)).message;
      }
    }
    shown.push({ installation_id: i.installationId, account_login: i.targetLogin, account_type: i.targetType, state: i.state, ...(error ? { error } : {}) });
  }
  return { bucket, installations: shown, repositories };
}

export { accountInstallation };
