// A bucket's git sync (/dashboard/buckets/<id>/git): the one place where a repository's
// credential is entered (stored encrypted, never shown again), the first direction chosen, the
// sync state read, conflicts resolved path by path, "sync now", automatic republish and
// disconnect. Each form calls the git sync service the REST routes call.
import { createHash } from "node:crypto";
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { alertBox, html, shortTime } from "../../../http/pages/layout";
import { effectiveScope, getBucket } from "../../buckets";
import { connect, disconnect, getConnection, patchConnection, presentSetup, presentSync, requestSync, saveRepository, webhookSecretOf } from "../../gitsync";
import { fieldError, invalidAttrs, requireConfirmed } from "../forms";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { BUCKETS_PATH } from "./buckets-home";
import { githubPart, githubRoutes, type GithubTyped } from "./git-github";

const DONE: Record<string, string> = {
  connected: "Connected: the first sync is queued and runs in a moment.",
  queued: "Sync queued.",
  resolved: "Choices saved: the sync that applies them is queued.",
  credential: "New credential saved; the next sync uses it.",
  publish_on: "Automatic republish after a sync is on.",
  publish_off: "Automatic republish after a sync is off.",
  disconnected: "Disconnected: the bucket and the repository both stay as they are.",
  github_linked: "GitHub installation linked: its repositories are listed below.",
  github_requested: "Installation requested: an owner of the GitHub organization must approve it; then link it here.",
};

const STATE_TEXT: Record<string, string> = {
  pending: "waiting for the first sync",
  syncing: "syncing",
  in_sync: "in sync",
  conflict: "conflict: choose a side for each path below",
  error: "stopped by an error (retried automatically)",
};

const BLOCKED_TEXT: Record<string, string> = {
  feature_disabled: "The operator has turned git sync off on this instance.",
  account_capability_unavailable: "This account's plan does not include git sync.",
  bucket_archived: "The bucket is archived; unarchive it to connect a repository.",
};

/**
 * Conflicts the page lists one by one, each with its two choices; above this (a sync can hold up
 * to --git-max-files) it offers one side for all of them (D299). Choices are posted by position
 * (side_<i>), about 21 bytes each, so a page of them fits the 64 KiB form body whatever the paths.
 */
const CONFLICTS_ONE_BY_ONE = 1000;
/** Paths named on the page when there are too many to choose one by one. */
const CONFLICTS_NAMED = 100;

/** Names the conflict list a page showed: choices posted against another list (a sync ran since) are refused. */
const conflictsDigest = (paths: string[]) => createHash("sha256").update(JSON.stringify(paths)).digest("base64url");

const gitUrl = (id: string, query = "") => `${BUCKETS_PATH}/${encodeURIComponent(id)}/git${query}`;

interface Typed {
  repository_url: string;
  branch: string;
  username: string;
  direction: string;
}

async function gitView(
  shell: Shell,
  s: Session,
  bucketId: string,
  query: Record<string, string | undefined>,
  refused?: { error: ApiError; typed?: Typed; github?: GithubTyped },
) {
  const bucket = getBucket(shell.deps, s.actor, bucketId);
  const { connection } = getConnection(shell.deps, s.actor, bucket.id);
  const setup = presentSetup(shell.deps, bucket);
  const sync = presentSync(shell.deps, connection);
  const saved = setup.saved_repository;
  const typed: Typed = refused?.typed ?? {
    repository_url: saved?.repository_url ?? "",
    branch: saved?.branch ?? "main",
    username: saved?.username ?? "",
    direction: "import",
  };
  const field = (refused?.error.details as { field?: string } | undefined)?.field;
  // A GitHub form's refusal is placed in that form (githubPart), not in the repository form below.
  const formError = refused?.github ? undefined : refused?.error;
  const conflicts = sync?.conflicts ?? [];
  const github = await githubPart(
    shell,
    s,
    bucket.id,
    bucket.title,
    setup.eligible && !sync,
    refused?.github && { error: refused.error, typed: refused.github },
  );
  // The fields each GitHub form shows its errors at; any other refusal is the notice at the top.
  const githubFields = refused?.github?.form === "connect" ? ["repository", "branch"] : ["name", "branch"];
  const placed = field !== undefined && (!refused?.github || (github !== null && githubFields.includes(field)));
  return shell.render(s, {
    title: `Git · ${bucket.title}`,
    template: "dashboard/git.html",
    current: BUCKETS_PATH,
    error: refused?.error,
    vars: {
      notice: refused && !placed ? alertBox(refused.error.message) : alertBox(DONE[query.done ?? ""], "ok"),
      id: bucket.id,
      tabs: shell.bucketTabs(bucket.id, "git"),
      title: bucket.title,
      blocked: setup.eligible ? "" : (BLOCKED_TEXT[setup.blocked_reason ?? ""] ?? "Git sync is not available for this bucket."),
      canConnect: setup.eligible && !sync,
      connected: sync !== null,
      repositoryUrl: sync?.repository_url ?? "",
      branch: sync?.branch ?? "",
      state: sync ? (STATE_TEXT[sync.state] ?? sync.state) : "",
      lastSync: sync?.last_sync_at ? shortTime(sync.last_sync_at) : "not yet",
      nextCheck: sync?.next_check_at ? shortTime(sync.next_check_at) : "",
      lastError: sync?.error ? `${sync.error.message} (${sync.error.code})` : "",
      autoPublish: sync?.auto_publish ?? false,
      webhookUrl: sync?.webhook_url ?? "",
      // A GitHub App connection has no credential or webhook of its own: the app provides both.
      genericConnection: sync !== null && sync.provider !== "github",
      githubRepository: sync?.github?.repository ?? "",
      ...(github ?? { githubOn: false }),
      // The secret lets anyone trigger syncs: only bucket administrators see it.
      webhookSecret:
        connection && effectiveScope(s.actor, bucket.id) === "bucket_admin" ? webhookSecretOf(shell.deps, connection) : "(visible to bucket administrators)",
      hasConflicts: conflicts.length > 0,
      conflictsDigest: conflictsDigest(conflicts),
      oneByOne: conflicts.length <= CONFLICTS_ONE_BY_ONE,
      oneByOneMax: CONFLICTS_ONE_BY_ONE.toLocaleString("en"),
      conflictCount: conflicts.length.toLocaleString("en"),
      conflictsNamed: CONFLICTS_NAMED,
      conflictRows:
        conflicts.length <= CONFLICTS_ONE_BY_ONE
          ? html`${conflicts.map(
              (p, i) => html`<fieldset><legend class="wrap"><code>${p}</code></legend>
<label><input type="radio" name="side_${i}" value="bucket" required> keep the bucket's version</label>
<label><input type="radio" name="side_${i}" value="repository"> take the repository's version</label></fieldset>`,
            )}`
          : html`<ul>${conflicts.slice(0, CONFLICTS_NAMED).map((p) => html`<li class="wrap"><code>${p}</code></li>`)}</ul>`,
      typedUrl: typed.repository_url,
      typedBranch: typed.branch,
      typedUsername: typed.username,
      importChecked: typed.direction !== "export",
      exportChecked: typed.direction === "export",
      urlError: fieldError(formError, "repository_url", "url-error"),
      urlInvalid: invalidAttrs(formError, "repository_url", "url-error"),
      branchError: fieldError(formError, "branch", "branch-error"),
      branchInvalid: invalidAttrs(formError, "branch", "branch-error"),
      passwordError: fieldError(formError, "password", "password-error"),
      passwordInvalid: invalidAttrs(formError, "password", "password-error"),
      disconnectError: fieldError(formError, "confirm", "disconnect-confirm-error"),
      disconnectInvalid: invalidAttrs(formError, "confirm", "disconnect-confirm-error"),
    },
  });
}

export const gitPage: DashboardPage = {
  bucketTab: { label: "Git", path: "git" },
  routes: (app, shell) => {
    const refusedHere = (s: Session, id: string, error: ApiError, typed?: Typed, github?: GithubTyped) => {
      if (error.code === "BUCKET_NOT_FOUND" || error.code === "FORBIDDEN") return shell.notFound(s, error.code === "BUCKET_NOT_FOUND" ? error : undefined);
      return gitView(shell, s, id, {}, { error, typed, github });
    };
    const typedOf = (body: unknown): Typed => ({
      repository_url: formField(body, "repository_url"),
      branch: formField(body, "branch"),
      username: formField(body, "username"),
      direction: formField(body, "direction"),
    });
    const opts = { detail: { hide: true } };
    githubRoutes(app as unknown as Elysia, shell, (s, id, error, github) => refusedHere(s, id, error, undefined, github));
    app.post(
      `${BUCKETS_PATH}/:id/git/connect`,
      shell.action(
        (s, { params, body }) => {
          const t = typedOf(body);
          saveRepository(shell.deps, s.actor, params.id!, {
            repository_url: t.repository_url,
            branch: t.branch,
            username: t.username,
            password: formField(body, "password"),
          });
          connect(shell.deps, s.actor, params.id!, { direction: t.direction === "export" ? "export" : "import" });
          return gitUrl(params.id!, "?done=connected");
        },
        (s, error, { params, body }) => refusedHere(s, params.id!, error, typedOf(body)),
      ),
      opts,
    );
    app.post(
      `${BUCKETS_PATH}/:id/git/credential`,
      shell.action(
        (s, { params, body }) => {
          const { connection } = getConnection(shell.deps, s.actor, params.id!);
          if (!connection) throw new ApiError("GIT_SYNC_NOT_CONNECTED");
          saveRepository(shell.deps, s.actor, params.id!, {
            repository_url: connection.repositoryUrl,
            branch: connection.branch,
            username: formField(body, "username"),
            password: formField(body, "password"),
          });
          requestSync(shell.deps, s.actor, params.id!, {});
          return gitUrl(params.id!, "?done=credential");
        },
        (s, error, { params }) => refusedHere(s, params.id!, error),
      ),
      opts,
    );
    app.post(
      `${BUCKETS_PATH}/:id/git/sync`,
      shell.action(
        (s, { params }) => {
          requestSync(shell.deps, s.actor, params.id!, {});
          return gitUrl(params.id!, "?done=queued");
        },
        (s, error, { params }) => refusedHere(s, params.id!, error),
      ),
      opts,
    );
    app.post(
      `${BUCKETS_PATH}/:id/git/resolve`,
      shell.action(
        (s, { params, body }) => {
          // A choice is by position in the list the page showed, or one side for all (D299).
          const conflicts = getConnection(shell.deps, s.actor, params.id!).connection?.conflicts ?? [];
          if (formField(body, "conflicts") !== conflictsDigest(conflicts))
            throw new ApiError(
              "GIT_SYNC_CONFLICT_CHOICE",
              "The conflicts changed since this page was shown (a sync ran): choose again for the paths listed now.",
            );
          const isSide = (v: string): v is "bucket" | "repository" => v === "bucket" || v === "repository";
          const all = formField(body, "all");
          if (isSide(all)) {
            // The API's resolve_all (D307): the list was just checked against the page's.
            requestSync(shell.deps, s.actor, params.id!, { resolveAll: all });
            return gitUrl(params.id!, "?done=resolved");
          }
          const sides = conflicts.map((path, i) => [path, formField(body, `side_${i}`)] as const);
          const unchosen = sides.filter(([, side]) => !isSide(side)).length;
          if (unchosen) throw new ApiError("GIT_SYNC_CONFLICT_CHOICE", `Choose a side for every path: ${unchosen.toLocaleString("en")} have none.`);
          // fromEntries makes own keys even of paths like __proto__.
          requestSync(shell.deps, s.actor, params.id!, { resolutions: Object.fromEntries(sides) as Record<string, "bucket" | "repository"> });
          return gitUrl(params.id!, "?done=resolved");
        },
        (s, error, { params }) => refusedHere(s, params.id!, error),
      ),
      opts,
    );
    app.post(
      `${BUCKETS_PATH}/:id/git/publish`,
      shell.action(
        (s, { params, body }) => {
          const on = formField(body, "auto_publish") === "on";
          patchConnection(shell.deps, s.actor, params.id!, { auto_publish: on });
          return gitUrl(params.id!, `?done=${on ? "publish_on" : "publish_off"}`);
        },
        (s, error, { params }) => refusedHere(s, params.id!, error),
      ),
      opts,
    );
    app.post(
      `${BUCKETS_PATH}/:id/git/disconnect`,
      shell.action(
        (s, { params, body }) => {
          // The saved token and webhook secret go with the connection, never shown again: only
          // with the box ticked (D297).
          requireConfirmed(body, "what is saved for the connection (its token, its webhook secret) is deleted with it.");
          disconnect(shell.deps, s.actor, params.id!);
          return gitUrl(params.id!, "?done=disconnected");
        },
        (s, error, { params }) => refusedHere(s, params.id!, error),
      ),
      opts,
    );
    return app.get(
      `${BUCKETS_PATH}/:id/git`,
      shell.view((s, { params, query }) => gitView(shell, s, params.id!, query)),
      opts,
    ) as unknown as Elysia;
  },
};
