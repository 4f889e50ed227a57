// Serving one deploy file: representation by Accept-Encoding (precompressed at build time),
// strong ETag and 304, single Range (206/416), HEAD. Small files come from a byte-bounded
// in-memory LRU (this is what puts Pier level with nginx on small files); big files stream from
// the blob store with sendfile via Bun.file().
import type { Counter } from "../core/metrics";
import { LRUCache } from "lru-cache";
import type { BlobStore } from "../blobs/store";
import type { DeployFile } from "../features/publish";
import { clientVersion } from "../core/version";
import { PROTECTED_HEADERS } from "../features/publish";
import { freshRequestId, requestId } from "../http/request-info";
import { noneMatch, parseRange, pickEncoding, type Encoding } from "./negotiate";

/** Files up to this size are kept in memory once read. */
export const MEMORY_FILE_LIMIT = 2 * 1024 * 1024;

export interface ServeOptions {
  status?: number;
  cacheControl: string;
  /** A module-level constant object (it keys the header cache by identity). */
  extraHeaders: Record<string, string>;
  /** false for error pages (404.html): no 304/Range games on those. */
  conditional: boolean;
  /** The site's `_headers` for this path, interned (see siteHeaderSet): baked into the cached headers. */
  siteHeaders?: SiteHeaderSet | null;
}

/**
 * The `_headers` changes that apply to one answer, with what decides how they apply. One object
 * per distinct set (interned by the site server), so the header cache can key on its identity.
 */
export interface SiteHeaderSet {
  changes: Map<string, string | null>;
  custom: boolean;
  priv: boolean;
  extra: Record<string, string>;
}

/**
 * `_headers` on a site answer. Pier's protective headers were refused at build time; Set-Cookie
 * goes out on custom domains only (under the shared sites domain it could shadow another site's
 * or Pier's own cookies); a gated site stays uncacheable by shared caches whatever the file says;
 * the preview's noindex header is put back last.
 */
export function applySiteHeaders(h: Headers, s: SiteHeaderSet): void {
  for (const [name, value] of s.changes) {
    if (PROTECTED_HEADERS.has(name)) continue;
    if (name === "set-cookie") {
      if (s.custom && value !== null) for (const cookie of value.split("\n")) h.append("set-cookie", cookie);
      continue;
    }
    if (name === "cache-control" && s.priv) continue;
    if (value === null) h.delete(name);
    else h.set(name, value);
  }
  for (const [name, value] of Object.entries(s.extra)) h.set(name, value);
}

/** Headers a Response copies; each answer adds only its request id (and then counts as complete). */
const completed = new WeakSet<Response>();

/** Did the file server build this answer whole (base headers and `_headers` already in)? */
export const isComplete = (res: Response): boolean => completed.has(res);

/** An answer built from a complete one (forms injection keeps its headers). */
export function markComplete(res: Response): Response {
  completed.add(res);
  return res;
}

/** The answer from precomputed headers: a copy with this request's id, the only per-request part. */
export function completeResponse(req: Request, body: BodyInit | null, status: number, prepared: Headers): Response {
  const h = new Headers(prepared);
  h.set("x-request-id", requestId(req));
  const res = new Response(body, { status, headers: h });
  completed.add(res);
  return res;
}

interface Representation {
  sha: string;
  size: number;
  etag: string;
  encoding: Encoding;
}

export class FileServer {
  // Keyed by the sha256 of the stored representation: content-addressed, so one entry serves
  // every deploy and path that holds the same bytes (the deploy+path+encoding key, deduplicated).
  // Blobs, not Uint8Arrays: a Response made from a Blob does not copy the bytes.
  private readonly memory: LRUCache<string, Blob>;
  // Response headers per file representation, built once (Headers passed to a Response are copied).
  private readonly headerCache = new WeakMap<Record<string, string>, WeakMap<DeployFile, Map<string, Headers>>>();
  private readonly answers = new WeakMap<Blob, Map<Headers, Response>>();

  constructor(
    private readonly blobs: BlobStore,
    maxBytes = 128 * 1024 * 1024,
    /** Counts body bytes handed out (pier_site_bytes_served_total); a HEAD's body is never sent. */
    private readonly bytesServed: Counter | null = null,
  ) {
    this.memory = new LRUCache<string, Blob>({ maxSize: maxBytes, sizeCalculation: (b) => b.size || 1 });
  }

  /** Synchronous when the bytes are in memory (the hot path): no promise per request. */
  serve(req: Request, f: DeployFile, o: ServeOptions): Response | Promise<Response> {
    const range = o.conditional ? req.headers.get("range") : null;
    // A Range applies to the identity representation (what Accept-Ranges advertises).
    const encoding = range ? "identity" : pickEncoding(req.headers.get("accept-encoding"), f.brSha256 !== null, f.gzipSha256 !== null);
    const rep: Representation =
      encoding === "br"
        ? { sha: f.brSha256!, size: f.brSize!, etag: f.etag.slice(0, -1) + '-br"', encoding }
        : encoding === "gzip"
          ? { sha: f.gzipSha256!, size: f.gzipSize!, etag: f.etag.slice(0, -1) + '-gz"', encoding }
          : { sha: f.blobSha256, size: f.size, etag: f.etag, encoding };
    const hasVariants = f.brSha256 !== null || f.gzipSha256 !== null;

    if (o.conditional && noneMatch(req.headers.get("if-none-match"), rep.etag)) {
      return completeResponse(req, null, 304, this.headers(f, rep, o, hasVariants, 304));
    }

    let body: Blob | undefined;
    if (rep.size > MEMORY_FILE_LIMIT) body = this.blobs.file(rep.sha);
    else if (!(body = this.memory.get(rep.sha))) return this.load(rep.sha).then(() => this.serve(req, f, o));

    if (range) {
      const ifRange = req.headers.get("if-range");
      const r = ifRange !== null && ifRange.trim() !== rep.etag ? { kind: "none" as const } : parseRange(range, rep.size);
      if (r.kind === "unsatisfiable") {
        const headers = new Headers({
          "content-range": `bytes */${rep.size}`,
          "cache-control": o.cacheControl,
          "x-pier-client-version": clientVersion,
          ...o.extraHeaders,
        });
        if (o.siteHeaders) applySiteHeaders(headers, o.siteHeaders);
        return completeResponse(req, null, 416, headers);
      }
      if (r.kind === "range") {
        const headers = new Headers(this.headers(f, rep, o, hasVariants, 206));
        headers.set("content-range", `bytes ${r.start}-${r.end}/${rep.size}`);
        if (req.method !== "HEAD") this.bytesServed?.inc(0, r.end + 1 - r.start);
        return completeResponse(req, body.slice(r.start, r.end + 1), 206, headers);
      }
    }
    if (req.method !== "HEAD") this.bytesServed?.inc(0, rep.size);
    const status = o.status ?? 200;
    const prepared = this.headers(f, rep, o, hasVariants, status);
    return status === 200 && rep.size <= MEMORY_FILE_LIMIT ? this.cloneAnswer(body, prepared) : completeResponse(req, body, status, prepared);
  }

  /**
   * A 200 of an in-memory file: a clone of an answer prepared once per body and header set (Bun
   * copies the headers and shares the bytes), cheaper than building Headers and a Response per
   * request. Keyed weakly by the cached Blob: when the LRU drops the bytes, their answers go too.
   */
  private cloneAnswer(body: Blob, prepared: Headers): Response {
    let byHeaders = this.answers.get(body);
    if (byHeaders === undefined) this.answers.set(body, (byHeaders = new Map()));
    let base = byHeaders.get(prepared);
    if (base === undefined) {
      // Header sets per body are few (encodings, caching, `_headers` outcomes); the bound only guards.
      if (byHeaders.size >= 64) byHeaders.clear();
      byHeaders.set(prepared, (base = new Response(body, { status: 200, headers: prepared })));
    }
    const res = base.clone();
    res.headers.set("x-request-id", freshRequestId());
    completed.add(res);
    return res;
  }

  /**
   * The headers of one representation of one deploy file, built once: type, caching, ETag,
   * encoding, Pier's base headers and the path's `_headers` blocks. Keyed by the extra headers'
   * and header set's identities (both interned), so the variants per file stay few.
   */
  private headers(f: DeployFile, rep: Representation, o: ServeOptions, hasVariants: boolean, status: number): Headers {
    let byFile = this.headerCache.get(o.extraHeaders);
    if (!byFile) this.headerCache.set(o.extraHeaders, (byFile = new WeakMap()));
    let byKey = byFile.get(f);
    if (!byKey) byFile.set(f, (byKey = new Map()));
    const set = o.siteHeaders ?? null;
    const key = `${rep.encoding}|${o.cacheControl}|${status === 304 ? 304 : 200}|${set === null ? 0 : this.setId(set)}`;
    let h = byKey.get(key);
    if (!h) {
      // A 304 carries what a cache needs to refresh its copy, not the body's description.
      const init: Record<string, string> =
        status === 304
          ? { etag: rep.etag, "cache-control": o.cacheControl, "x-pier-client-version": clientVersion, ...o.extraHeaders }
          : {
              "content-type": f.contentType,
              "cache-control": o.cacheControl,
              "x-content-type-options": "nosniff",
              etag: rep.etag,
              "x-pier-client-version": clientVersion,
              ...o.extraHeaders,
            };
      if (hasVariants) init.vary = "Accept-Encoding";
      if (status !== 304) {
        if (rep.encoding === "identity") init["accept-ranges"] = "bytes";
        else init["content-encoding"] = rep.encoding;
      }
      h = new Headers(init);
      if (set !== null) applySiteHeaders(h, set);
      // Interned sets are few per site; the bound only guards against a pathological one.
      if (byKey.size >= 64) byKey.clear();
      byKey.set(key, h);
    }
    return h;
  }

  private readonly setIds = new WeakMap<SiteHeaderSet, number>();
  private nextSetId = 1;
  private setId(set: SiteHeaderSet): number {
    let id = this.setIds.get(set);
    if (id === undefined) this.setIds.set(set, (id = this.nextSetId++));
    return id;
  }

  /** Read a small file into memory (big files are never loaded: they go out with sendfile). */
  private async load(sha: string): Promise<Blob> {
    let blob = this.memory.get(sha);
    if (!blob) {
      blob = new Blob([await this.blobs.file(sha).bytes()]);
      this.memory.set(sha, blob);
    }
    return blob;
  }

  /** Read a stored file as text (README rendering). */
  async text(sha: string, size: number): Promise<string> {
    return size > MEMORY_FILE_LIMIT ? this.blobs.file(sha).text() : (await this.load(sha)).text();
  }
}
