import { Elysia } from "elysia";
import type { Deps } from "../../../core/context";
import { must, type authPlugin } from "../../../http/auth";
import { createDirectUpload } from "./direct";
import { BucketParams, CreateSessionBody, DeclareBody, DirectUploadBody, FinalizeBatchBody, FinalizeBody, SessionParams } from "./model";
import { createSession, declareUploads, finalizeBatch, finalizeSession, getSession, presentSession } from "./sessions";

const tags = ["Uploads"];
const base = "/api/v1/buckets/:id/upload_sessions";

export const uploadRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "uploads" })
    .use(auth)
    .post(
      "/api/v1/direct_uploads",
      async ({ actor, body, set }) => {
        set.status = 201;
        return { data: await createDirectUpload(deps, must(actor), body) };
      },
      { auth: "bucket_write", body: DirectUploadBody, detail: { tags, summary: "Declare one file: signed blob id + PUT descriptor" } },
    )
    .post(
      base,
      ({ actor, params, body, set }) => {
        set.status = 201;
        return { data: { upload_session: presentSession(createSession(deps, must(actor), params.id, body)) } };
      },
      {
        auth: "bucket_write",
        params: BucketParams,
        body: CreateSessionBody,
        detail: { tags, summary: "Open an upload session (holds the bucket write lock)" },
      },
    )
    .get(`${base}/:sid`, ({ actor, params }) => ({ data: { upload_session: presentSession(getSession(deps, must(actor), params.id, params.sid)) } }), {
      auth: "bucket_write",
      params: SessionParams,
      detail: { tags, summary: "Upload session state" },
    })
    .post(`${base}/:sid/uploads`, async ({ actor, params, body }) => ({ data: await declareUploads(deps, must(actor), params.id, params.sid, body.files) }), {
      auth: "bucket_write",
      params: SessionParams,
      body: DeclareBody,
      detail: { tags, summary: "Descriptors for a sub-batch (none for bytes Pier already has)" },
    })
    .post(
      `${base}/:sid/finalize_batch`,
      async ({ actor, params, body }) => ({ data: await finalizeBatch(deps, must(actor), params.id, params.sid, body.limit ?? 12) }),
      {
        auth: "bucket_write",
        params: SessionParams,
        body: FinalizeBatchBody,
        detail: { tags, summary: "Commit a bounded batch of uploaded files (never prunes)" },
      },
    )
    .post(
      `${base}/:sid/finalize`,
      async ({ actor, params, body, set }) => {
        const r = await finalizeSession(deps, must(actor), params.id, params.sid, body.complete);
        if (r.pending) {
          set.status = 202;
          set.headers["retry-after"] = String(r.retryAfter);
        }
        return { data: r.data };
      },
      {
        auth: "bucket_write",
        params: SessionParams,
        body: FinalizeBody,
        detail: { tags, summary: "Close the session: 200, or 202 finalize_pending (repeat the call)" },
      },
    );
