// Publish-session routes: validate, call one service function, wrap in { data }.
import { Elysia } from "elysia";
import type { Deps } from "../../../core/context";
import { must, type authPlugin } from "../../../http/auth";
import { triggerOf } from "../trigger";
import { CreatePublishSessionBody, EmptyBody, SessionParams } from "./model";
import { createPublishSession, finalizePublishSession, refreshUploads } from "./service";

const tags = ["Publish sessions"];

export const publishSessionRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "publish-sessions" })
    .use(auth)
    .onTransform((ctx) => {
      if (ctx.body === undefined && ctx.request.method !== "GET") (ctx as { body: unknown }).body = {};
    })
    .post(
      "/api/v1/publish_sessions",
      async ({ actor, body, set }) => {
        set.status = 201;
        return { data: await createPublishSession(deps, must(actor), body) };
      },
      { auth: "bucket_admin", body: CreatePublishSessionBody, detail: { tags, summary: "Start a folder publish: upload descriptors for changed files only" } },
    )
    .post(
      "/api/v1/publish_sessions/:id/finalize",
      async ({ actor, params, set, request }) => {
        const r = await finalizePublishSession(deps, must(actor), params.id, triggerOf(request));
        set.status = 202;
        return { data: r };
      },
      {
        auth: "bucket_admin",
        params: SessionParams,
        body: EmptyBody,
        detail: { tags, summary: "Write the files to the bucket and queue the publication (202)" },
      },
    )
    .post(
      "/api/v1/publish_sessions/:id/uploads/refresh",
      async ({ actor, params }) => ({
        data: await refreshUploads(deps, must(actor), params.id),
      }),
      { auth: "bucket_admin", params: SessionParams, body: EmptyBody, detail: { tags, summary: "Fresh upload URLs for files not uploaded yet" } },
    );
