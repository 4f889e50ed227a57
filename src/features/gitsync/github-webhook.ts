// The GitHub App's one webhook: every delivery is signed with the app's webhook secret exactly
// as GitHub signs (X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>) and checked in
// constant time before its body is even parsed. A push queues a sync of the connections on that
// repository and branch (the sync reads the branch itself; the body is trusted for routing only).
// An uninstalled or suspended installation, or a repository taken away from it, puts its
// connections into a clear error state; nothing is deleted on either side. A user's revoked
// authorization of the app forgets what Pier kept of it.
// https://docs.github.com/en/webhooks/webhook-events-and-payloads
import { createHmac } from "node:crypto";
import { and, eq } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { safeEqual } from "../../core/crypto";
import { ApiError } from "../../core/errors";
import { gitSyncConnections } from "../../db/schema";
import { forgetInstallationToken, githubApp } from "./github-app";
import { setInstallationState } from "./github-setup";
import { forgetUserAuthorizations } from "./github-user";
import { enqueueSync } from "./service";
import { updateConnection, type ConnectionRow } from "./store";

interface Delivery {
  action?: string;
  ref?: string;
  installation?: { id?: number; account?: { id?: number; type?: string } };
  repository?: { id?: number; full_name?: string };
  repositories_removed?: { id?: number }[];
  repositories_added?: { id?: number }[];
  sender?: { id?: number };
}

/** 10 minutes: long enough that a later sync attempt does not hide the reason before someone reads it. */
const ERROR_RETRY_MS = 10 * 60_000;

export function receiveGithubWebhook(deps: Deps, raw: Uint8Array, signature: string | null, event: string | null): { event: string; connections: number } {
  const app = githubApp(deps);
  if (!app) throw new ApiError("GITHUB_NOT_CONFIGURED");
  const expected = `sha256=${createHmac("sha256", app.webhookSecret).update(raw).digest("hex")}`;
  if (!signature || !safeEqual(expected, signature)) throw new ApiError("GIT_WEBHOOK_SIGNATURE_INVALID");
  let body: Delivery;
  try {
    body = JSON.parse(new TextDecoder().decode(raw)) as Delivery;
  } catch {
    throw new ApiError("BAD_REQUEST", "The delivery is not JSON (set the app's webhook content type to application/json).");
  }
  const installationId = Number(body.installation?.id ?? 0);
  const kind = event ?? "";
  const onInstallation = (): ConnectionRow[] =>
    installationId
      ? deps.db
          .select()
          .from(gitSyncConnections)
          .where(and(eq(gitSyncConnections.provider, "github"), eq(gitSyncConnections.githubInstallationId, installationId)))
          .all()
          .filter((c) => c.state !== "not_connected")
      : [];
  let touched: ConnectionRow[] = [];

  if (kind === "push") {
    const repoId = Number(body.repository?.id ?? 0);
    const branch = body.ref?.startsWith("refs/heads/") ? body.ref.slice("refs/heads/".length) : null;
    touched = onInstallation().filter((c) => c.githubRepositoryId === repoId && c.branch === branch);
    for (const c of touched) enqueueSync(deps, c, {});
  } else if (kind === "installation" && installationId) {
    if (body.action === "deleted" || body.action === "suspend") {
      const deleted = body.action === "deleted";
      setInstallationState(deps, installationId, deleted ? "deleted" : "suspended");
      forgetInstallationToken(deps, installationId);
      // Uninstalled from a personal account: the owner's kept authorization has no use left.
      if (deleted && body.installation?.account?.type === "User" && body.installation.account.id)
        forgetUserAuthorizations(deps, Number(body.installation.account.id));
      touched = onInstallation();
      stop(
        deps,
        touched,
        deleted ? "installation_revoked" : "installation_suspended",
        deleted
          ? "The GitHub App was uninstalled from the repository's account; nothing was deleted. Install it again from the bucket's Git page, or disconnect."
          : "The GitHub App's installation was suspended; syncing resumes when it is unsuspended.",
      );
    } else if (body.action === "unsuspend") {
      setInstallationState(deps, installationId, "active");
      touched = onInstallation();
      for (const c of touched) enqueueSync(deps, c, {});
    }
  } else if (kind === "installation_repositories" && installationId) {
    const removed = new Set((body.repositories_removed ?? []).map((r) => Number(r.id)));
    const added = new Set((body.repositories_added ?? []).map((r) => Number(r.id)));
    const all = onInstallation();
    const lost = all.filter((c) => removed.has(c.githubRepositoryId ?? -1));
    stop(
      deps,
      lost,
      "repository_access_removed",
      "The repository was removed from the GitHub App's installation; nothing was deleted. Grant the app access to it again, or disconnect.",
    );
    forgetInstallationToken(deps, installationId);
    const regained = all.filter((c) => added.has(c.githubRepositoryId ?? -1));
    for (const c of regained) enqueueSync(deps, c, {});
    touched = [...lost, ...regained];
  } else if (kind === "github_app_authorization" && body.action === "revoked") {
    // The user revoked the app on GitHub: their kept authorization is useless now; forget it.
    const userId = Number(body.sender?.id ?? 0);
    if (userId) forgetUserAuthorizations(deps, userId);
  } else if (kind === "repository" && body.action === "deleted") {
    const repoId = Number(body.repository?.id ?? 0);
    touched = onInstallation().filter((c) => c.githubRepositoryId === repoId);
    stop(deps, touched, "repository_deleted", "The repository was deleted on GitHub; the bucket keeps its files and versions. Disconnect, or export again.");
  }
  return { event: kind, connections: touched.length };
}

function stop(deps: Deps, conns: ConnectionRow[], code: string, message: string): void {
  if (!conns.length) return;
  const now = deps.clock.now();
  for (const c of conns)
    updateConnection(deps, c.id, {
      state: "error",
      lastError: { code, message, at: now.toISOString() },
      nextPollAt: new Date(now.getTime() + ERROR_RETRY_MS).toISOString(),
    });
}
