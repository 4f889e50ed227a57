// Git sync routes (the spec's "GitHub sync" table, plus the push webhook): validate, call one
// service function, wrap in { data }.
import { Elysia } from "elysia";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { must, type authPlugin } from "../../http/auth";
import { ConnectBody, EmptyBody, ExportBody, GitSyncParams, PatchBody, SyncBody, WebhookParams } from "./model";
import { presentSetup, presentSync } from "./present";
import { connect, disconnect, getConnection, patchConnection, receiveWebhook, requestSync, setupOf } from "./service";
import { githubApp } from "./github-app";
import { connectGithub, exportGithub, githubSetupLists } from "./github-connect";
import { receiveGithubWebhook } from "./github-webhook";

const tags = ["Git sync"];
const base = "/api/v1/buckets/:id/github_sync";
/** Webhook deliveries are small JSON documents; a bigger body is not a push notification. */
const MAX_WEBHOOK_BYTES = 5 * 1024 * 1024;

export const gitSyncRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "git-sync" })
    .use(auth)
    .onTransform((ctx) => {
      if (ctx.body === undefined && ctx.request.method !== "GET" && !ctx.path.startsWith("/api/v1/git_sync/")) (ctx as { body: unknown }).body = {};
    })
    .get(
      base,
      ({ actor, params }) => {
        const r = getConnection(deps, must(actor), params.id);
        return { data: { github_sync: presentSync(deps, r.connection), github_sync_setup: presentSetup(deps, r.bucket) } };
      },
      {
        auth: "bucket_read",
        params: GitSyncParams,
        detail: { tags, summary: "The bucket's git sync connection and sync state (github_sync null when disconnected)" },
      },
    )
    .get(
      `${base}/setup`,
      async ({ actor, params }) => {
        const r = setupOf(deps, must(actor), params.id);
        const lists = githubApp(deps) ? await githubSetupLists(deps, must(actor), params.id) : undefined;
        return { data: { github_sync_setup: presentSetup(deps, r.bucket, r.saved, lists) } };
      },
      {
        auth: "bucket_read",
        params: GitSyncParams,
        detail: { tags, summary: "Eligibility, the browser settings_url, the saved repository, installations and repositories" },
      },
    )
    .post(
      base,
      async ({ actor, params, body, set }) => {
        const conn = body.repository
          ? await connectGithub(deps, must(actor), params.id, {
              direction: body.direction,
              repository: body.repository,
              branch: body.branch,
              installation_id: body.installation_id,
            })
          : connect(deps, must(actor), params.id, body);
        set.status = 202;
        return { data: { github_sync: presentSync(deps, conn) } };
      },
      {
        auth: "bucket_admin",
        params: GitSyncParams,
        body: ConnectBody,
        detail: { tags, summary: "Connect the repository saved on the Git page (or a public one) with a first direction; the first sync is queued (202)" },
      },
    )
    .post(
      `${base}/export`,
      async ({ actor, params, body, set }) => {
        // A generic git host cannot be asked to create a repository: the export goes to the
        // (empty) repository saved on the Git page or named here. The GitHub App creates one.
        const conn = wantsGithubExport(deps, must(actor), params.id, body)
          ? await exportGithub(deps, must(actor), params.id, body)
          : connect(deps, must(actor), params.id, { direction: "export", repository_url: body.repository_url, branch: body.branch });
        set.status = 202;
        return { data: { github_sync: presentSync(deps, conn) } };
      },
      {
        auth: "bucket_admin",
        params: GitSyncParams,
        body: ExportBody,
        detail: {
          tags,
          summary:
            "Export the bucket to a new repository (202): through the GitHub App a new private repository in an organization or a personal account (owner, name; a personal account needs its owner's authorization, kept from the Git page's round trip: 409 GITHUB_AUTHORIZATION_REQUIRED otherwise); on a generic git host, the empty repository saved on the Git page or given here",
        },
      },
    )
    .patch(base, ({ actor, params, body }) => ({ data: { github_sync: presentSync(deps, patchConnection(deps, must(actor), params.id, body)) } }), {
      auth: "bucket_admin",
      params: GitSyncParams,
      body: PatchBody,
      detail: { tags, summary: "Turn automatic republish after a sync on or off" },
    })
    .post(
      `${base}/sync`,
      ({ actor, params, body, set }) => {
        const r = requestSync(deps, must(actor), params.id, { resolutions: body.resolutions, resolveAll: body.resolve_all });
        set.status = 202;
        return { data: { queued: true, job_id: r.jobId, github_sync: presentSync(deps, r.connection) } };
      },
      {
        auth: "bucket_write",
        params: GitSyncParams,
        body: SyncBody,
        detail: { tags, summary: "Queue a sync now, or resolve a conflict with a side per path (202)" },
      },
    )
    .delete(base, ({ actor, params }) => ({ data: { ...disconnect(deps, must(actor), params.id), github_sync: null } }), {
      auth: "bucket_admin",
      params: GitSyncParams,
      body: EmptyBody,
      detail: { tags, summary: "Disconnect: nothing is deleted on either side" },
    })
    .post(
      "/api/v1/git_sync/webhooks/:connection_id",
      async ({ params, request, set }) => {
        const length = Number(request.headers.get("content-length") ?? "0");
        if (length > MAX_WEBHOOK_BYTES) throw new ApiError("PAYLOAD_TOO_LARGE");
        const raw = new Uint8Array(await request.arrayBuffer());
        if (raw.length > MAX_WEBHOOK_BYTES) throw new ApiError("PAYLOAD_TOO_LARGE");
        const r = receiveWebhook(deps, params.connection_id, raw, request.headers.get("x-hub-signature-256"));
        set.status = 202;
        return { data: r };
      },
      {
        auth: "public",
        parse: "none",
        params: WebhookParams,
        detail: {
          tags,
          summary: "Push webhook of a git host, signed with X-Hub-Signature-256 (HMAC-SHA256 of the raw body with the connection's webhook secret)",
        },
      },
    )
    .post(
      "/api/v1/git_sync/github/webhook",
      async ({ request, set }) => {
        const length = Number(request.headers.get("content-length") ?? "0");
        if (length > MAX_WEBHOOK_BYTES) throw new ApiError("PAYLOAD_TOO_LARGE");
        const raw = new Uint8Array(await request.arrayBuffer());
        if (raw.length > MAX_WEBHOOK_BYTES) throw new ApiError("PAYLOAD_TOO_LARGE");
        const r = receiveGithubWebhook(deps, raw, request.headers.get("x-hub-signature-256"), request.headers.get("x-github-event"));
        set.status = 202;
        return { data: r };
      },
      {
        auth: "public",
        parse: "none",
        detail: {
          tags,
          summary:
            "The GitHub App's webhook (push, installation, installation_repositories, repository), signed with the app's webhook secret (X-Hub-Signature-256)",
        },
      },
    );

/** Export through the GitHub App when GitHub fields are given, or when nothing points at a generic repository. */
function wantsGithubExport(
  deps: Deps,
  actor: Actor,
  bucketId: string,
  body: { repository_url?: string; owner?: string; name?: string; installation_id?: number },
) {
  if (body.owner || body.name || body.installation_id) return true;
  if (body.repository_url || !githubApp(deps)) return false;
  const saved = setupOf(deps, actor, bucketId).saved;
  return !saved || saved.provider === "github";
}
