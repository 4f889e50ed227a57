// Routes of the Buckets table: validate, call one service function, wrap in { data }.
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import { must, type authPlugin } from "../../http/auth";
import { deleteBucket } from "./delete";
import { archiveBucket, bulkBuckets, unarchiveBucket } from "./lifecycle";
import { lockBucket, lockVisibility, presentLock, unlockBucket } from "./locks";
import {
  BucketParams,
  BulkBody,
  CreateBucketBody,
  DeleteBucketBody,
  EmptyWriteBody,
  ListBucketsQuery,
  LockBody,
  PatchBucketBody,
  PatchVariablesBody,
  VisibilityLockBody,
} from "./model";
import { presentBucket, presentDeleteOutcome, presentLifecycleResult, presentVisibilityLock } from "./present";
import { createBucket, getBucket, listBucketPage, updateBucket } from "./service";
import { listTags } from "./tags";
import { getVariables, patchVariables } from "./variables";

const tags = ["Buckets"];

export const bucketRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "buckets" })
    .use(auth)
    // A write sent without a body (archive, unarchive, unlock) is validated as `{}`, so its
    // schema still refuses arrays, strings and unknown fields when a body is sent.
    .onTransform((ctx) => {
      if (ctx.body === undefined && ctx.request.method !== "GET") (ctx as { body: unknown }).body = {};
    })
    .get(
      "/api/v1/buckets",
      ({ actor, query }) => {
        const page = listBucketPage(deps, must(actor), {
          archived: query.archived === "true",
          tagPath: query.tag,
          limit: query.limit,
          offset: query.offset,
        });
        return { data: { buckets: page.buckets.map((b) => presentBucket(deps, b)), pagination: page.pagination } };
      },
      {
        auth: "bucket_read",
        query: ListBucketsQuery,
        detail: { tags, summary: "List buckets, newest first (archived=true for archived ones; tag=<label> for one label; limit default 100, max 1000)" },
      },
    )
    .post(
      "/api/v1/buckets",
      ({ actor, body, set }) => {
        set.status = 201;
        return { data: { bucket: presentBucket(deps, createBucket(deps, must(actor), body.bucket)) } };
      },
      { auth: "bucket_admin", body: CreateBucketBody, detail: { tags, summary: "Create a bucket (account-wide bucket_admin)" } },
    )
    .post(
      "/api/v1/buckets/bulk",
      ({ actor, body }) => ({
        data: bulkBuckets(deps, must(actor), body),
      }),
      { auth: "bucket_admin", body: BulkBody, detail: { tags, summary: "Archive or unarchive many buckets (delete is refused)" } },
    )
    .get(
      "/api/v1/buckets/:id",
      ({ actor, params }) => ({
        data: { bucket: presentBucket(deps, getBucket(deps, must(actor), params.id)) },
      }),
      { auth: "bucket_read", params: BucketParams, detail: { tags, summary: "Get a bucket" } },
    )
    .patch(
      "/api/v1/buckets/:id",
      ({ actor, params, body }) => ({
        data: { bucket: presentBucket(deps, updateBucket(deps, must(actor), params.id, body.bucket)) },
      }),
      { auth: "bucket_admin", params: BucketParams, body: PatchBucketBody, detail: { tags, summary: "Update title, description, tags or metadata" } },
    )
    .delete(
      "/api/v1/buckets/:id",
      ({ actor, params, body, set }) => {
        const outcome = deleteBucket(deps, must(actor), params.id, body);
        if (outcome.kind === "started") set.status = 202;
        return { data: presentDeleteOutcome(deps, outcome) };
      },
      {
        auth: "bucket_admin",
        params: BucketParams,
        body: DeleteBucketBody,
        detail: { tags, summary: "Delete a bucket permanently (confirmation phrase; large buckets answer 202)" },
      },
    )
    .post(
      "/api/v1/buckets/:id/archive",
      ({ actor, params }) => {
        return { data: presentLifecycleResult(deps, archiveBucket(deps, must(actor), params.id)) };
      },
      {
        auth: "bucket_admin",
        params: BucketParams,
        body: EmptyWriteBody,
        detail: { tags, summary: "Archive an unpublished bucket (read-only until unarchived)" },
      },
    )
    .post(
      "/api/v1/buckets/:id/unarchive",
      ({ actor, params }) => {
        return { data: presentLifecycleResult(deps, unarchiveBucket(deps, must(actor), params.id)) };
      },
      { auth: "bucket_admin", params: BucketParams, body: EmptyWriteBody, detail: { tags, summary: "Unarchive a bucket" } },
    )
    .post(
      "/api/v1/buckets/:id/lock",
      ({ actor, params, body }) => {
        const a = must(actor);
        return { data: { lock: presentLock(deps, a, lockBucket(deps, a, params.id, body)) } };
      },
      {
        auth: "bucket_write",
        params: BucketParams,
        body: LockBody,
        detail: { tags, summary: "Lock the bucket against other credentials (or renew your lock)" },
      },
    )
    .delete(
      "/api/v1/buckets/:id/lock",
      ({ actor, params }) => ({
        data: { bucket_id: params.id, ...unlockBucket(deps, must(actor), params.id) },
      }),
      { auth: "bucket_write", params: BucketParams, body: EmptyWriteBody, detail: { tags, summary: "Release your bucket lock" } },
    )
    .post(
      "/api/v1/buckets/:id/visibility_change_lock",
      ({ actor, params, body }) => {
        const r = lockVisibility(deps, must(actor), params.id, body);
        return { data: { visibility_change_lock: presentVisibilityLock(deps, r.bucket), changed: r.changed, bucket: presentBucket(deps, r.bucket) } };
      },
      {
        auth: "bucket_admin",
        params: BucketParams,
        body: VisibilityLockBody,
        detail: { tags, summary: "Block publish/unpublish/access/slug changes (unlock in the dashboard)" },
      },
    )
    .get(
      "/api/v1/buckets/:id/variables",
      ({ actor, params }) => ({
        data: getVariables(deps, must(actor), params.id),
      }),
      { auth: "bucket_read", params: BucketParams, detail: { tags, summary: "Public variables and secret names (secret values are never returned)" } },
    )
    .patch(
      "/api/v1/buckets/:id/variables",
      ({ actor, params, body }) => ({
        data: patchVariables(deps, must(actor), params.id, body),
      }),
      { auth: "bucket_admin", params: BucketParams, body: PatchVariablesBody, detail: { tags, summary: "Replace public variables and set/delete secrets" } },
    )
    .get(
      "/api/v1/tags",
      ({ actor }) => ({
        data: { tags: listTags(deps, must(actor)) },
      }),
      { auth: "bucket_read", detail: { tags, summary: "The account's reusable bucket labels with counts" } },
    );
