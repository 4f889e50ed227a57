// /_storage/<token>: Pier's signed object-storage endpoint on the API host. Not under /api/v1
// and `auth: "signed"`: the signed token is the credential (clients PUT without the bearer).
import { Elysia, t } from "elysia";
import type { Deps } from "../../../core/context";
import type { authPlugin } from "../../../http/auth";
import { receiveUpload, serveDownload } from "./service";

const tags = ["Storage"];
const TokenParams = t.Object({ token: t.String({ maxLength: 4096 }) });

export const storageRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "storage" })
    .use(auth)
    .put("/_storage/:token", async ({ params, request }) => {
      const r = await receiveUpload(deps, params.token, request.headers, request.body);
      return new Response(JSON.stringify({ data: r }), { status: 200, headers: { "content-type": "application/json; charset=utf-8", etag: `"${r.sha256}"` } });
    }, { auth: "signed", params: TokenParams, parse: "none", detail: { tags, summary: "Upload bytes to a signed URL (streams; size/MD5/sha256 checked)" } })
    .get("/_storage/:token", ({ params, request }) => serveDownload(deps, params.token, request),
      { auth: "signed", params: TokenParams, detail: { tags, summary: "Download from a signed URL (ETag, 304, Range)" } })
    .head("/_storage/:token", ({ params, request }) => serveDownload(deps, params.token, request),
      { auth: "signed", params: TokenParams, detail: { tags, summary: "Headers of a signed download" } });
