// Bounded work per JSON body. Two costs were unbounded: JSON nesting (20,000 brackets in 40 KB
// made Elysia's validation error take 34 s, because it pretty-prints the whole rejected value
// with indentation that grows with depth) and the size of that error message on any large
// invalid body. So: nesting is counted on the raw bytes before anything parses them, and body
// schemas are checked here, before Elysia's own check, with an error that reports the first
// few problems and never serializes the value. Elysia's check then only ever sees valid bodies.
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { TSchema } from "@sinclair/typebox";
import { Elysia, mapValueError } from "elysia";
import { ApiError } from "../core/errors";
import { describeIssue, type ValidationIssue } from "./validation";

/** Deeper than any body Pier's schemas describe (free-form metadata included) needs. */
export const MAX_JSON_DEPTH = 32;
/** Problems reported per invalid body (the rest are not even looked for). */
const MAX_REPORTED_ERRORS = 20;

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

interface FieldProblem {
  path: string;
  message: string;
}

/** The one VALIDATION_FAILED shape, for Elysia's errors and for the early check below. */
export function validationFailed(where: string | undefined, fields: FieldProblem[]): ApiError {
  const at = where ? ` in ${where}` : "";
  const list = fields.map((f) => `${f.path || "(root)"} ${f.message}`).join("; ") || "see details";
  return new ApiError("VALIDATION_FAILED", `Invalid request${at}: ${list}`, { fields });
}

/** What an error message may quote of a rejected value: never a whole array or object. */
function quotable(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value !== null && typeof value === "object") return "an object";
  const s = String(value);
  return s.length > 100 ? `${s.slice(0, 100)}...` : s;
}

/** A schema's first problems, found lazily (a huge invalid array is not walked to its end). */
function firstProblems(check: TypeCheck<TSchema>, value: unknown): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const e of check.Errors(value)) {
    const mapped = mapValueError({ ...e, value: quotable(e.value) }) as { summary?: string } | undefined;
    out.push(describeIssue({ path: e.path, summary: mapped?.summary ?? e.message, schema: e.schema as ValidationIssue["schema"] }));
    if (out.length >= MAX_REPORTED_ERRORS) break;
  }
  return out;
}

export interface RouteTable {
  routes: Array<{ method: string; path: string; hooks?: { body?: unknown } }>;
}

/**
 * Elysia plugin (global): checks a parsed body against its route's schema before Elysia does,
 * refusing with a bounded VALIDATION_FAILED. `app` is the root app, read when the first request
 * arrives (every route is mounted by then).
 */
export function earlyBodyValidation(app: () => RouteTable) {
  let schemas: Map<string, TSchema> | null = null;
  // Compiled on a route's first body: compiling all of them up front costs a start-up pause.
  const compiled = new Map<string, TypeCheck<TSchema>>();
  const checkFor = (method: string, route: string) => {
    const key = `${method} ${route}`;
    let check = compiled.get(key);
    if (check) return check;
    if (!schemas) {
      schemas = new Map();
      for (const r of app().routes) {
        const schema = r.hooks?.body;
        if (schema && typeof schema === "object") schemas.set(`${r.method} ${r.path}`, schema as TSchema);
      }
    }
    const schema = schemas.get(key);
    if (!schema) return undefined;
    compiled.set(key, (check = TypeCompiler.Compile(schema)));
    return check;
  };
  return new Elysia({ name: "early-body-validation" }).onTransform({ as: "global" }, ({ request, route, body }) => {
    if (body === undefined) return;
    const check = checkFor(request.method, route);
    if (check && !check.Check(body)) throw validationFailed("body", firstProblems(check, body));
  });
}
