// Serving one deploy file: representation by Accept-Encoding (precompressed at build time),
// strong ETag and 304, single Range (206/416), HEAD. Small files come from a byte-bounded
// in-memory LRU (this is what puts Pier at or above nginx on small files); big files stream
// from the blob store with sendfile via Bun.file().
import { LRUCache } from "lru-cache";
import type { BlobStore } from "../blobs/store";
import type { DeployFile } from "../features/publish/deploys";
import { noneMatch, parseRange, pickEncoding } from "./negotiate";

/** Files up to this size are kept in memory once read. */
export const MEMORY_FILE_LIMIT = 512 * 1024;

export interface ServeOptions {
  status?: number;
  cacheControl: string;
  extraHeaders: Record<string, string>;
  /** false for error pages (404.html) and SPA fallbacks: no 304/Range games on those. */
  conditional: boolean;
}

export class FileServer {
  // Keyed by the sha256 of the stored representation: content-addressed, so one entry serves
  // every deploy and path that holds the same bytes (the deploy+path+encoding key, deduplicated).
  private readonly memory: LRUCache<string, Uint8Array>;

  constructor(private readonly blobs: BlobStore, maxBytes = 128 * 1024 * 1024) {
    this.memory = new LRUCache<string, Uint8Array>({ maxSize: maxBytes, sizeCalculation: (b) => b.byteLength || 1 });
  }

  /** Synchronous when the bytes are in memory (the hot path): no promise per request. */
  serve(req: Request, f: DeployFile, o: ServeOptions): Response | Promise<Response> {
    const headers: Record<string, string> = {
      "content-type": f.contentType,
      "cache-control": o.cacheControl,
      "x-content-type-options": "nosniff",
      ...o.extraHeaders,
    };
    const hasVariants = f.brSha256 !== null || f.gzipSha256 !== null;
    if (hasVariants) headers.vary = "Accept-Encoding";
    const range = o.conditional ? req.headers.get("range") : null;
    // A Range applies to the identity representation (what Accept-Ranges advertises).
    const encoding = range ? "identity" : pickEncoding(req.headers.get("accept-encoding"), f.brSha256 !== null, f.gzipSha256 !== null);
    let sha = f.blobSha256;
    let size = f.size;
    let etag = f.etag;
    if (encoding === "br") {
      sha = f.brSha256!;
      size = f.brSize!;
      etag = f.etag.slice(0, -1) + '-br"';
      headers["content-encoding"] = "br";
    } else if (encoding === "gzip") {
      sha = f.gzipSha256!;
      size = f.gzipSize!;
      etag = f.etag.slice(0, -1) + '-gz"';
      headers["content-encoding"] = "gzip";
    } else {
      headers["accept-ranges"] = "bytes";
    }
    headers.etag = etag;

    if (o.conditional && noneMatch(req.headers.get("if-none-match"), etag)) {
      const h: Record<string, string> = { etag, "cache-control": o.cacheControl, ...o.extraHeaders };
      if (hasVariants) h.vary = "Accept-Encoding";
      return new Response(null, { status: 304, headers: h });
    }

    let body: Uint8Array | Blob | undefined;
    if (size > MEMORY_FILE_LIMIT) body = this.blobs.file(sha);
    else if (!(body = this.memory.get(sha))) return this.load(sha).then(() => this.serve(req, f, o));
    if (range) {
      const ifRange = req.headers.get("if-range");
      const r = ifRange !== null && ifRange.trim() !== etag ? { kind: "none" as const } : parseRange(range, size);
      if (r.kind === "unsatisfiable") {
        return new Response(null, { status: 416, headers: { "content-range": `bytes */${size}`, "cache-control": o.cacheControl, ...o.extraHeaders } });
      }
      if (r.kind === "range") {
        headers["content-range"] = `bytes ${r.start}-${r.end}/${size}`;
        const part = body instanceof Uint8Array ? body.subarray(r.start, r.end + 1) : body.slice(r.start, r.end + 1);
        return new Response(part as BodyInit, { status: 206, headers });
      }
    }
    return new Response(body as BodyInit, { status: o.status ?? 200, headers });
  }

  /** Read a small file into memory (big files are never loaded: they go out with sendfile). */
  private async load(sha: string): Promise<Uint8Array> {
    let bytes = this.memory.get(sha);
    if (!bytes) {
      bytes = await this.blobs.file(sha).bytes();
      this.memory.set(sha, bytes);
    }
    return bytes;
  }

  /** Read a stored file as text (README rendering). */
  async text(sha: string, size: number): Promise<string> {
    return new TextDecoder().decode(size > MEMORY_FILE_LIMIT ? await this.blobs.file(sha).bytes() : await this.load(sha));
  }
}
