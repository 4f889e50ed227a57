// Bucket variables: public name -> value pairs, plus secrets whose values are sealed with
// AES-256-GCM (bound to bucket and name) and never returned — only their names.
import { and, eq, inArray } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { bucketVariables } from "../../db/schema";
import { transaction, type DbOrTx } from "../../db/tx";
import { loadBucket, loadMutableBucket } from "./authorization";
import { VARIABLE_NAME, VARIABLE_VALUE_MAX, VARIABLES_MAX, type PatchVariablesInput } from "./model";

const nameRe = new RegExp(VARIABLE_NAME);
/** Reserved for values Pier itself injects (site URL, bucket id, ...). */
const RESERVED_PREFIX = "PIER_";

export interface VariablesView {
  bucket_id: string;
  variables: Record<string, string>;
  secrets: { name: string; updated_at: string }[];
}

export const secretAad = (bucketId: string, name: string) => `${bucketId}:${name}`;

function view(bucketId: string, db: DbOrTx): VariablesView {
  const rows = db.select().from(bucketVariables).where(eq(bucketVariables.bucketId, bucketId)).orderBy(bucketVariables.name).all();
  return {
    bucket_id: bucketId,
    variables: Object.fromEntries(rows.filter((r) => !r.secret).map((r) => [r.name, r.value ?? ""])),
    secrets: rows.filter((r) => r.secret).map((r) => ({ name: r.name, updated_at: r.updatedAt })),
  };
}

export function getVariables(deps: Deps, actor: Actor, id: string): VariablesView {
  const bucket = loadBucket(deps, actor, id, "bucket_read");
  return view(bucket.id, deps.db);
}

function checkName(name: string, field: string): void {
  if (!nameRe.test(name))
    throw new ApiError(
      "VALIDATION_FAILED",
      `${field}: "${name.slice(0, 80)}" is not a valid variable name (upper-case letters, digits and _, starting with a letter or _, at most 64).`,
      { field, name: name.slice(0, 80) },
    );
  if (name.startsWith(RESERVED_PREFIX))
    throw new ApiError("VALIDATION_FAILED", `${field}: names starting with ${RESERVED_PREFIX} are reserved for Pier.`, { field, name });
}

function checkValue(value: string, field: string, name: string): void {
  if (Buffer.byteLength(value, "utf8") > VARIABLE_VALUE_MAX) {
    throw new ApiError("VALIDATION_FAILED", `${field}.${name}: values are at most ${VARIABLE_VALUE_MAX} bytes.`, {
      field,
      name,
      max_bytes: VARIABLE_VALUE_MAX,
    });
  }
  if (value.includes("\0")) throw new ApiError("VALIDATION_FAILED", `${field}.${name}: values may not contain NUL characters.`, { field, name });
}

/**
 * `variables` (when given) replaces every public variable; `secrets` patches: a string sets,
 * null deletes, unlisted secrets stay. A name is either public or secret, never both.
 */
export function patchVariables(deps: Deps, actor: Actor, id: string, input: PatchVariablesInput): VariablesView {
  const publicVars = input.variables;
  const secretPatch = input.secrets ?? {};
  for (const [n, v] of Object.entries(publicVars ?? {})) {
    checkName(n, "variables");
    checkValue(v, "variables", n);
  }
  for (const [n, v] of Object.entries(secretPatch)) {
    checkName(n, "secrets");
    if (v !== null) checkValue(v, "secrets", n);
  }

  return transaction(deps.db, (tx) => {
    const bucket = loadMutableBucket(deps, actor, id, { need: "bucket_admin" }, tx);
    const rows = tx.select().from(bucketVariables).where(eq(bucketVariables.bucketId, bucket.id)).all();

    // The state after the patch, computed before writing so a refused patch changes nothing.
    const nextPublic = publicVars ? new Set(Object.keys(publicVars)) : new Set(rows.filter((r) => !r.secret).map((r) => r.name));
    const nextSecret = new Set(rows.filter((r) => r.secret).map((r) => r.name));
    for (const [n, v] of Object.entries(secretPatch)) v === null ? nextSecret.delete(n) : nextSecret.add(n);
    const both = [...nextSecret].filter((n) => nextPublic.has(n));
    if (both.length) throw new ApiError("VALIDATION_FAILED", `A name cannot be both a public variable and a secret: ${both.join(", ")}.`, { names: both });
    if (nextPublic.size + nextSecret.size > VARIABLES_MAX) {
      throw new ApiError("VALIDATION_FAILED", `A bucket holds at most ${VARIABLES_MAX} variables and secrets together.`, { max: VARIABLES_MAX });
    }

    const now = deps.clock.now().toISOString();
    // Deletions first: a name freed by a deleted secret may become a public variable.
    const deletions = Object.entries(secretPatch)
      .filter(([, v]) => v === null)
      .map(([n]) => n);
    if (deletions.length) {
      tx.delete(bucketVariables)
        .where(and(eq(bucketVariables.bucketId, bucket.id), eq(bucketVariables.secret, true), inArray(bucketVariables.name, deletions)))
        .run();
    }
    if (publicVars) {
      tx.delete(bucketVariables)
        .where(and(eq(bucketVariables.bucketId, bucket.id), eq(bucketVariables.secret, false)))
        .run();
      for (const [name, value] of Object.entries(publicVars)) {
        tx.insert(bucketVariables).values({ bucketId: bucket.id, name, secret: false, value, sealed: null, updatedAt: now }).run();
      }
    }
    for (const [name, value] of Object.entries(secretPatch)) {
      if (value === null) continue;
      const row = {
        bucketId: bucket.id,
        name,
        secret: true,
        value: null,
        sealed: deps.secrets.seal("bucket-variables", value, secretAad(bucket.id, name)),
        updatedAt: now,
      };
      tx.insert(bucketVariables)
        .values(row)
        .onConflictDoUpdate({ target: [bucketVariables.bucketId, bucketVariables.name], set: row })
        .run();
    }
    return view(bucket.id, tx);
  });
}
