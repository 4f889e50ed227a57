// Conditional and range request helpers (RFC 9110 sections 13 and 14) and Accept-Encoding.

export type Encoding = "br" | "gzip" | "identity";

/** Best precompressed encoding the client accepts among those available. */
export function pickEncoding(acceptEncoding: string | null, hasBr: boolean, hasGzip: boolean): Encoding {
  if (!acceptEncoding || (!hasBr && !hasGzip)) return "identity";
  let br = 0;
  let gzip = 0;
  let star = -1;
  for (const part of acceptEncoding.split(",")) {
    const [nameRaw, ...params] = part.split(";");
    const name = nameRaw!.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (name === "br") br = q;
    else if (name === "gzip" || name === "x-gzip") gzip = q;
    else if (name === "*") star = q;
  }
  if (star > 0) {
    if (br === 0 && !/\bbr\b/i.test(acceptEncoding)) br = star;
    if (gzip === 0 && !/gzip/i.test(acceptEncoding)) gzip = star;
  }
  if (hasBr && br > 0 && br >= gzip) return "br";
  if (hasGzip && gzip > 0) return "gzip";
  if (hasBr && br > 0) return "br";
  return "identity";
}

/** If-None-Match uses the weak comparison: W/"x" matches "x", on either side. */
export function noneMatch(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  if (ifNoneMatch.trim() === "*") return true;
  const opaque = etag.startsWith("W/") ? etag.slice(2) : etag;
  for (const tag of ifNoneMatch.split(",")) {
    const t = tag.trim();
    if ((t.startsWith("W/") ? t.slice(2) : t) === opaque) return true;
  }
  return false;
}

export type RangeResult = { kind: "none" } | { kind: "range"; start: number; end: number } | { kind: "unsatisfiable" };

/**
 * One byte range, or none (serve the whole representation: also for multiple ranges, which
 * RFC 9110 lets a server ignore), or unsatisfiable (416).
 */
export function parseRange(header: string | null, size: number): RangeResult {
  if (!header) return { kind: "none" };
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m) return { kind: "none" };
  const [, a, b] = m;
  if (a === "" && b === "") return { kind: "none" };
  let start: number;
  let end: number;
  if (a === "") {
    const suffix = Number(b);
    if (suffix === 0) return { kind: "unsatisfiable" };
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(a);
    end = b === "" ? size - 1 : Math.min(Number(b), size - 1);
    if (b !== "" && Number(b) < start) return { kind: "none" }; // invalid range: ignore it
  }
  if (start >= size || size === 0) return { kind: "unsatisfiable" };
  return { kind: "range", start, end };
}
