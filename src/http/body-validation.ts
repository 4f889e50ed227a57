// Route body schemas checked before Elysia's own check, with a bounded error (json-guard.ts
// says why): the first few problems, never the serialized value.
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { TSchema } from "@sinclair/typebox";
import { Elysia, mapValueError } from "elysia";
import "./formats"; // tightened formats before any schema is compiled
import { validationFailed, type FieldProblem } from "./json-guard";
import { describeIssue, type ValidationIssue } from "./validation";

/** Problems reported per invalid body (the rest are not even looked for). */
const MAX_REPORTED_ERRORS = 20;

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
