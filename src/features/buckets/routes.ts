import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import { must, type authPlugin } from "../../http/auth";
import { BucketParams, CreateBucketBody, ListBucketsQuery, PatchBucketBody } from "./model";
import { presentBucket } from "./present";
import { createBucket, getBucket, listBuckets, updateBucket } from "./service";

const tags = ["Buckets"];

export const bucketRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "buckets" })
    .use(auth)
    .get("/api/v1/buckets", ({ actor, query }) => ({
      data: { buckets: listBuckets(deps, must(actor), { archived: query.archived === "true" }).map((b) => presentBucket(deps, b)) },
    }), { auth: "bucket_read", query: ListBucketsQuery, detail: { tags, summary: "List buckets (archived=true for archived ones)" } })
    .post("/api/v1/buckets", ({ actor, body, set }) => {
      set.status = 201;
      return { data: { bucket: presentBucket(deps, createBucket(deps, must(actor), body.bucket)) } };
    }, { auth: "bucket_admin", body: CreateBucketBody, detail: { tags, summary: "Create a bucket (account-wide bucket_admin)" } })
    .get("/api/v1/buckets/:id", ({ actor, params }) => ({
      data: { bucket: presentBucket(deps, getBucket(deps, must(actor), params.id)) },
    }), { auth: "bucket_read", params: BucketParams, detail: { tags, summary: "Get a bucket" } })
    .patch("/api/v1/buckets/:id", ({ actor, params, body }) => ({
      data: { bucket: presentBucket(deps, updateBucket(deps, must(actor), params.id, body.bucket)) },
    }), { auth: "bucket_admin", params: BucketParams, body: PatchBucketBody, detail: { tags, summary: "Update title, description, tags or metadata" } });
