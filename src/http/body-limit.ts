// One size limit for JSON request bodies (file bytes never go through the JSON API; uploads
// use their own storage endpoint). Declared sizes are refused before reading; undeclared
// (chunked) bodies are counted while read, so nothing larger is ever buffered.
import { Elysia } from "elysia";
import { ApiError } from "../core/errors";

export const JSON_BODY_LIMIT = 1024 * 1024;
/** Paths that stream large bodies themselves (file uploads carry any content type, JSON too). */
export const UNLIMITED_PATH_PREFIXES = ["/_storage/"];

const exempt = (req: Request) => {
  const path = new URL(req.url).pathname;
  return UNLIMITED_PATH_PREFIXES.some((p) => path.startsWith(p));
};

const limited = (contentType: string) => /^(application\/(json|[\w.+-]+\+json|x-www-form-urlencoded)|text\/plain)\b/i.test(contentType);
const tooLarge = () => new ApiError("PAYLOAD_TOO_LARGE", `Request bodies are limited to ${JSON_BODY_LIMIT} bytes.`, { max_bytes: JSON_BODY_LIMIT });

async function readLimited(body: ReadableStream<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
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
  return new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks));
}

export const jsonBodyLimit = () =>
  new Elysia({ name: "json-body-limit" })
    .onRequest(({ request }) => {
      const declared = Number(request.headers.get("content-length") ?? 0);
      if (declared > JSON_BODY_LIMIT && limited(request.headers.get("content-type") ?? "") && !exempt(request)) throw tooLarge();
    })
    .onParse({ as: "global" }, async ({ request, contentType }) => {
      if (!/^application\/(json|[\w.+-]+\+json)$/i.test(contentType) || !request.body || exempt(request)) return;
      const text = await readLimited(request.body);
      // An empty body on a JSON route is "no fields", so schemas report what is missing.
      if (text.trim() === "") return {};
      try {
        return JSON.parse(text);
      } catch {
        throw new ApiError("BAD_REQUEST", "The request body is not valid JSON.");
      }
    });
