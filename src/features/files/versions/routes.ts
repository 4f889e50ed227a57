import { Elysia } from "elysia";
import type { Deps } from "../../../core/context";
import { must, type authPlugin } from "../../../http/auth";
import { BucketParams } from "../../buckets";
import { RestoreBody, VersionFilesQuery, VersionPageQuery, VersionParams } from "./model";
import { getVersion, listVersions, restoreVersion, versionFiles } from "./service";

const tags = ["Versions"];

export const versionRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "versions" })
    .use(auth)
    .get("/api/v1/buckets/:id/versions", ({ actor, params, query }) => ({ data: listVersions(deps, must(actor), params.id, query) }), {
      auth: "bucket_read",
      params: BucketParams,
      query: VersionPageQuery,
      detail: { tags, summary: "Immutable bucket versions, newest first (default 50, max 500)" },
    })
    .post(
      "/api/v1/buckets/:id/versions/restore",
      ({ actor, params, body, set }) => {
        set.status = 201;
        return { data: restoreVersion(deps, must(actor), params.id, body) };
      },
      { auth: "bucket_write", params: BucketParams, body: RestoreBody, detail: { tags, summary: "Make a version's snapshot the new latest version" } },
    )
    .get("/api/v1/buckets/:id/versions/:version_id", ({ actor, params }) => ({ data: getVersion(deps, must(actor), params.id, params.version_id) }), {
      auth: "bucket_read",
      params: VersionParams,
      detail: { tags, summary: "One version with the paths it changed" },
    })
    .get(
      "/api/v1/buckets/:id/versions/:version_id/files",
      ({ actor, params, query }) => ({ data: versionFiles(deps, must(actor), params.id, params.version_id, query) }),
      {
        auth: "bucket_read",
        params: VersionParams,
        query: VersionFilesQuery,
        detail: { tags, summary: "The files of a version's snapshot (path order; default 100, max 1000)" },
      },
    );
