// Request body limits, enforced by the listener before any route, parser or credential check
// runs: each route accepts what its largest valid body needs and no more, a declared
// Content-Length over the limit is refused before a byte is read, and an undeclared (chunked)
// body is counted while it streams. Bodies larger than an anonymous caller can need are only
// read for a caller whose credential is valid, so an unauthenticated client can make Pier hold
// and parse at most ANONYMOUS_BODY_LIMIT bytes. Storage PUTs stream to disk under their own
// signed size and are never buffered here.
import type { Server } from "bun";
import { ApiError } from "../core/errors";

const KiB = 1024;
const MiB = 1024 * KiB;

/** Every body on the API and site hosts unless the route is listed below: forms, small JSON writes. */
export const DEFAULT_BODY_LIMIT = 64 * KiB;
/** The most any caller without a valid credential can make Pier read. */
export const ANONYMOUS_BODY_LIMIT = DEFAULT_BODY_LIMIT;
/** Site hosts take form posts to their gates (a password or an email address) and nothing bigger. */
export const SITE_BODY_LIMIT = 16 * KiB;
/**
 * A post to a site's built-in forms (`/_pier/form/<name>`): the largest form's fields at their
 * documented maxima (5,820 characters) in any script (a CJK character is 9 bytes urlencoded:
 * 52 KB), with room for the proof of work, a Turnstile token and the context fields. No more
 * than an anonymous caller may send anyway.
 */
export const FORM_BODY_LIMIT = ANONYMOUS_BODY_LIMIT;
/** The largest JSON body of an ordinary route (lists of up to 1,000 paths, 100 variables, an MCP text file). */
export const JSON_BODY_LIMIT = 1 * MiB;
/**
 * The dashboard's text editor (a new file, or a file's Edit): up to the 524,288 characters a
 * typed write takes (TEXT_WRITE_MAX_CHARS), urlencoded (up to 9 bytes each).
 */
export const TEXT_FORM_BODY_LIMIT = 5 * MiB;
/** A publish manifest lists up to 20,000 files (~170 bytes each with a short path). */
export const MANIFEST_BODY_LIMIT = 8 * MiB;

/** Paths that stream their bodies themselves (storage PUTs: bounded by the signed size). */
export const STREAMED_PATH_PREFIXES = ["/_storage/"];

const ID = "[^/]+";
/** Routes whose valid bodies can exceed DEFAULT_BODY_LIMIT, with the size their largest valid body needs. */
const LARGER_LIMITS: Array<{ method: string; path: RegExp; bytes: number }> = [
  { method: "POST", path: /^\/api\/v1\/publish_sessions$/, bytes: MANIFEST_BODY_LIMIT },
  { method: "POST", path: /^\/mcp$/, bytes: JSON_BODY_LIMIT },
  { method: "POST", path: new RegExp(`^/api/v1/buckets/${ID}/files/(reorganize|append_text|lock)$`), bytes: JSON_BODY_LIMIT },
  // The dashboard's Append text: what append_text takes (65,536 characters), urlencoded (up to 9 bytes each).
  { method: "POST", path: new RegExp(`^/dashboard/buckets/${ID}/files/${ID}/append$`), bytes: JSON_BODY_LIMIT },
  { method: "POST", path: new RegExp(`^/dashboard/buckets/${ID}/files/(new|${ID}/edit)$`), bytes: TEXT_FORM_BODY_LIMIT },
  // The dashboard's metadata editor: up to 100,000 characters of JSON, urlencoded.
  { method: "POST", path: new RegExp(`^/dashboard/buckets/${ID}/settings/metadata$`), bytes: JSON_BODY_LIMIT },
  { method: "POST", path: new RegExp(`^/api/v1/buckets/${ID}/upload_sessions/${ID}/uploads$`), bytes: JSON_BODY_LIMIT },
  { method: "PATCH", path: new RegExp(`^/api/v1/buckets/${ID}/variables$`), bytes: JSON_BODY_LIMIT },
  { method: "PATCH", path: new RegExp(`^/api/v1/buckets/${ID}$`), bytes: JSON_BODY_LIMIT },
  { method: "POST", path: /^\/api\/v1\/buckets$/, bytes: JSON_BODY_LIMIT },
  // A side for each of a few thousand conflicting paths (resolve_all takes any number).
  { method: "POST", path: new RegExp(`^/api/v1/buckets/${ID}/github_sync/sync$`), bytes: JSON_BODY_LIMIT },
];

/** The body limit of an API-host request, or null for paths that stream their own bodies. */
export function bodyLimitFor(method: string, pathname: string): number | null {
  if (STREAMED_PATH_PREFIXES.some((p) => pathname.startsWith(p))) return null;
  for (const r of LARGER_LIMITS) if (r.method === method && r.path.test(pathname)) return r.bytes;
  return DEFAULT_BODY_LIMIT;
}

/** A post to a site's built-in forms. */
export const isFormPost = (method: string, pathname: string): boolean => method === "POST" && pathname.startsWith("/_pier/form/");

/** The body limit of a site-host request: form posts have their own, everything else the gates' (D233). */
export const siteBodyLimitFor = (method: string, pathname: string): number => (isFormPost(method, pathname) ? FORM_BODY_LIMIT : SITE_BODY_LIMIT);

/**
 * Bun's socket timeouts fire on a shared 4-second tick, so a timeout of 2 s meant "at the next
 * tick": anywhere from 0 to 4 s. 5 s is two ticks, 4 to 8 s.
 */
const REFUSED_BODY_LINGER_SECONDS = 5;

/**
 * Keep the connection of a request whose body was refused unread for a few seconds, then cut it
 * whatever the client does (nginx's bounded lingering close); its answer goes without
 * `Connection: close`. Closing at once while the client is still sending makes the kernel answer
 * the unread bytes with a TCP reset, which can reach the client before the error and discard it
 * (curl then shows "connection reset" instead of the 413). Bun discards what keeps arriving.
 */
function lingerAfterRefusal(req: Request, server: Pick<Server<unknown>, "timeout">): void {
  server.timeout(req, REFUSED_BODY_LINGER_SECONDS);
}

/**
 * The connection's timer once a request with a body is answered. Bun keeps a request's timer
 * (switched off while an upload streams or a worker relays, the body deadline while one is
 * read) for its connection after the answer: back to the idle timeout, or a linger after a
 * refusal.
 */
export function endBodyTimer(req: Request, server: Pick<Server<unknown>, "timeout">, refused: boolean, idleTimeoutSeconds: number): void {
  if (refused) lingerAfterRefusal(req, server);
  else server.timeout(req, idleTimeoutSeconds);
}

export const tooLarge = (limit: number) => new ApiError("PAYLOAD_TOO_LARGE", `This request's body is limited to ${limit} bytes.`, { max_bytes: limit });

const bodyTimedOut = (seconds: number) =>
  new ApiError("BODY_TIMEOUT", `The request body did not arrive within ${seconds} seconds.`, { timeout_seconds: seconds });

export interface BodyRules {
  /** The route's limit. */
  limit: number;
  /** Seconds the whole body may take to arrive. */
  timeoutSeconds: number;
  /** Whether the caller holds a valid credential; asked only for bodies over ANONYMOUS_BODY_LIMIT. */
  credentialed: () => boolean;
}

/** The declared Content-Length: a number, null when absent, NaN when malformed. */
function declaredLength(req: Request): number | null {
  const raw = req.headers.get("content-length");
  if (raw === null) return null;
  return /^\d{1,15}$/.test(raw.trim()) ? Number(raw) : Number.NaN;
}

/** Refuse a declared size before reading: over the route's limit, or over the anonymous one without a credential. */
function checkDeclared(req: Request, rules: BodyRules): void {
  const len = declaredLength(req);
  if (len === null) return;
  if (Number.isNaN(len)) throw new ApiError("BAD_REQUEST", "Content-Length is not a number.");
  if (len > rules.limit) throw tooLarge(rules.limit);
  if (len > ANONYMOUS_BODY_LIMIT && !rules.credentialed()) throw tooLarge(ANONYMOUS_BODY_LIMIT);
}

/**
 * Read the whole body under `rules`: at most the route's limit (the anonymous one until the
 * caller proves a credential), within the time limit. Any content type, declared or chunked.
 * Returns null when the request has no body.
 */
export async function readBoundedBody(req: Request, rules: BodyRules): Promise<Buffer<ArrayBuffer> | null> {
  checkDeclared(req, rules);
  if (req.body === null) return null;
  let allowed = Math.min(rules.limit, ANONYMOUS_BODY_LIMIT);
  const chunks: Uint8Array[] = [];
  return readUnderDeadline(
    req.body.getReader(),
    rules.timeoutSeconds,
    chunks,
    (size) => {
      if (size > allowed) {
        if (allowed < rules.limit && rules.credentialed()) allowed = rules.limit;
        if (size > allowed) throw tooLarge(allowed);
      }
      return undefined;
    },
    () => Buffer.concat(chunks) as Buffer<ArrayBuffer>,
  );
}

/**
 * Read a body into `chunks` under the body deadline. After each chunk `judge` sees the size so far
 * and throws to refuse, returns undefined to read on, or returns the answer (the reader is then
 * the answer's to finish); `atEnd` answers once the body is whole. A refusal, the deadline or a
 * failing client cancels the reader.
 */
async function readUnderDeadline<T>(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  timeoutSeconds: number,
  chunks: Uint8Array[],
  judge: (size: number) => T | undefined,
  atEnd: () => T,
): Promise<T> {
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(bodyTimedOut(timeoutSeconds)), timeoutSeconds * 1000);
  });
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), deadline]);
      if (done) return atEnd();
      size += value.byteLength;
      chunks.push(value);
      const answer = judge(size);
      if (answer !== undefined) return answer;
    }
  } catch (e) {
    void reader.cancel().catch(() => {});
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

/** What a serving worker relays of an API body (D265): the bytes read whole, or a stream the primary reads. */
export type RelayBody = { bytes: Buffer<ArrayBuffer> | null; stream?: undefined } | { bytes?: undefined; stream: ReadableStream<Uint8Array> };

/**
 * A serving worker's read of an API request's body before relaying it (D265): whole, under the
 * body deadline, when it is at most ANONYMOUS_BODY_LIMIT, so a client that sends slowly holds its
 * own connection and never a relay request. A larger body may come only from a caller with a
 * valid credential, which only the primary can check: from a request that presents one
 * (`rules.credentialed` says whether it does) it is handed on as a stream (what was read, then
 * the rest), and the primary applies the route's rules as to any body; from a request that
 * presents none it is refused here, as the primary would. Over the route's limit, refused here.
 */
export async function readRelayBody(req: Request, rules: BodyRules): Promise<RelayBody> {
  checkDeclared(req, rules);
  if (req.body === null) return { bytes: null };
  const declared = declaredLength(req);
  if (declared !== null && declared > ANONYMOUS_BODY_LIMIT) return { stream: req.body };
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  return readUnderDeadline<RelayBody>(
    reader,
    rules.timeoutSeconds,
    chunks,
    (size) => {
      if (size <= ANONYMOUS_BODY_LIMIT) return undefined;
      if (!rules.credentialed()) throw tooLarge(ANONYMOUS_BODY_LIMIT);
      if (size > rules.limit) throw tooLarge(rules.limit);
      return { stream: prefixedStream(chunks, reader) };
    },
    () => ({ bytes: Buffer.concat(chunks) as Buffer<ArrayBuffer> }),
  );
}

/** The chunks already read, then what the reader still gives. */
function prefixedStream(read: Uint8Array[], reader: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const first = read.shift();
        if (first !== undefined) return controller.enqueue(first);
        const next = await reader.read();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}
