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
  return changeVariables(deps, actor, id, { replacePublic: input.variables, secrets: input.secrets ?? {} });
}

/**
 * Set or delete single names, leaving every other one as it is: a string sets, null deletes, for
 * public variables and secrets alike. The read and the write are one transaction, so two people
 * editing different names at once (two dashboard tabs) never undo each other's change.
 */
export function mergeVariables(
  deps: Deps,
  actor: Actor,
  id: string,
  change: { variables?: Record<string, string | null>; secrets?: Record<string, string | null> },
): VariablesView {
  return changeVariables(deps, actor, id, { patchPublic: change.variables ?? {}, secrets: change.secrets ?? {} });
}

interface VariablesChange {
  /** Every public variable after the change (PATCH's `variables`). */
  replacePublic?: Record<string, string>;
  /** Public names to set (string) or delete (null); others stay. */
  patchPublic?: Record<string, string | null>;
  /** Secret names to set (string) or delete (null); others stay. */
  secrets: Record<string, string | null>;
}

function changeVariables(deps: Deps, actor: Actor, id: string, change: VariablesChange): VariablesView {
  const { replacePublic, secrets: secretPatch } = change;
  const publicPatch = change.patchPublic ?? {};
  for (const [n, v] of Object.entries(replacePublic ?? {})) {
    checkName(n, "variables");
    checkValue(v, "variables", n);
  }
  for (const [n, v] of Object.entries(publicPatch)) {
    checkName(n, "variables");
    if (v !== null) checkValue(v, "variables", n);
  }
  for (const [n, v] of Object.entries(secretPatch)) {
    checkName(n, "secrets");
    if (v !== null) checkValue(v, "secrets", n);
  }

  return transaction(deps.db, (tx) => {
    const bucket = loadMutableBucket(deps, actor, id, { need: "bucket_admin" }, tx);
    const rows = tx.select().from(bucketVariables).where(eq(bucketVariables.bucketId, bucket.id)).all();

    // The state after the change, computed before writing so a refused change changes nothing.
    const nextPublic = replacePublic ? new Set(Object.keys(replacePublic)) : new Set(rows.filter((r) => !r.secret).map((r) => r.name));
    for (const [n, v] of Object.entries(publicPatch)) v === null ? nextPublic.delete(n) : nextPublic.add(n);
    const nextSecret = new Set(rows.filter((r) => r.secret).map((r) => r.name));
    for (const [n, v] of Object.entries(secretPatch)) v === null ? nextSecret.delete(n) : nextSecret.add(n);
    const both = [...nextSecret].filter((n) => nextPublic.has(n));
    if (both.length) throw new ApiError("VALIDATION_FAILED", `A name cannot be both a public variable and a secret: ${both.join(", ")}.`, { names: both });
    if (nextPublic.size + nextSecret.size > VARIABLES_MAX) {
      throw new ApiError("VALIDATION_FAILED", `A bucket holds at most ${VARIABLES_MAX} variables and secrets together.`, { max: VARIABLES_MAX });
    }

    const now = deps.clock.now().toISOString();
    const deleteNamed = (secret: boolean, names: string[]) => {
      if (!names.length) return;
      tx.delete(bucketVariables)
        .where(and(eq(bucketVariables.bucketId, bucket.id), eq(bucketVariables.secret, secret), inArray(bucketVariables.name, names)))
        .run();
    };
    const deletedNames = (patch: Record<string, string | null>) =>
      Object.entries(patch)
        .filter(([, v]) => v === null)
        .map(([n]) => n);
    // Deletions first: a name freed by a deleted secret (or public variable) may change kind.
    deleteNamed(true, deletedNames(secretPatch));
    deleteNamed(false, deletedNames(publicPatch));
    if (replacePublic) {
      tx.delete(bucketVariables)
        .where(and(eq(bucketVariables.bucketId, bucket.id), eq(bucketVariables.secret, false)))
        .run();
      for (const [name, value] of Object.entries(replacePublic)) {
        tx.insert(bucketVariables).values({ bucketId: bucket.id, name, secret: false, value, sealed: null, updatedAt: now }).run();
      }
    }
    for (const [name, value] of Object.entries(publicPatch)) {
      if (value === null) continue;
      const row = { bucketId: bucket.id, name, secret: false, value, sealed: null, updatedAt: now };
      tx.insert(bucketVariables)
        .values(row)
        .onConflictDoUpdate({ target: [bucketVariables.bucketId, bucketVariables.name], set: row })
        .run();
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
