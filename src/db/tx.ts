// Transactions compose: a service that runs inside another service's transaction reuses it
// instead of nesting (PocketBase core/db_tx.go). bun:sqlite is synchronous, so transaction
// bodies are synchronous too: do I/O (blob writes, network) before or after, never inside.
import type { Db } from "./client";

export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type DbOrTx = Db | Tx;

const inTx = new WeakSet<object>();

/** Run `fn` in a write transaction (BEGIN IMMEDIATE: one writer), or in the caller's one. */
export function transaction<T>(db: DbOrTx, fn: (tx: Tx) => T): T {
  if (inTx.has(db)) return fn(db as Tx);
  return (db as Db).transaction((tx) => {
    inTx.add(tx);
    const result = fn(tx);
    if (result instanceof Promise) throw new Error("transaction bodies must be synchronous");
    return result;
  }, { behavior: "immediate" });
}
