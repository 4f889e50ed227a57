// Elysia/TypeBox validation issues as a client can act on them. TypeBox summarises a union by
// its branch types ("should be one of: 'string', 'string', 'string'"), which hides the allowed
// values; here the schema itself is read so every enum-like field names them, and numbers say
// which whole numbers are accepted.

export interface ValidationIssue {
  path?: string;
  summary?: string;
  message?: string;
  schema?: Schema;
}

export interface FieldError {
  path: string;
  message: string;
  /** The accepted values of an enum-like field (a union of literals). */
  allowed?: Array<string | number | boolean | null>;
}

type Schema = {
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  type?: string | string[];
  format?: string;
  minimum?: number;
  maximum?: number;
  "x-field"?: string;
};

type Literal = string | number | boolean | null;
const isLiteral = (v: unknown): v is Literal => v === null || ["string", "number", "boolean"].includes(typeof v);

/** The values of a union of literals (or an enum), or null when the schema is something else. */
export function allowedValues(schema: Schema | undefined): Literal[] | null {
  if (!schema) return null;
  if (Array.isArray(schema.enum) && schema.enum.every(isLiteral)) return schema.enum as Literal[];
  if (!Array.isArray(schema.anyOf) || schema.anyOf.length === 0) return null;
  const out: Literal[] = [];
  for (const branch of schema.anyOf) {
    if ("const" in branch && isLiteral(branch.const)) out.push(branch.const);
    else if (branch.type === "null") out.push(null);
    else return null;
  }
  return out;
}

const quote = (v: Literal) => (typeof v === "string" ? `'${v}'` : String(v));

/** Whole-number fields: a t.Integer, or the string-or-integer pair Elysia makes of one in a query. */
function numberKind(schema: Schema | undefined): "integer" | "number" | null {
  if (!schema) return null;
  const kinds = [schema, ...(schema.anyOf ?? [])];
  if (kinds.some((s) => s.type === "integer" || s.format === "integer")) return "integer";
  if (kinds.some((s) => s.type === "number" || s.format === "numeric")) return "number";
  return null;
}

function range(schema: Schema): string {
  const { minimum: min, maximum: max } = schema;
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  if (min !== undefined) return ` of at least ${min}`;
  if (max !== undefined) return ` of at most ${max}`;
  return "";
}

/** "/a/b" -> "b" (the property a message names). */
const fieldName = (path: string) => path.split("/").filter(Boolean).pop() ?? "";

export function describeIssue(issue: ValidationIssue): FieldError {
  const schema = issue.schema;
  const path = issue.path || (schema?.["x-field"] ? `/${schema["x-field"]}` : "");
  const name = fieldName(path);
  const subject = name ? `'${name}'` : "The value";
  const allowed = allowedValues(schema);
  if (allowed) return { path, message: `${subject} should be one of: ${allowed.map(quote).join(", ")}`, allowed };
  const kind = numberKind(schema);
  if (kind && schema) return { path, message: `${subject} should be ${kind === "integer" ? "a whole number" : "a number"}${range(schema)}` };
  return { path, message: issue.summary ?? issue.message ?? "invalid" };
}
