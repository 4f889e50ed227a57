// Bounded work per JSON body. Two costs were unbounded: JSON nesting (20,000 brackets in 40 KB
// made Elysia's validation error take 34 s, because it pretty-prints the whole rejected value
// with indentation that grows with depth) and the size of that error message on any large
// invalid body. So: nesting is counted on the raw bytes before anything parses them, and body
// schemas are checked here, before Elysia's own check, with an error that reports the first
// few problems and never serializes the value. Elysia's check then only ever sees valid bodies.
// The schema check itself is body-validation.ts: the listener (also a serving worker's, which
// loads no API) needs only the byte checks here, not Elysia and TypeBox.
import { ApiError } from "../core/errors";

/** Deeper than any body Pier's schemas describe (free-form metadata included) needs. */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22,
  BACKSLASH = 0x5c,
  OPEN_ARRAY = 0x5b,
  OPEN_OBJECT = 0x7b,
  CLOSE_ARRAY = 0x5d,
  CLOSE_OBJECT = 0x7d;

/**
 * True when the JSON text nests arrays/objects deeper than `max`. One pass over the bytes,
 * brackets inside strings ignored (UTF-8 continuation bytes never equal `"` or `\`). Malformed
 * text is left for the parser to refuse.
 */
export function nestsDeeperThan(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) depth--;
  }
  return false;
}

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * True when the bytes could be a JSON array or object: the first non-space byte is `[` or `{`.
 * Deliberately not decided by Content-Type: parsers downstream accept JSON under many types
 * (Elysia reads any type whose 13th character is `j`, e.g. application/jsonx; the MCP SDK any
 * type containing application/json), so the type cannot say which bodies will be parsed.
 */
export function mayBeJsonContainer(bytes: Uint8Array): boolean {
  const hasBom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  for (let i = hasBom ? 3 : 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (!WHITESPACE.has(b)) return b === OPEN_ARRAY || b === OPEN_OBJECT;
  }
  return false;
}

/** Refuse a JSON body nested deeper than MAX_JSON_DEPTH (400 JSON_TOO_DEEP). */
export function checkJsonDepth(bytes: Uint8Array): void {
  if (nestsDeeperThan(bytes, MAX_JSON_DEPTH)) {
    throw new ApiError("JSON_TOO_DEEP", `JSON bodies may nest arrays and objects at most ${MAX_JSON_DEPTH} levels deep.`, { max_depth: MAX_JSON_DEPTH });
  }
}

export interface FieldProblem {
  path: string;
  message: string;
}

/** The one VALIDATION_FAILED shape, for Elysia's errors and for the early check below. */
export function validationFailed(where: string | undefined, fields: FieldProblem[]): ApiError {
  const at = where ? ` in ${where}` : "";
  // A missing value also fails its type ("Expected object"): the message names only the first.
  const missing = new Set(fields.filter((f) => / is missing$/.test(f.message)).map((f) => f.path));
  const said = fields.filter((f) => !missing.has(f.path) || / is missing$/.test(f.message));
  let list = said.map((f) => `${f.path || "(root)"} ${f.message}`).join("; ") || "see details";
  // A body that is not an object at all was most likely not sent as JSON.
  if (fields.some((f) => f.path === "" && f.message === "Expected object")) list += ". Send a JSON object with Content-Type: application/json";
  return new ApiError("VALIDATION_FAILED", `Invalid request${at}: ${list}`, { fields });
}
