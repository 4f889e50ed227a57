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
 * The fields a shared cache takes its orders from: Cache-Control, and the ones CDNs obey instead
 * of it (RFC 9213's CDN-Cache-Control and the vendors' own: Cloudflare-CDN-Cache-Control,
 * Vercel-CDN-Cache-Control, ..., Surrogate-Control of Fastly and Varnish, Akamai's Edge-Control).
 */
const isCacheOrder = (name: string): boolean =>
  name === "cache-control" || name.endsWith("cdn-cache-control") || name === "surrogate-control" || name === "edge-control";

/**
 * Clear-Site-Data without the types that reach past the answering origin: "cookies" (and "*",
 * which includes it) clear the cookies of the whole registrable domain, so under the shared
 * sites domain one site could sign visitors out of every other site and of Pier's own pages.
 * "cache", "storage" and the like stay within the site's origin and go out as written.
 */
function ownOriginOnly(value: string): string {
  const kept = value.split(",").filter((t) => {
    const type = t.trim().replace(/^"|"$/g, "").toLowerCase();
    return type !== "" && type !== "cookies" && type !== "*";
  });
  return kept.map((t) => t.trim()).join(", ");
}

/**
 * `_headers` on a site answer. Pier's protective headers were refused at build time; Set-Cookie
 * goes out on custom domains only (under the shared sites domain it could shadow another site's
 * or Pier's own cookies), and so does Clear-Site-Data's clearing of cookies; a gated site stays uncacheable by shared caches whatever the file says
 * (no cache orders from it at all: a CDN in front obeys CDN-Cache-Control over Pier's `private`);
 * the preview's noindex header is put back last.
 */
export function applySiteHeaders(h: Headers, s: SiteHeaderSet): void {
  for (const [name, value] of s.changes) {
    if (PROTECTED_HEADERS.has(name)) continue;
    if (name === "set-cookie") {
      if (s.custom && value !== null) for (const cookie of value.split("\n")) h.append("set-cookie", cookie);
      continue;
    }
    if (s.priv && isCacheOrder(name)) continue;
    if (name === "clear-site-data" && value !== null && !s.custom) {
      const kept = ownOriginOnly(value);
      if (kept !== "") h.set(name, kept);
      continue;
    }
    if (value === null) h.delete(name);
    else h.set(name, value);
  }
  for (const [name, value] of Object.entries(s.extra)) h.set(name, value);
}

/**
 * Marks an answer the file server built whole. An own property of the Response rather than a
 * WeakSet entry: adding to a WeakSet cost ~55 ns per answer and left a weak entry for every
 * collection to process (bench/README.md, 2026-11-28); the property costs a store.
 */
const COMPLETE = Symbol("pier.complete");
type Marked = Response & { [COMPLETE]?: true };

/** Did the file server build this answer whole (base headers and `_headers` already in)? */
export const isComplete = (res: Response): boolean => (res as Marked)[COMPLETE] === true;

/** An answer built from a complete one (forms injection keeps its headers). */
export function markComplete(res: Response): Response {
  (res as Marked)[COMPLETE] = true;
  return res;
}

/** The answer from precomputed headers: a copy with this request's id, the only per-request part. */
export function completeResponse(req: Request, body: BodyInit | null, status: number, prepared: Headers): Response {
  const h = new Headers(prepared);
  h.set("x-request-id", requestId(req));
  return markComplete(new Response(body, { status, headers: h }));
}

/** A clone of a prepared answer with this request's id: the one header set per request. */
function withRequestId(res: Response): Response {
  res.headers.set("x-request-id", freshRequestId());
  return markComplete(res);
}

interface Representation {
  sha: string;
  size: number;
  etag: string;
  encoding: Encoding;
}

/** One header set of one representation, built once; its prepared answers go with their bytes. */
interface Prepared {
  rep: Representation;
  cacheControl: string;
  extra: Record<string, string>;
  set: SiteHeaderSet | null;
  notModified: boolean;
  headers: Headers;
  /** The 200 answer per cached body, cloned per request (weak: dropped with the bytes). */
  answers: WeakMap<Blob, Response>;
  /** The 304 answer (no body), cloned per request. */
  notModifiedAnswer: Response | null;
}

/** What never changes for a deploy file: its representations and the header sets asked so far. */
interface FilePlan {
  identity: Representation;
  br: Representation | null;
  gzip: Representation | null;
  hasVariants: boolean;
  prepared: Prepared[];
}

/** Header sets per file are few (encodings, caching, `_headers` outcomes); the bound only guards. */
const PREPARED_MAX = 64;

export class FileServer {
  // Keyed by the sha256 of the stored representation: content-addressed, so one entry serves
  // every deploy and path that holds the same bytes (the deploy+path+encoding key, deduplicated).
  // Blobs, not Uint8Arrays: a Response made from a Blob does not copy the bytes.
  private readonly memory: LRUCache<string, Blob>;
  // Per deploy file (the manifest holds them for as long as the deploy is cached): its
  // representations and prepared headers, so a hot file builds no key, ETag or Headers per request.
  private readonly plans = new WeakMap<DeployFile, FilePlan>();

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
    const plan = this.planOf(f);
    const headers = req.headers;
    const range = o.conditional ? headers.get("range") : null;
    // A Range applies to the identity representation (what Accept-Ranges advertises).
    const encoding = range || !plan.hasVariants ? "identity" : pickEncoding(headers.get("accept-encoding"), plan.br !== null, plan.gzip !== null);
    const rep = encoding === "br" ? plan.br! : encoding === "gzip" ? plan.gzip! : plan.identity;

    if (o.conditional) {
      const ifNoneMatch = headers.get("if-none-match");
      if (ifNoneMatch !== null && noneMatch(ifNoneMatch, rep.etag)) {
        const p = this.prepared(f, plan, rep, o, 304);
        const base = (p.notModifiedAnswer ??= new Response(null, { status: 304, headers: p.headers }));
        return withRequestId(base.clone());
      }
    }

    let body: Blob | undefined;
    if (rep.size > MEMORY_FILE_LIMIT) body = this.blobs.file(rep.sha);
    else if (!(body = this.memory.get(rep.sha))) return this.load(rep.sha).then(() => this.serve(req, f, o));

    if (range) {
      const ifRange = headers.get("if-range");
      const r = ifRange !== null && ifRange.trim() !== rep.etag ? { kind: "none" as const } : parseRange(range, rep.size);
      if (r.kind === "unsatisfiable") {
        const h = new Headers({
          "content-range": `bytes */${rep.size}`,
          "cache-control": o.cacheControl,
          "x-pier-client-version": clientVersion,
          ...o.extraHeaders,
        });
        if (o.siteHeaders) applySiteHeaders(h, o.siteHeaders);
        return completeResponse(req, null, 416, h);
      }
      if (r.kind === "range") {
        const h = new Headers(this.prepared(f, plan, rep, o, 206).headers);
        h.set("content-range", `bytes ${r.start}-${r.end}/${rep.size}`);
        if (req.method !== "HEAD") this.bytesServed?.inc(0, r.end + 1 - r.start);
        return completeResponse(req, body.slice(r.start, r.end + 1), 206, h);
      }
    }
    if (req.method !== "HEAD") this.bytesServed?.inc(0, rep.size);
    const status = o.status ?? 200;
    const p = this.prepared(f, plan, rep, o, status);
    if (status !== 200 || rep.size > MEMORY_FILE_LIMIT) return completeResponse(req, body, status, p.headers);
    // A 200 of an in-memory file: a clone of an answer prepared once per body and header set
    // (Bun copies the headers and shares the bytes), cheaper than building Headers and a
    // Response per request. Keyed weakly by the cached Blob: when the LRU drops the bytes,
    // their answers go too.
    let base = p.answers.get(body);
    if (base === undefined) p.answers.set(body, (base = new Response(body, { status: 200, headers: p.headers })));
    return withRequestId(base.clone());
  }

  private planOf(f: DeployFile): FilePlan {
    let plan = this.plans.get(f);
    if (plan === undefined) {
      const tagged = (suffix: string) => `${f.etag.slice(0, -1)}${suffix}"`;
      plan = {
        identity: { sha: f.blobSha256, size: f.size, etag: f.etag, encoding: "identity" },
        br: f.brSha256 === null ? null : { sha: f.brSha256, size: f.brSize!, etag: tagged("-br"), encoding: "br" },
        gzip: f.gzipSha256 === null ? null : { sha: f.gzipSha256, size: f.gzipSize!, etag: tagged("-gz"), encoding: "gzip" },
        hasVariants: f.brSha256 !== null || f.gzipSha256 !== null,
        prepared: [],
      };
      this.plans.set(f, plan);
    }
    return plan;
  }

  /**
   * The headers of one representation of one deploy file, built once: type, caching, ETag,
   * encoding, Pier's base headers and the path's `_headers` blocks. Found by identity (the extra
   * headers and header sets are interned), without building a key per request.
   */
  private prepared(f: DeployFile, plan: FilePlan, rep: Representation, o: ServeOptions, status: number): Prepared {
    const cacheControl = o.cacheControl;
    const extra = o.extraHeaders;
    const set = o.siteHeaders ?? null;
    const notModified = status === 304;
    for (const p of plan.prepared) {
      if (p.rep === rep && p.cacheControl === cacheControl && p.extra === extra && p.set === set && p.notModified === notModified) return p;
    }
    // A 304 carries what a cache needs to refresh its copy, not the body's description.
    const init: Record<string, string> = notModified
      ? { etag: rep.etag, "cache-control": cacheControl, "x-pier-client-version": clientVersion, ...extra }
      : {
          "content-type": f.contentType,
          "cache-control": cacheControl,
          "x-content-type-options": "nosniff",
          etag: rep.etag,
          "x-pier-client-version": clientVersion,
          ...extra,
        };
    if (plan.hasVariants) init.vary = "Accept-Encoding";
    if (!notModified) {
      if (rep.encoding === "identity") init["accept-ranges"] = "bytes";
      else init["content-encoding"] = rep.encoding;
    }
    const headers = new Headers(init);
    if (set !== null) applySiteHeaders(headers, set);
    if (plan.prepared.length >= PREPARED_MAX) plan.prepared.length = 0;
    const p: Prepared = { rep, cacheControl, extra, set, notModified, headers, answers: new WeakMap(), notModifiedAnswer: null };
    plan.prepared.push(p);
    return p;
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
