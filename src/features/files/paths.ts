// Bucket path keys: bucket-relative, NFC-normalized, "/"-separated, no leading slash. Anything
// that could escape the bucket or display as something it is not is refused, never "fixed":
// a client must see exactly the key it will get back.
import { ApiError } from "../../core/errors";

export const MAX_PATH_BYTES = 1024;
export const MAX_SEGMENT_BYTES = 255;

// C0/C1 controls, DEL, bidi overrides/isolates (which make "gpj.exe" read as "exe.jpg"),
// line/paragraph separators and the BOM.
const FORBIDDEN_CHARS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ufeff]/u;
// Invisible characters with no use in a name: zero-width space, word joiner and invisible
// operators. "index.ht\u200bml" would list as "index.html" but be another key. (ZWJ/ZWNJ
// stay: emoji and Persian or Indic names need them. Inbound mail strips these same characters
// from attachment names before writing, so mail never trips this rule.)
const INVISIBLE_CHARS = /[\u200b\u2060-\u2064]/u;

function refuse(reason: string, message: string): never {
  throw new ApiError("INVALID_PATH", message, { reason });
}

/** Decode percent escapes repeatedly (bounded), so `%2e%2e` and `%252e%252e` are seen as `..`. */
function fullyDecoded(segment: string): string {
  let s = segment;
  for (let i = 0; i < 3 && s.includes("%"); i++) {
    try {
      const d = decodeURIComponent(s);
      if (d === s) break;
      s = d;
    } catch {
      break;
    }
  }
  return s;
}

/** Normalize and validate a bucket path; throws INVALID_PATH with details.reason. */
export function normalizePath(raw: unknown): string {
  if (typeof raw !== "string" || raw.length === 0) refuse("empty", "A file path is required.");
  if (raw.includes("\0")) refuse("nul", "File paths cannot contain NUL characters.");
  if (FORBIDDEN_CHARS.test(raw)) refuse("control_character", "File paths cannot contain control or bidirectional-override characters.");
  if (INVISIBLE_CHARS.test(raw)) refuse("invisible_character", "File paths cannot contain invisible characters (zero-width space, word joiner).");
  if (raw.includes("\\")) refuse("backslash", 'Use "/" to separate folders; backslashes are not allowed in paths.');
  const path = raw.normalize("NFC");
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) refuse("absolute", 'Paths are bucket-relative: drop the leading "/" or drive letter.');
  if (new TextEncoder().encode(path).byteLength > MAX_PATH_BYTES) refuse("too_long", `Paths are at most ${MAX_PATH_BYTES} bytes (UTF-8).`);
  for (const segment of path.split("/")) {
    if (segment === "") refuse("empty_segment", 'Paths cannot have empty folder names ("//") or a trailing "/".');
    // NFKC folds look-alikes (fullwidth "．．", "／") into the characters they imitate.
    const decoded = fullyDecoded(segment).normalize("NFKC");
    if (decoded === "." || decoded === ".." || /^\.{1,2}$/.test(decoded.trim())) refuse("traversal", '"." and ".." are not allowed in paths.');
    if (decoded !== segment && /[/\\\0]/.test(decoded)) refuse("traversal", "Encoded or look-alike separators are not allowed in paths.");
    // Windows drops trailing dots and spaces: "evil.exe." and "evil.exe " ARE "evil.exe" once the
    // bucket is synced or downloaded there, and ".git." is ".git". Refused, not stripped: the key
    // a client sends is the key it gets back.
    if (/[. ]$/.test(segment)) refuse("trailing_dot_or_space", `"${segment}": file and folder names cannot end with a dot or a space.`);
    if (new TextEncoder().encode(segment).byteLength > MAX_SEGMENT_BYTES) refuse("too_long", `Each path segment is at most ${MAX_SEGMENT_BYTES} bytes.`);
  }
  return path;
}

/** The last segment of a path (what a download is called). */
export const baseName = (path: string): string => path.slice(path.lastIndexOf("/") + 1);

/** Where the mail feature files received messages (see mail/paths.ts). */
export const EMAIL_ROOT = "_email/";

/**
 * Received mail is private to the API and dashboard: never deployed, listed or served by a
 * site, and never deleted by a folder sync (delete_missing, publish sessions, restore); only an
 * explicit delete of the file or folder removes it.
 */
export const isMailPath = (bucketPath: string): boolean => bucketPath.startsWith(EMAIL_ROOT);
