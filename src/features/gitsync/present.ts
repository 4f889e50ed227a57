// github_sync and github_sync_setup as bucket reads and the git sync endpoints show them.
// Secrets never appear here: not the credential, not the webhook secret.
import type { Deps } from "../../core/context";
import type { BucketRow } from "../buckets";
import { eligibility, webhookUrl } from "./service";
import { connectionOf, type ConnectionRow } from "./store";
import { githubApp } from "./github-app";
import { accountInstallations } from "./github-setup";

export const settingsUrl = (deps: Deps, bucketId: string) => `${deps.urls.baseUrl}/dashboard/buckets/${bucketId}/git`;

export function presentSync(deps: Deps, conn: ConnectionRow | null | undefined) {
  if (!conn || conn.state === "not_connected") return null;
  return {
    id: conn.id,
    provider: conn.provider,
    repository_url: conn.repositoryUrl,
    branch: conn.branch,
    state: conn.state,
    initial_direction: conn.initialDirection,
    auto_publish: conn.autoPublish,
    last_sync_at: conn.lastSyncAt,
    last_check_at: conn.lastCheckAt,
    last_commit: conn.lastCommit,
    last_synced_version: conn.lastVersion,
    error: conn.lastError ?? null,
    conflicts: conn.conflicts,
    ahead: conn.ahead,
    behind: conn.behind,
    next_check_at: conn.nextPollAt,
    credential_saved: conn.credentialSealed !== null,
    github: conn.provider === "github" ? { installation_id: conn.githubInstallationId, repository: conn.githubRepository } : null,
    webhook_url: webhookUrl(deps, conn),
    created_at: conn.createdAt,
    updated_at: conn.updatedAt,
  };
}

export function presentSetup(
  deps: Deps,
  bucket: BucketRow,
  saved: ConnectionRow | null | undefined = connectionOf(deps, bucket.id),
  lists?: { installations: unknown[]; repositories: unknown[] },
) {
  const e = eligibility(deps, bucket);
  const app = githubApp(deps);
  // Bucket reads list the linked installations from Pier's own records; the setup endpoint asks GitHub for their repositories.
  const installations =
    lists?.installations ??
    (app
      ? accountInstallations(deps, bucket.accountId).map((i) => ({
          installation_id: i.installationId,
          account_login: i.targetLogin,
          account_type: i.targetType,
          state: i.state,
        }))
      : []);
  return {
    eligible: e.eligible,
    settings_url: settingsUrl(deps, bucket.id),
    ...(e.blocked_reason ? { blocked_reason: e.blocked_reason } : {}),
    providers: app ? ["git", "github"] : ["git"],
    github_app: app ? { slug: app.slug, web_url: app.webUrl } : null,
    saved_repository:
      saved && saved.provider === "git"
        ? { repository_url: saved.repositoryUrl, branch: saved.branch, username: saved.username || null, credential_saved: saved.credentialSealed !== null }
        : null,
    // GitHub App installations linked to the account, and the repositories they grant (setup endpoint only).
    installations,
    repositories: lists?.repositories ?? [],
  };
}

/** Both fields of a bucket read, in one lookup. */
export function bucketSyncFields(deps: Deps, bucket: BucketRow) {
  const conn = connectionOf(deps, bucket.id);
  return { github_sync: presentSync(deps, conn), github_sync_setup: presentSetup(deps, bucket, conn) };
}
