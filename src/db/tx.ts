// Transactions compose: a service that runs inside another service's transaction reuses it
// instead of nesting (PocketBase core/db_tx.go). bun:sqlite is synchronous, so transaction
// bodies are synchronous too: do I/O (blob writes, network) before or after, never inside.
import type { Db } from "./client";

export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type DbOrTx = Db | Tx;

const inTx = new WeakSet<object>();
/** Work waiting for the outermost transaction to commit, per open transaction. */
const onCommit = new WeakMap<object, (() => void)[]>();

/** Run `fn` in a write transaction (BEGIN IMMEDIATE: one writer), or in the caller's one. */
export function transaction<T>(db: DbOrTx, fn: (tx: Tx) => T): T {
  if (inTx.has(db)) return fn(db as Tx);
  const pending: (() => void)[] = [];
  const result = (db as Db).transaction(
    (tx) => {
      inTx.add(tx);
      onCommit.set(tx, pending);
      const result = fn(tx);
      if (result instanceof Promise) throw new Error("transaction bodies must be synchronous");
      return result;
    },
    { behavior: "immediate" },
  );
  runAfterCommit(pending);
  return result;
}

/**
 * Run `fn` once the outermost transaction around `db` has committed, and never if it rolls back
 * (PocketBase's OnComplete): for side effects that must not announce what may yet be undone —
 * cache invalidation, in-process events, mail. Outside a transaction `fn` runs at once.
 */
export function afterCommit(db: DbOrTx, fn: () => void): void {
  const pending = onCommit.get(db);
  if (pending) pending.push(fn);
  else fn();
}

/**
 * Every hook runs, in order, even when one throws: the data is committed, so the others still
 * owe their effect. The first error is then rethrown to the caller, as a side effect written
 * after the transaction would have thrown.
 */
function runAfterCommit(pending: (() => void)[]): void {
  let first: unknown = null;
  for (const fn of pending.splice(0)) {
    try {
      fn();
    } catch (e) {
      first ??= e;
    }
  }
  if (first !== null) throw first;
}
