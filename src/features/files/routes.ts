import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import { must, type authPlugin } from "../../http/auth";
import { presentBucket } from "../buckets";
import { attachBlob } from "./uploads/direct";
import { lockFiles, unlockFile } from "./locks";
import {
  AppendTextBody,
  AttachBody,
  BucketIdParams,
  ByPathQuery,
  CopyMoveBody,
  FileParams,
  FromTemplateBody,
  ListFilesQuery,
  LockFilesBody,
  PageQuery,
  RenameBody,
  ReorganizeBody,
  UnlockQuery,
} from "./model";
import { appendText, copyOrMoveFile, deleteFile, renameFile, reorganize } from "./ops";
import { presentFile, presentFileWrite } from "./present";
import { downloadUrl, fileHistory, getFile, listFiles } from "./service";
import { createFromTemplate, listTemplates } from "./bucket-templates";

const tags = ["Files"];

export const fileRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "files" })
    .use(auth)
    .get("/api/v1/buckets/templates", () => ({ data: { templates: listTemplates() } }), {
      auth: "bucket_read",
      detail: { tags: ["Buckets"], summary: "Trusted starter templates" },
    })
    .post(
      "/api/v1/buckets/from_template",
      async ({ actor, body, set }) => {
        set.status = 201;
        return { data: { bucket: presentBucket(deps, await createFromTemplate(deps, must(actor), body)) } };
      },
      { auth: "bucket_admin", body: FromTemplateBody, detail: { tags: ["Buckets"], summary: "Create a private bucket from a template (one version)" } },
    )
    .get("/api/v1/buckets/:id/files", ({ actor, params, query }) => ({ data: listFiles(deps, must(actor), params.id, query) }), {
      auth: "bucket_read",
      params: BucketIdParams,
      query: ListFilesQuery,
      detail: { tags, summary: "List files (limit default 100, max 1000; q filters paths)" },
    })
    .post(
      "/api/v1/buckets/:id/files",
      async ({ actor, params, body, set }) => {
        set.status = 201;
        return { data: { file: presentFile(deps, await attachBlob(deps, must(actor), params.id, body)) } };
      },
      {
        auth: "bucket_write",
        params: BucketIdParams,
        body: AttachBody,
        detail: { tags, summary: "Attach a direct upload's signed_blob_id (one-file session, one version)" },
      },
    )
    .get(
      "/api/v1/buckets/:id/files/by_path",
      ({ actor, params, query }) =>
        new Response(null, { status: 302, headers: { location: downloadUrl(deps, must(actor), params.id, query.path), "cache-control": "no-store" } }),
      { auth: "bucket_read", params: BucketIdParams, query: ByPathQuery, detail: { tags, summary: "Download: 302 to a signed, expiring same-origin URL" } },
    )
    .post(
      "/api/v1/buckets/:id/files/reorganize",
      ({ actor, params, body }) => ({ data: reorganize(deps, must(actor), params.id, body.operations, body.comment) }),
      { auth: "bucket_write", params: BucketIdParams, body: ReorganizeBody, detail: { tags, summary: "Apply rename/move/copy/delete operations atomically" } },
    )
    .post(
      "/api/v1/buckets/:id/files/append_text",
      async ({ actor, params, body }) => {
        const r = await appendText(deps, must(actor), params.id, body);
        return { data: presentFileWrite(deps, r.file, r.version_id) };
      },
      { auth: "bucket_write", params: BucketIdParams, body: AppendTextBody, detail: { tags, summary: "Append UTF-8 text to a text file (new version)" } },
    )
    .post("/api/v1/buckets/:id/files/lock", ({ actor, params, body }) => ({ data: lockFiles(deps, must(actor), params.id, body) }), {
      auth: "bucket_write",
      params: BucketIdParams,
      body: LockFilesBody,
      detail: { tags, summary: "Lock files for this credential" },
    })
    .get("/api/v1/buckets/:id/files/:file_id", ({ actor, params }) => ({ data: { file: getFile(deps, must(actor), params.id, params.file_id) } }), {
      auth: "bucket_read",
      params: FileParams,
      detail: { tags, summary: "File metadata" },
    })
    .get(
      "/api/v1/buckets/:id/files/:file_id/versions",
      ({ actor, params, query }) => ({ data: fileHistory(deps, must(actor), params.id, params.file_id, query) }),
      { auth: "bucket_read", params: FileParams, query: PageQuery, detail: { tags, summary: "The file's version history (newest first)" } },
    )
    .delete("/api/v1/buckets/:id/files/:file_id", ({ actor, params }) => ({ data: deleteFile(deps, must(actor), params.id, params.file_id) }), {
      auth: "bucket_write",
      params: FileParams,
      detail: { tags, summary: "Delete a file (new version; history kept)" },
    })
    .post(
      "/api/v1/buckets/:id/files/:file_id/rename",
      ({ actor, params, body }) => ({ data: { file: presentFile(deps, renameFile(deps, must(actor), params.id, params.file_id, body)) } }),
      { auth: "bucket_write", params: FileParams, body: RenameBody, detail: { tags, summary: "Rename or move within the bucket without re-upload" } },
    )
    .post(
      "/api/v1/buckets/:id/files/:file_id/copy",
      ({ actor, params, body, set }) => {
        set.status = 201;
        return { data: { file: presentFile(deps, copyOrMoveFile(deps, must(actor), params.id, params.file_id, body, "copy")) } };
      },
      { auth: "bucket_write", params: FileParams, body: CopyMoveBody, detail: { tags, summary: "Copy by blob reference (optionally to another bucket)" } },
    )
    .post(
      "/api/v1/buckets/:id/files/:file_id/move",
      ({ actor, params, body }) => ({ data: { file: presentFile(deps, copyOrMoveFile(deps, must(actor), params.id, params.file_id, body, "move")) } }),
      { auth: "bucket_write", params: FileParams, body: CopyMoveBody, detail: { tags, summary: "Move by blob reference (optionally to another bucket)" } },
    )
    .delete(
      "/api/v1/buckets/:id/files/:file_id/lock",
      ({ actor, params, query }) => ({ data: unlockFile(deps, must(actor), params.id, params.file_id, { force: query.force === "true" }) }),
      {
        auth: "bucket_write",
        params: FileParams,
        query: UnlockQuery,
        detail: { tags, summary: "Release this credential's file lock (force=true: bucket_admin breaks another's)" },
      },
    );
