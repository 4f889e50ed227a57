// Form submission routes (owner side): validate, call one service function, wrap in { data }.
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import { must, type authPlugin } from "../../http/auth";
import "./index"; // registers the publication_forms check with buckets
import { BucketParams, DeleteSubmissionBody, ListSubmissionsQuery, PatchSubmissionBody, ReplyBody, SubmissionParams } from "./model";
import { deleteSubmission, getSubmission, listSubmissions, patchSubmission, replyToSubmission } from "./service";

const tags = ["Forms"];

export const formRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "forms" })
    .use(auth)
    .get("/api/v1/buckets/:id/form_submissions", ({ actor, params, query }) => ({ data: listSubmissions(deps, must(actor), params.id, query) }), {
      auth: "bucket_write",
      params: BucketParams,
      query: ListSubmissionsQuery,
      detail: { tags, summary: "List a bucket's form submissions, decrypted, newest first (with replies and the plan's quota)" },
    })
    .get(
      "/api/v1/buckets/:id/form_submissions/:submission_id",
      ({ actor, params }) => ({ data: getSubmission(deps, must(actor), params.id, params.submission_id) }),
      { auth: "bucket_write", params: SubmissionParams, detail: { tags, summary: "Get one form submission with its replies" } },
    )
    .patch(
      "/api/v1/buckets/:id/form_submissions/:submission_id",
      ({ actor, params, body }) => ({ data: patchSubmission(deps, must(actor), params.id, params.submission_id, body) }),
      { auth: "bucket_write", params: SubmissionParams, body: PatchSubmissionBody, detail: { tags, summary: "Correct stored field values (no new fields)" } },
    )
    .post(
      "/api/v1/buckets/:id/form_submissions/:submission_id/reply",
      ({ actor, params, body, set }) => {
        set.status = 201;
        return { data: replyToSubmission(deps, must(actor), params.id, params.submission_id, body) };
      },
      { auth: "bucket_write", params: SubmissionParams, body: ReplyBody, detail: { tags, summary: "Reply to a submission (team, or public on comments)" } },
    )
    .delete(
      "/api/v1/buckets/:id/form_submissions/:submission_id",
      ({ actor, params }) => ({ data: deleteSubmission(deps, must(actor), params.id, params.submission_id) }),
      {
        auth: "bucket_write",
        params: SubmissionParams,
        body: DeleteSubmissionBody,
        detail: { tags, summary: "Delete a reply, or a submission with its replies" },
      },
    );
