// One size limit for JSON (and other small, parsed) request bodies: file bytes never go
// through the JSON API; uploads stream to their own storage endpoint. Declared sizes are
// refused before anything is read; undeclared (chunked) bodies are counted while read by the
// listener, so nothing larger is ever buffered.
import { Elysia } from "elysia";
import { ApiError } from "../core/errors";

export const JSON_BODY_LIMIT = 1024 * 1024;
/** Paths that stream large bodies themselves (file uploads carry any content type, JSON too). */
export const UNLIMITED_PATH_PREFIXES = ["/_storage/"];

const limitedType = (contentType: string | null) =>
  /^(application\/(json|[\w.+-]+\+json|x-www-form-urlencoded)|text\/plain)\b/i.test(contentType ?? "");
const exempt = (req: Request) => {
  const path = new URL(req.url).pathname;
  return UNLIMITED_PATH_PREFIXES.some((p) => path.startsWith(p));
};
const applies = (req: Request) => req.body !== null && limitedType(req.headers.get("content-type")) && !exempt(req);
export const tooLarge = () => new ApiError("PAYLOAD_TOO_LARGE", `Request bodies are limited to ${JSON_BODY_LIMIT} bytes.`, { max_bytes: JSON_BODY_LIMIT });

/**
 * For the listener: a request whose body has no Content-Length is read here, at most
 * JSON_BODY_LIMIT bytes, and handed on buffered. Throws PAYLOAD_TOO_LARGE past the limit.
 */
export async function bufferUndeclaredBody(req: Request): Promise<Request> {
  if (!applies(req) || req.headers.has("content-length")) return req;
  const reader = req.body!.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > JSON_BODY_LIMIT) {
      void reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return new Request(req, { body: Buffer.concat(chunks) });
}

/** In the app: refuse a declared Content-Length over the limit before the body is read. */
export const jsonBodyLimit = () =>
  new Elysia({ name: "json-body-limit" }).onRequest(({ request }) => {
    if (applies(request) && Number(request.headers.get("content-length") ?? 0) > JSON_BODY_LIMIT) throw tooLarge();
  });
