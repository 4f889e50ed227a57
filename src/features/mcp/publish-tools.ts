// MCP publishing tools. Each calls the same service as the matching REST route
// (src/features/publish/routes.ts) with the same actor and scope, and presents the publication
// with the same presenter, so secrets (access_password, share_text) reach account owners only,
// and only once the build is ready, exactly as on REST.
import { t } from "elysia";
import { ApiError } from "../../core/errors";
import { loadBucket } from "../buckets";
import { needsRetry, retryPublication, unpublishBucket } from "../publish";
import { loadPublication } from "../publish";
import { publishFields, type PublishInput } from "../publish";
import { presentPublication, presentPublishAnswer } from "../publish";
import { findPublication, requestPublish } from "../publish";
import { listPublicationDeploys, presentDeploy, rollbackPublication } from "../publish";
import type { McpTool } from "./tools";
import { MAX_OFFSET } from "../../http/paging";

const BucketId = t.String({ pattern: "^bkt_[a-z0-9]{1,40}$", description: "Bucket id (bkt_...), from bucket_list." });
const PublicationId = t.String({ pattern: "^pub_[a-z0-9]{1,40}$", description: "Publication id (pub_...), from a publish answer or bucket_get." });

/** Told in every publishing tool, as the spec's preview-first rule says. */
const previewFirst =
  "Preview first: for a new or materially changed website, call bucket_preview and let the user review the preview URL before publishing, unless the user already reviewed it or asked to publish immediately.";
const polling =
  "Publishing is asynchronous: the answer has publish_state queued; poll publication_get until publish_state is ready (or failed, with publish_error).";

const PublishArgs = t.Object({ bucket_id: BucketId, ...publishFields }, { additionalProperties: false });
const PreviewArgs = t.Object(
  {
    bucket_id: BucketId,
    ...publishFields,
    expires_in_minutes: t.Optional(t.Integer({ minimum: 1, maximum: 43200, description: "Preview lifetime; default 15, at most 43200 (30 days)." })),
  },
  { additionalProperties: false },
);

/**
 * REST's refusal details name REST endpoints; agents on MCP call tools, so each choice also
 * names the tool and arguments that carry it out (upgrade stays a link for the user).
 */
function withToolChoices(e: unknown, bucketId: string): never {
  if (e instanceof ApiError && (e.code === "PUBLICATION_UPGRADE_REQUIRED" || e.details?.reason === "plan_limit") && Array.isArray(e.details?.choices)) {
    const choices = (e.details.choices as Array<Record<string, unknown>>).map((c) => {
      const body = (c.body ?? {}) as Record<string, unknown>;
      if (c.action === "preview") return { ...c, tool: "bucket_preview", arguments: { bucket_id: bucketId, ...body } };
      if (c.action === "public") return { ...c, tool: "bucket_publish", arguments: { bucket_id: bucketId, ...body } };
      return c;
    });
    throw new ApiError(e.code, e.message, { ...e.details, choices }, e.retryAfter);
  }
  throw e;
}

export const publishTools: McpTool[] = [
  {
    name: "bucket_publish",
    scope: "bucket_admin",
    description: `Publish the bucket's current files as its permanent website (same as POST /api/v1/buckets/:id/publication). ${previewFirst} ${polling} Omitted fields keep the publication's current settings (first publish: static, public). access_mode password or require_email needs a plan with protected sites: otherwise the tool fails with PUBLICATION_UPGRADE_REQUIRED whose details.choices offer a protected preview (bucket_preview), an upgrade link, or a public publish; ask the user, never fall back to public silently. The password is never in this answer: once ready, publication_get shows access_password and share_text to account owners. Publishing again after changing files rebuilds the site. Needs bucket_admin on the bucket.`,
    inputSchema: PublishArgs,
    mutates: true,
    run: async (deps, actor, { bucket_id, ...input }: { bucket_id: string } & PublishInput) => {
      const r = await requestPublish(deps, actor, bucket_id, input, "main", "mcp").catch((e) => withToolChoices(e, bucket_id));
      return presentPublishAnswer(deps, actor, r.publication);
    },
  },
  {
    name: "bucket_preview",
    scope: "bucket_admin",
    description: `Publish a temporary, noindex preview of the bucket at preview-<slug> without touching the main site (same as POST /api/v1/buckets/:id/publication/preview). Use it before bucket_publish for new or materially changed sites so the user can review. Previews expire after expires_in_minutes (default 15, max 43200), do not count toward the live-site limit, and may use password or require_email on every plan; without access_mode a preview of a gated site keeps the site's gate and password (pass access_mode public to share it openly). Calling it again republishes the same preview URL. ${polling} Then share public_url and expires_at. Needs bucket_admin on the bucket.`,
    inputSchema: PreviewArgs,
    mutates: true,
    run: async (deps, actor, { bucket_id, ...input }: { bucket_id: string } & PublishInput) => {
      const r = await requestPublish(deps, actor, bucket_id, input, "preview", "mcp");
      return presentPublishAnswer(deps, actor, r.publication);
    },
  },
  {
    name: "bucket_republish",
    scope: "bucket_admin",
    description: `Run the bucket's saved publish request again, with the settings it was published with (no fields needed). A failed or stuck build is retried (same as POST /api/v1/buckets/:id/publication/retry; action "retry"); otherwise the site is published again with its saved site_mode, access mode, password, root folder and expiry, picking up file changes (same service as POST .../publication with those settings; action "republish"). kind "preview" does the same for the bucket's preview (a retried or republished preview lives its requested time again). To change settings use bucket_publish or bucket_preview. ${previewFirst} ${polling} Fails with PUBLICATION_NOT_FOUND if the bucket was never published (or has no preview), PUBLICATION_BUSY while it is being unpublished. Needs bucket_admin on the bucket.`,
    inputSchema: t.Object(
      {
        bucket_id: BucketId,
        kind: t.Optional(t.Union([t.Literal("main"), t.Literal("preview")], { description: "The main site (default) or the preview." })),
      },
      { additionalProperties: false },
    ),
    mutates: true,
    run: async (deps, actor, a: { bucket_id: string; kind?: "main" | "preview" }) => {
      const kind = a.kind ?? "main";
      const bucket = loadBucket(deps, actor, a.bucket_id, "bucket_admin");
      const pub = findPublication(bucket.id, kind, deps.db);
      if (!pub)
        throw new ApiError(
          "PUBLICATION_NOT_FOUND",
          kind === "preview"
            ? `Bucket ${bucket.id} has no preview; call bucket_preview first.`
            : `Bucket ${bucket.id} was never published; call bucket_preview or bucket_publish first.`,
        );
      if (needsRetry(deps, pub)) return presentPublishAnswer(deps, actor, retryPublication(deps, actor, bucket.id, kind), { action: "retry" });
      const saved = pub.publishRequest as { publication_root_directory?: string; expires_in_minutes?: number };
      // Omitted fields keep the publication's settings; the root folder is passed explicitly so a
      // later change of the bucket's metadata default does not move the site.
      const input: PublishInput = {
        ...(saved.publication_root_directory !== undefined ? { publication_root_directory: saved.publication_root_directory } : {}),
        ...(kind === "preview" && saved.expires_in_minutes !== undefined ? { expires_in_minutes: saved.expires_in_minutes } : {}),
      };
      const r = await requestPublish(deps, actor, bucket.id, input, kind, "mcp").catch((e) => withToolChoices(e, bucket.id));
      return presentPublishAnswer(deps, actor, r.publication, { action: "republish" });
    },
  },
  {
    name: "bucket_unpublish",
    scope: "bucket_admin",
    description:
      "Take the bucket's website down (same as DELETE /api/v1/buckets/:id/publication): the main site and any live preview answer 404 at once and the publication moves to unpublishing, then unpublished. The bucket and its files stay; publishing again brings the site back. Unpublishing is what unblocks bucket_archive and bucket_delete (UNPUBLISH_FIRST). Already unpublished: changed false. Needs bucket_admin on the bucket.",
    inputSchema: t.Object({ bucket_id: BucketId }, { additionalProperties: false }),
    mutates: true,
    run: (deps, actor, a: { bucket_id: string }) => {
      const r = unpublishBucket(deps, actor, a.bucket_id);
      return presentPublishAnswer(deps, actor, r.publication, { changed: r.changed });
    },
  },
  {
    name: "publication_get",
    scope: "bucket_read",
    description:
      "Read a publication by publication_id, or by bucket_id (kind main by default, or preview), as GET /api/v1/publications/:id does. Poll it after bucket_publish/bucket_preview: publish_state is queued, processing, ready, failed (see publish_error) or unpublishing; publish_pending is true until the build ends. Once ready, account owners also get access_password (password sites) and share_text to give the user. include_manifest true adds the published file list. Needs bucket_read on the bucket.",
    inputSchema: t.Object(
      {
        publication_id: t.Optional(PublicationId),
        bucket_id: t.Optional(BucketId),
        kind: t.Optional(t.Union([t.Literal("main"), t.Literal("preview")], { description: "With bucket_id: the main site (default) or the preview." })),
        include_manifest: t.Optional(t.Boolean({ description: "Add the published files (default false, lighter while polling)." })),
      },
      { additionalProperties: false },
    ),
    mutates: false,
    run: (deps, actor, a: { publication_id?: string; bucket_id?: string; kind?: "main" | "preview"; include_manifest?: boolean }) => {
      if ((a.publication_id === undefined) === (a.bucket_id === undefined)) {
        throw new ApiError("VALIDATION_FAILED", "Give exactly one of publication_id or bucket_id.", {
          fields: [{ path: "/publication_id" }, { path: "/bucket_id" }],
        });
      }
      if (a.kind !== undefined && a.bucket_id === undefined) throw new ApiError("VALIDATION_FAILED", "kind is only used with bucket_id.", { field: "kind" });
      let id = a.publication_id;
      if (id === undefined) {
        const bucket = loadBucket(deps, actor, a.bucket_id!, "bucket_read");
        const pub = findPublication(bucket.id, a.kind ?? "main", deps.db);
        if (!pub) throw new ApiError("PUBLICATION_NOT_FOUND", `Bucket ${bucket.id} has no ${a.kind ?? "main"} publication.`);
        id = pub.id;
      }
      const { pub } = loadPublication(deps, actor, id, "bucket_read");
      return { publication: presentPublication(deps, actor, pub, { includeManifest: a.include_manifest === true }) };
    },
  },
  {
    name: "publication_deploys",
    scope: "bucket_read",
    description:
      "List a site's deploys, newest first (same as GET /api/v1/publications/:id/deploys): each build of the main site is a deploy with id (dpl_...), created_at, bucket_version_id, files_count, total_bytes, trigger (api, cli, mcp, dashboard, git_sync, restore), live (the one served now) and rollback_available (false once it fell out of the kept history, deploy_history_limit deploys). Use it before publication_rollback. limit (default 20, at most 100) and offset page through. Needs bucket_read on the bucket.",
    inputSchema: t.Object(
      {
        publication_id: PublicationId,
        limit: t.Optional(t.Integer({ minimum: 1, maximum: 100 })),
        offset: t.Optional(t.Integer({ minimum: 0, maximum: MAX_OFFSET })),
      },
      { additionalProperties: false },
    ),
    mutates: false,
    run: (deps, actor, a: { publication_id: string; limit?: number; offset?: number }) => {
      const r = listPublicationDeploys(deps, actor, a.publication_id, { limit: a.limit, offset: a.offset });
      return {
        publication_id: r.pub.id,
        deploy_history_limit: r.historyLimit,
        deploys: r.deploys.map((d) => presentDeploy(r.pub, d)),
        pagination: r.pagination,
      };
    },
  },
  {
    name: "publication_rollback",
    scope: "bucket_admin",
    description:
      "Roll the live site back to an earlier deploy at once (same as POST /api/v1/publications/:id/rollback): no rebuild, the switch is atomic and visitors get that deploy within a second. Omit deploy_id for the deploy before the live one; pass a later deploy_id to roll forward again. The bucket's files are NOT changed: the next bucket_publish builds from the bucket's current files again. Tell the user which deploy is live now (deploy.created_at). Fails with DEPLOY_NOT_FOUND (unknown, or another site's deploy), DEPLOY_COLLECTED (pruned from the history), ROLLBACK_NOT_POSSIBLE (a build is pending, the site is not published, or a preview). Needs bucket_admin on the bucket.",
    inputSchema: t.Object(
      {
        publication_id: PublicationId,
        deploy_id: t.Optional(t.String({ pattern: "^dpl_[a-z0-9]{1,40}$", description: "Deploy id (dpl_...), from publication_deploys." })),
      },
      { additionalProperties: false },
    ),
    mutates: true,
    run: async (deps, actor, a: { publication_id: string; deploy_id?: string }) => {
      const r = await rollbackPublication(deps, actor, a.publication_id, a.deploy_id);
      return {
        publication: presentPublication(deps, actor, r.pub),
        deploy: presentDeploy(r.pub, r.deploy),
        previous_deploy_id: r.previousDeployId,
        changed: r.changed,
      };
    },
  },
];
