// Publication routes: validate, call one service function, wrap in { data }.
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import { must, type authPlugin } from "../../http/auth";
import { retryPublication, unpublishBucket } from "./lifecycle";
import { getAccess, listPublications, loadPublication, patchAccess, patchPublication, recipientLinks, renameSlug } from "./service";
import {
  AccessQuery,
  BucketParams,
  DeployParams,
  EmptyBody,
  ListDeploysQuery,
  ListPublicationsQuery,
  ManifestQuery,
  PatchAccessBody,
  PatchPublicationBody,
  PreviewBody,
  PublicationParams,
  PublishBody,
  RecipientLinksBody,
  RetryQuery,
  RollbackBody,
  SlugBody,
} from "./model";
import { fullManifestJson, presentPublication, presentPublications, presentPublishAnswer } from "./present";
import { requestPublish } from "./accept-publish";
import { triggerOf } from "./trigger";
import { getPublicationDeploy, listPublicationDeploys, presentDeploy, rollbackPublication } from "./history";

const tags = ["Publications"];

export const publishRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "publications" })
    .use(auth)
    .onTransform((ctx) => {
      if (ctx.body === undefined && ctx.request.method !== "GET") (ctx as { body: unknown }).body = {};
    })
    .post(
      "/api/v1/buckets/:id/publication",
      async ({ actor, params, body, set, request }) => {
        const a = must(actor);
        const r = await requestPublish(deps, a, params.id, body, "main", triggerOf(request));
        set.status = 202;
        return { data: presentPublishAnswer(deps, a, r.publication) };
      },
      {
        auth: "bucket_admin",
        params: BucketParams,
        body: PublishBody,
        detail: { tags, summary: "Publish the bucket (202, queued; poll the publication until ready)" },
      },
    )
    .post(
      "/api/v1/buckets/:id/publication/preview",
      async ({ actor, params, body, set, request }) => {
        const a = must(actor);
        const r = await requestPublish(deps, a, params.id, body, "preview", triggerOf(request));
        set.status = 202;
        return { data: presentPublishAnswer(deps, a, r.publication) };
      },
      {
        auth: "bucket_admin",
        params: BucketParams,
        body: PreviewBody,
        detail: { tags, summary: "Publish a temporary noindex preview at preview-<slug> (202)" },
      },
    )
    .post(
      "/api/v1/buckets/:id/publication/retry",
      ({ actor, params, query, set }) => {
        const a = must(actor);
        set.status = 202;
        return { data: presentPublishAnswer(deps, a, retryPublication(deps, a, params.id, query.kind)) };
      },
      {
        auth: "bucket_admin",
        params: BucketParams,
        query: RetryQuery,
        body: EmptyBody,
        detail: { tags, summary: "Re-run a failed build with the saved request (202); ?kind=preview for the preview's" },
      },
    )
    .delete(
      "/api/v1/buckets/:id/publication",
      ({ actor, params, set }) => {
        const a = must(actor);
        const r = unpublishBucket(deps, a, params.id);
        set.status = 202;
        return { data: presentPublishAnswer(deps, a, r.publication, { changed: r.changed }) };
      },
      { auth: "bucket_admin", params: BucketParams, body: EmptyBody, detail: { tags, summary: "Unpublish (202 unpublishing; the job finishes it)" } },
    )
    .patch(
      "/api/v1/buckets/:id/custom_domains/public_slug",
      ({ actor, params, body }) => {
        const a = must(actor);
        return { data: { publication: presentPublication(deps, a, renameSlug(deps, a, params.id, body.public_slug).publication) } };
      },
      { auth: "bucket_admin", params: BucketParams, body: SlugBody, detail: { tags, summary: "Rename the managed slug (the site moves at once)" } },
    )
    .get(
      "/api/v1/publications",
      ({ actor, query }) => {
        const a = must(actor);
        const includeManifest = query.include_manifest !== "false";
        const page = listPublications(deps, a, { limit: query.limit, offset: query.offset });
        return { data: { publications: presentPublications(deps, a, page.publications, { includeManifest }), pagination: page.pagination } };
      },
      {
        auth: "bucket_read",
        query: ListPublicationsQuery,
        detail: { tags, summary: "List publications, newest first (manifest included unless include_manifest=false; limit default 100, max 1000)" },
      },
    )
    .get(
      "/api/v1/publications/:id",
      ({ actor, params, query }) => {
        const a = must(actor);
        const { pub } = loadPublication(deps, a, params.id, "bucket_read");
        return { data: { publication: presentPublication(deps, a, pub, { includeManifest: query.include_manifest !== "false" }) } };
      },
      {
        auth: "bucket_read",
        params: PublicationParams,
        query: ManifestQuery,
        detail: { tags, summary: "Read a publication (include_manifest=false while polling)" },
      },
    )
    .get(
      "/api/v1/publications/:id/manifest",
      ({ actor, params }) => {
        const { pub } = loadPublication(deps, must(actor), params.id, "bucket_read");
        // Streamed: a large deploy's list is never held whole (fullManifestJson).
        const pieces = fullManifestJson(deps, pub);
        const body = new ReadableStream<string>({
          async pull(controller) {
            const next = await pieces.next();
            if (next.done) controller.close();
            else controller.enqueue(next.value);
          },
        });
        return new Response(body, { headers: { "content-type": "application/json" } });
      },
      { auth: "bucket_read", params: PublicationParams, detail: { tags, summary: "The published files" } },
    )
    .patch(
      "/api/v1/publications/:id",
      ({ actor, params, body }) => {
        const a = must(actor);
        return { data: { publication: presentPublication(deps, a, patchPublication(deps, a, params.id, body)) } };
      },
      {
        auth: "bucket_admin",
        params: PublicationParams,
        body: PatchPublicationBody,
        detail: { tags, summary: "Change title, description, routing (site_mode), tracking or expiry (no rebuild)" },
      },
    )
    .get(
      "/api/v1/publications/:id/access",
      ({ actor, params, query }) => ({
        data: { access: getAccess(deps, must(actor), params.id, query) },
      }),
      {
        auth: "bucket_admin",
        params: PublicationParams,
        query: AccessQuery,
        detail: { tags, summary: "Access mode, password (owner keys) and require_email leads (limit default 100, max 1000, with leads_pagination)" },
      },
    )
    .patch(
      "/api/v1/publications/:id/access",
      async ({ actor, params, body }) => ({
        data: { access: await patchAccess(deps, must(actor), params.id, body) },
      }),
      {
        auth: "bucket_admin",
        params: PublicationParams,
        body: PatchAccessBody,
        detail: { tags, summary: "Change access mode or password (signs current visitors out)" },
      },
    )
    .post(
      "/api/v1/publications/:id/recipient_links",
      ({ actor, params, body }) => ({
        data: recipientLinks(deps, must(actor), params.id, body),
      }),
      {
        auth: "bucket_admin",
        params: PublicationParams,
        body: RecipientLinksBody,
        detail: { tags, summary: "Signed links that let named recipients through a require_email gate" },
      },
    )
    .get(
      "/api/v1/publications/:id/deploys",
      ({ actor, params, query }) => {
        const r = listPublicationDeploys(deps, must(actor), params.id, query);
        return {
          data: {
            publication_id: r.pub.id,
            deploy_history_limit: r.historyLimit,
            deploys: r.deploys.map((d) => presentDeploy(r.pub, d)),
            pagination: r.pagination,
          },
        };
      },
      {
        auth: "bucket_read",
        params: PublicationParams,
        query: ListDeploysQuery,
        detail: { tags, summary: "The site's deploys, newest first (limit default 20, max 100); live marks the one served" },
      },
    )
    .get(
      "/api/v1/publications/:id/deploys/:deploy_id",
      ({ actor, params }) => {
        const r = getPublicationDeploy(deps, must(actor), params.id, params.deploy_id);
        return { data: { deploy: presentDeploy(r.pub, r.deploy) } };
      },
      { auth: "bucket_read", params: DeployParams, detail: { tags, summary: "One deploy of the site" } },
    )
    .post(
      "/api/v1/publications/:id/rollback",
      async ({ actor, params, body }) => {
        const a = must(actor);
        const r = await rollbackPublication(deps, a, params.id, body.deploy_id);
        return {
          data: {
            publication: presentPublication(deps, a, r.pub, { includeManifest: false }),
            deploy: presentDeploy(r.pub, r.deploy),
            previous_deploy_id: r.previousDeployId,
            changed: r.changed,
          },
        };
      },
      {
        auth: "bucket_admin",
        params: PublicationParams,
        body: RollbackBody,
        detail: { tags, summary: "Serve an earlier deploy at once (no rebuild, bucket files unchanged); default: the one before the live deploy" },
      },
    );
