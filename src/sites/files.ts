// Serving one deploy file: representation by Accept-Encoding (precompressed at build time),
// strong ETag and 304, single Range (206/416), HEAD. Small files come from a byte-bounded
// in-memory LRU (this is what puts Pier level with nginx on small files); big files stream from
// the blob store with sendfile via Bun.file().
import type { Counter } from "../core/metrics";
import { LRUCache } from "lru-cache";
import type { BlobStore } from "../blobs/store";
import type { DeployFile } from "../features/publish";
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
      const h: Record<string, string> = { etag: rep.etag, "cache-control": o.cacheControl, ...o.extraHeaders };
      if (hasVariants) h.vary = "Accept-Encoding";
      return new Response(null, { status: 304, headers: h });
    }

    let body: Blob | undefined;
    if (rep.size > MEMORY_FILE_LIMIT) body = this.blobs.file(rep.sha);
    else if (!(body = this.memory.get(rep.sha))) return this.load(rep.sha).then(() => this.serve(req, f, o));

    if (range) {
      const ifRange = req.headers.get("if-range");
      const r = ifRange !== null && ifRange.trim() !== rep.etag ? { kind: "none" as const } : parseRange(range, rep.size);
      if (r.kind === "unsatisfiable") {
        return new Response(null, { status: 416, headers: { "content-range": `bytes */${rep.size}`, "cache-control": o.cacheControl, ...o.extraHeaders } });
      }
      if (r.kind === "range") {
        const headers = new Headers(this.headers(f, rep, o, hasVariants));
        headers.set("content-range", `bytes ${r.start}-${r.end}/${rep.size}`);
        if (req.method !== "HEAD") this.bytesServed?.inc(0, r.end + 1 - r.start);
        return new Response(body.slice(r.start, r.end + 1), { status: 206, headers });
      }
    }
    if (req.method !== "HEAD") this.bytesServed?.inc(0, rep.size);
    return new Response(body, { status: o.status ?? 200, headers: this.headers(f, rep, o, hasVariants) });
  }

  private headers(f: DeployFile, rep: Representation, o: ServeOptions, hasVariants: boolean): Headers {
    let byFile = this.headerCache.get(o.extraHeaders);
    if (!byFile) this.headerCache.set(o.extraHeaders, (byFile = new WeakMap()));
    let byKey = byFile.get(f);
    if (!byKey) byFile.set(f, (byKey = new Map()));
    const key = `${rep.encoding}|${o.cacheControl}`;
    let h = byKey.get(key);
    if (!h) {
      const init: Record<string, string> = {
        "content-type": f.contentType,
        "cache-control": o.cacheControl,
        "x-content-type-options": "nosniff",
        etag: rep.etag,
        ...o.extraHeaders,
      };
      if (hasVariants) init.vary = "Accept-Encoding";
      if (rep.encoding === "identity") init["accept-ranges"] = "bytes";
      else init["content-encoding"] = rep.encoding;
      byKey.set(key, (h = new Headers(init)));
    }
    return h;
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
