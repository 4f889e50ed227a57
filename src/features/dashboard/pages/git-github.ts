// The GitHub App part of a bucket's Git page: "Install on GitHub" and "Link an existing
// installation" (links, not forms: the round trip leaves for GitHub, which the dashboard's
// form-action CSP would refuse after a form post), GitHub's redirect back, and the forms that
// connect a repository an installation grants or export to a new one.
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { alertBox, html, type SafeHtml } from "../../../http/pages/layout";
import { fieldError, invalidAttrs } from "../forms";
import { redirectResponse } from "../../../http/html";
import { completeGithubSetup, connectGithub, exportGithub, githubAppOf, githubSetupLists, startGithubSetup, GITHUB_CALLBACK_PATH } from "../../gitsync";
import type { Shell, Session } from "../shell";
import { assertAccountWritable, formField } from "../shell";
import { BUCKETS_PATH } from "./buckets-home";

const gitUrl = (id: string, query = "") => `${BUCKETS_PATH}/${encodeURIComponent(id)}/git${query}`;

/** What a person typed into one of the GitHub forms, put back after a refusal (with the error next to its field). */
export interface GithubTyped {
  form: "connect" | "export";
  repository: string;
  installationId: string;
  name: string;
  branch: string;
  direction: string;
}

export const githubTypedOf = (form: GithubTyped["form"], body: unknown): GithubTyped => ({
  form,
  repository: formField(body, "repository"),
  installationId: formField(body, "installation_id"),
  name: formField(body, "name"),
  branch: formField(body, "branch"),
  direction: formField(body, "direction"),
});

export interface GithubPart {
  githubOn: boolean;
  githubInstallations: SafeHtml;
  hasGithubInstallations: boolean;
  githubRepoOptions: SafeHtml;
  hasGithubRepos: boolean;
  githubExportOptions: SafeHtml;
  hasGithubExportTargets: boolean;
  githubListError: SafeHtml;
  githubName: string;
  githubConnectBranch: string;
  githubImportChecked: boolean;
  githubExportChecked: boolean;
  githubExportBranch: string;
  githubRepositoryError: SafeHtml;
  githubRepositoryInvalid: SafeHtml;
  githubBranchError: SafeHtml;
  githubBranchInvalid: SafeHtml;
  githubNameError: SafeHtml;
  githubNameInvalid: SafeHtml;
  githubExportBranchError: SafeHtml;
  githubExportBranchInvalid: SafeHtml;
}

/**
 * What the Git page shows of the GitHub App (asks GitHub for the repositories only when the bucket
 * can connect). After a refused GitHub form, `refused` puts back what was typed into that form.
 */
export async function githubPart(
  shell: Shell,
  s: Session,
  bucketId: string,
  bucketTitle: string,
  canConnect: boolean,
  refused?: { error: ApiError; typed: GithubTyped },
): Promise<GithubPart | null> {
  if (!githubAppOf(shell.deps) || !canConnect) return null;
  const lists = await githubSetupLists(shell.deps, s.actor, bucketId);
  const errors = lists.installations.filter((i) => "error" in i && i.error).map((i) => `${i.account_login}: ${(i as { error?: string }).error}`);
  // Organizations through the installation token, personal accounts through their owner's kept authorization.
  const exportTargets = lists.installations.filter((i) => i.state === "active");
  const connectTyped = refused?.typed.form === "connect" ? refused.typed : null;
  const exportTyped = refused?.typed.form === "export" ? refused.typed : null;
  // A field error goes to the form that was posted: both forms have a branch.
  const connectError = connectTyped ? refused!.error : undefined;
  const exportError = exportTyped ? refused!.error : undefined;
  return {
    githubOn: true,
    hasGithubInstallations: lists.installations.length > 0,
    githubInstallations: html`${lists.installations.map(
      (i) =>
        html`<li><strong>${i.account_login}</strong> (${i.account_type === "Organization" ? "organization" : "personal account"})${i.state === "active" ? "" : html` · <em>${i.state}</em>`}</li>`,
    )}`,
    hasGithubRepos: lists.repositories.length > 0,
    githubRepoOptions: html`${lists.repositories.map((r) => {
      const value = `${r.installation_id}:${r.full_name}`;
      return html`<option value="${value}"${connectTyped?.repository === value ? html` selected` : html``}>${r.full_name}${r.private ? " (private)" : ""} · ${r.default_branch}</option>`;
    })}`,
    hasGithubExportTargets: exportTargets.length > 0,
    githubExportOptions: html`${exportTargets.map(
      (i) =>
        html`<option value="${i.installation_id}"${exportTyped?.installationId === String(i.installation_id) ? html` selected` : html``}>${i.account_login}${i.account_type === "Organization" ? "" : " (personal account)"}</option>`,
    )}`,
    githubListError: alertBox(errors.join(" · ")),
    githubName:
      exportTyped?.name ??
      bucketTitle
        .normalize("NFKD")
        .replace(/[^\w.-]+/g, "-")
        .replace(/^[-.]+|[-.]+$/g, "")
        .toLowerCase()
        .slice(0, 100),
    githubConnectBranch: connectTyped?.branch ?? "",
    githubImportChecked: connectTyped?.direction !== "export",
    githubExportChecked: connectTyped?.direction === "export",
    githubExportBranch: exportTyped?.branch ?? "main",
    githubRepositoryError: fieldError(connectError, "repository", "github-repository-error"),
    githubRepositoryInvalid: invalidAttrs(connectError, "repository", "github-repository-error"),
    githubBranchError: fieldError(connectError, "branch", "github-branch-error"),
    githubBranchInvalid: invalidAttrs(connectError, "branch", "github-branch-error"),
    githubNameError: fieldError(exportError, "name", "github-name-error"),
    githubNameInvalid: invalidAttrs(exportError, "name", "github-name-error"),
    githubExportBranchError: fieldError(exportError, "branch", "github-export-branch-error"),
    githubExportBranchInvalid: invalidAttrs(exportError, "branch", "github-export-branch-error"),
  };
}

export function githubRoutes(
  app: Elysia,
  shell: Shell,
  refusedHere: (s: Session, id: string, error: ApiError, typed?: GithubTyped) => Promise<Response> | Response,
): void {
  const opts = { detail: { hide: true } };
  for (const mode of ["install", "authorize"] as const) {
    app.get(
      `${BUCKETS_PATH}/:id/git/github/${mode}`,
      shell.view((s, { params }) => {
        try {
          // A GET that writes (the round trip's state, then the link): refused to a read-only account as a POST is.
          assertAccountWritable(shell.deps, s);
          return redirectResponse(startGithubSetup(shell.deps, { sessionId: s.session.id, actor: s.actor }, params.id!, mode));
        } catch (e) {
          if (e instanceof ApiError && e.code !== "BUCKET_NOT_FOUND" && e.code !== "FORBIDDEN") return refusedHere(s, params.id!, e);
          throw e;
        }
      }),
      opts,
    );
  }
  // GitHub's redirect after an install or an authorization (the app's Callback URL and Setup URL).
  app.get(
    GITHUB_CALLBACK_PATH,
    shell.view(async (s, { request }) => {
      const url = new URL(request.url);
      // Repositories changed in GitHub's own settings ("Redirect on update"): no round trip of
      // Pier's to finish, and the installation's links in Pier already cover it.
      if (!url.searchParams.get("state") && url.searchParams.get("setup_action") === "update") return redirectResponse(`${BUCKETS_PATH}?github=updated`);
      try {
        assertAccountWritable(shell.deps, s);
        const r = await completeGithubSetup(shell.deps, { sessionId: s.session.id, actor: s.actor }, url);
        return redirectResponse(gitUrl(r.bucketId, r.requested ? "?done=github_requested" : `?done=github_linked`));
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        // Shown on the Git page the round trip started from, when the state said which one.
        const bucketId = (e.details as { bucket_id?: string } | undefined)?.bucket_id;
        if (bucketId) return refusedHere(s, bucketId, new ApiError(e.code, e.message));
        return shell.notFound(s, e);
      }
    }),
    opts,
  );
  app.post(
    `${BUCKETS_PATH}/:id/git/github/connect`,
    shell.action(
      async (s, { params, body }) => {
        const [installation, ...rest] = formField(body, "repository").split(":");
        await connectGithub(shell.deps, s.actor, params.id!, {
          direction: formField(body, "direction") === "export" ? "export" : "import",
          repository: rest.join(":"),
          installation_id: Number(installation) || undefined,
          branch: formField(body, "branch") || undefined,
        });
        return gitUrl(params.id!, "?done=connected");
      },
      (s, error, { params, body }) => refusedHere(s, params.id!, error, githubTypedOf("connect", body)),
    ),
    opts,
  );
  app.post(
    `${BUCKETS_PATH}/:id/git/github/export`,
    shell.action(
      async (s, { params, body }) => {
        await exportGithub(shell.deps, s.actor, params.id!, {
          installation_id: Number(formField(body, "installation_id")) || undefined,
          name: formField(body, "name") || undefined,
          branch: formField(body, "branch").trim() || undefined,
        });
        return gitUrl(params.id!, "?done=connected");
      },
      (s, error, { params, body }) => refusedHere(s, params.id!, error, githubTypedOf("export", body)),
    ),
    opts,
  );
}
