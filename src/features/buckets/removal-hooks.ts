// What other features do when a bucket is deleted. Their rows go with it by cascade, but some
// hold state outside the database (a custom domain's certificate and key, D240) or keep a trace of
// it (its public slugs, held for its account: D316); they register a hook here, so buckets need not
// import them (that would make a cycle: they import buckets).
import type { Deps } from "../../core/context";
import type { Tx } from "../../db/tx";

/** Runs inside the deleting transaction, before the bucket row goes; defer side effects with afterCommit. */
export type BucketRemovalHook = (deps: Deps, bucketId: string, tx: Tx) => void;

const hooks: BucketRemovalHook[] = [];

export function registerBucketRemoval(hook: BucketRemovalHook): void {
  if (!hooks.includes(hook)) hooks.push(hook);
}

export function runBucketRemovalHooks(deps: Deps, bucketId: string, tx: Tx): void {
  for (const hook of hooks) hook(deps, bucketId, tx);
}

/** Runs in the transaction that accepts a deletion, while every row of the bucket is still there. */
const deletionHooks: BucketRemovalHook[] = [];

export function registerBucketDeletion(hook: BucketRemovalHook): void {
  if (!deletionHooks.includes(hook)) deletionHooks.push(hook);
}

export function runBucketDeletionHooks(deps: Deps, bucketId: string, tx: Tx): void {
  for (const hook of deletionHooks) hook(deps, bucketId, tx);
}
