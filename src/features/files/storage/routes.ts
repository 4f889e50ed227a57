// /_storage/<token>: Pier's signed object-storage endpoint on the API host. Not under /api/v1
// and `auth: "signed"`: the signed token is the credential (clients PUT without the bearer).
import { Elysia, t } from "elysia";
import type { Deps } from "../../../core/context";
import type { authPlugin } from "../../../http/auth";
import { extValue } from "../../../http/content-disposition";
import { noneMatch } from "../../../sites/negotiate";
import { receiveUpload, resolveDownload, type Download } from "./service";

const tags = ["Storage"];
const TokenParams = t.Object({ token: t.String({ maxLength: 4096 }) });

/** A signed download as HTTP: ETag and 304; Bun answers Range (and HEAD) from the file. */
function downloadResponse(d: Download, req: Request): Response {
  const etag = `"${d.sha256}"`;
  const headers: Record<string, string> = {
    "content-type": d.contentType,
    etag,
    "accept-ranges": "bytes",
    "cache-control": `private, max-age=${d.maxAgeSeconds}`,
    "content-disposition": `inline; filename*=${extValue(d.fileName)}`,
    // The API origin must never run uploaded HTML/SVG as a page of its own: opaque origin, no script.
    "content-security-policy": "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; media-src 'self'",
    "x-content-type-options": "nosniff",
  };
  if (noneMatch(req.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
  // For HEAD, Bun sends the file response's headers (with its length) and no body.
  return new Response(d.body, { status: 200, headers });
}

const serveDownload = async (deps: Deps, token: string, req: Request) => downloadResponse(await resolveDownload(deps, token), req);

export const storageRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "storage" })
    .use(auth)
    .put(
      "/_storage/:token",
      async ({ params, request }) => {
        const h = request.headers;
        const declared = { contentType: h.get("content-type"), contentMd5: h.get("content-md5"), contentLength: h.get("content-length") };
        const r = await receiveUpload(deps, params.token, declared, request.body);
        return new Response(JSON.stringify({ data: r }), {
          status: 200,
          headers: { "content-type": "application/json; charset=utf-8", etag: `"${r.sha256}"` },
        });
      },
      { auth: "signed", params: TokenParams, parse: "none", detail: { tags, summary: "Upload bytes to a signed URL (streams; size/MD5/sha256 checked)" } },
    )
    .get("/_storage/:token", ({ params, request }) => serveDownload(deps, params.token, request), {
      auth: "signed",
      params: TokenParams,
      detail: { tags, summary: "Download from a signed URL (ETag, 304, Range)" },
    })
    .head("/_storage/:token", ({ params, request }) => serveDownload(deps, params.token, request), {
      auth: "signed",
      params: TokenParams,
      detail: { tags, summary: "Headers of a signed download" },
    });
