// Request path -> site path. Bun's HTTP layer already resolves dot segments (also %2e%2e) and
// turns backslashes into slashes within the root, like browsers do; what reaches us is decoded
// exactly once per segment here, and anything that still smells of traversal is refused.

export type ParsedPath = { ok: true /** decoded, no leading slash, "" for the root */; path: string; dir: boolean; raw: string } | { ok: false };

const PLAIN = /^[A-Za-z0-9_~+@-][A-Za-z0-9._~+@-]*(?:\/[A-Za-z0-9_~+@-][A-Za-z0-9._~+@-]*)*$/;

/** `rawPath` is the still-encoded pathname (no query). */
export function parseRequestPath(rawPath: string): ParsedPath {
  if (!rawPath.startsWith("/") || rawPath.length > 2048) return { ok: false };
  const dir = rawPath.endsWith("/");
  const rawSegments = rawPath.slice(1, dir ? -1 : undefined);
  if (rawSegments === "") return { ok: true, path: "", dir: true, raw: rawPath };
  // Fast path: plain names (no %, no empty segment, no segment starting with a dot) need no decoding.
  if (PLAIN.test(rawSegments)) return { ok: true, path: rawSegments, dir, raw: rawPath };
  const out: string[] = [];
  for (const raw of rawSegments.split("/")) {
    if (raw === "") return { ok: false }; // "//": never produced by a link, only by probing
    let seg = raw;
    if (raw.includes("%")) {
      try {
        seg = decodeURIComponent(raw);
      } catch {
        return { ok: false };
      }
    }
    // After one decode: no separators smuggled in (%2f, %5c), no NUL/control bytes, no dot segments.
    if (seg === "." || seg === ".." || /[\/\\\u0000-\u001f\u007f]/.test(seg)) return { ok: false };
    out.push(seg);
  }
  return { ok: true, path: out.join("/"), dir, raw: rawPath };
}

/** Split a request URL into the encoded pathname and the query (with "?"), without re-normalizing. */
export function splitUrl(url: string): { pathname: string; search: string } {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return { pathname: "/", search: "" };
  const q = url.indexOf("?", start);
  const h = url.indexOf("#", start);
  const end = q === -1 ? (h === -1 ? url.length : h) : q;
  return { pathname: url.slice(start, end), search: q === -1 ? "" : url.slice(q, h === -1 ? url.length : h) };
}

/** True when the last segment looks like a file name with an extension (app.js, logo.png). */
export function hasExtension(path: string): boolean {
  const last = path.slice(path.lastIndexOf("/") + 1);
  const dot = last.lastIndexOf(".");
  return dot > 0 && dot < last.length - 1;
}
