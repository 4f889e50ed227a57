// What other features do when a bucket is deleted. Their rows go with it by cascade, but some
// hold state outside the database (a custom domain's certificate and key, D240) or keep a trace of
// it (its public slugs, held for its account: D316); they register a hook here, so buckets need not
// import them (that would make a cycle: they import buckets).
import type { Deps } from "../../core/context";
import type { Tx } from "../../db/tx";

/** Runs inside the deleting transaction, before the bucket row goes; defer side effects with afterCommit. */
export type BucketRemovalHook = (deps: Deps, bucketId: string, tx: Tx) => void;

/** One list of hooks: registered once each, run in order. */
function hookList() {
  const hooks: BucketRemovalHook[] = [];
  return {
    register(hook: BucketRemovalHook): void {
      if (!hooks.includes(hook)) hooks.push(hook);
    },
    run(deps: Deps, bucketId: string, tx: Tx): void {
      for (const hook of hooks) hook(deps, bucketId, tx);
    },
  };
}

const removal = hookList();
export const registerBucketRemoval = removal.register;
export const runBucketRemovalHooks = removal.run;

/** Run in the transaction that accepts a deletion, while every row of the bucket is still there. */
const deletion = hookList();
export const registerBucketDeletion = deletion.register;
export const runBucketDeletionHooks = deletion.run;
