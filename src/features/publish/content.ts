// Content types and precompression decisions for published files.
import { promisify } from "node:util";
import { brotliCompress, brotliCompressSync, constants as zlib, gzip, gzipSync } from "node:zlib";

/** Content type from the file name via Bun's MIME table; text types carry charset=utf-8. */
export function contentTypeFor(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  if (name.endsWith(".md") || name.endsWith(".markdown")) return "text/markdown; charset=utf-8";
  if (name.endsWith(".webmanifest")) return "application/manifest+json; charset=utf-8";
  if (name.endsWith(".mjs")) return "text/javascript; charset=utf-8";
  const type = Bun.file(name).type; // "application/octet-stream" when unknown
  return type.replace(/;charset=/, "; charset=");
}

const COMPRESSIBLE =
  /^(text\/|application\/(javascript|json|ld\+json|manifest\+json|xml|xhtml\+xml|rss\+xml|atom\+xml|wasm|x-javascript|graphql|geo\+json)|image\/(svg\+xml|x-icon|vnd\.microsoft\.icon|bmp)|font\/(ttf|otf)|application\/(x-font-ttf|font-sfnt|vnd\.ms-fontobject))/;

/** Worth precompressing: text-like and bigger than a TCP packet's worth of headers. */
export function isCompressible(contentType: string, size: number): boolean {
  return size >= 256 && COMPRESSIBLE.test(contentType);
}

export interface Compressed {
  gzip: Uint8Array | null;
  br: Uint8Array | null;
}

/** Both encodings at high settings (built once, served many times); kept only when smaller. */
export function precompress(bytes: Uint8Array): Compressed {
  const gz = gzipSync(bytes, { level: 9 });
  // Brotli quality 11 is slow on big inputs; past 4 MiB quality 7 keeps builds snappy.
  const br = brotliCompressSync(bytes, {
    params: {
      [zlib.BROTLI_PARAM_QUALITY]: bytes.byteLength > 4 * 1024 * 1024 ? 7 : 11,
      [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
    },
  });
  // Keep a variant only when it saves at least 5%: a few bytes saved cost a decode on every client.
  const worth = (c: Uint8Array) => c.byteLength < bytes.byteLength * 0.95;
  return { gzip: worth(gz) ? new Uint8Array(gz) : null, br: worth(br) ? new Uint8Array(br) : null };
}

/** Strong ETag per representation, from the content hash (same bytes, same tag, any deploy). */
export function etagFor(sha256: string, encoding: "identity" | "gzip" | "br" = "identity"): string {
  return encoding === "identity" ? `"${sha256.slice(0, 40)}"` : `"${sha256.slice(0, 40)}-${encoding === "gzip" ? "gz" : "br"}"`;
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** precompress() off the event loop (zlib's thread pool): builds keep sites responsive and use every core. */
export async function precompressAsync(bytes: Uint8Array): Promise<Compressed> {
  const [gz, br] = await Promise.all([
    gzipAsync(bytes, { level: 9 }),
    brotliAsync(bytes, {
      params: { [zlib.BROTLI_PARAM_QUALITY]: bytes.byteLength > 4 * 1024 * 1024 ? 7 : 11, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength },
    }),
  ]);
  const worth = (c: Uint8Array) => c.byteLength < bytes.byteLength * 0.95;
  return { gzip: worth(gz) ? new Uint8Array(gz) : null, br: worth(br) ? new Uint8Array(br) : null };
}
