// What the bucket feature needs to know about publishing, in one place. The publications
// feature replaces the bodies of these two functions (reading its own tables); every caller —
// the Bucket resource (present.ts), archive, bulk archive and delete — goes through them.
import type { Deps } from "../../core/context";
import type { DbOrTx } from "../../db/tx";

export interface PublicationSummary {
  published: boolean;
  /** The live site's URL once published. */
  publicUrl: string | null;
  /** The Bucket resource's `website` object (null while the bucket was never published). */
  website: null | { public_url: string | null; status: string; published: boolean; lifecycle_active: boolean };
  /** A publication active enough to block archive/delete (publishing, published, unpublishing). */
  lifecycleActive: boolean;
}

const unpublished: PublicationSummary = { published: false, publicUrl: null, website: null, lifecycleActive: false };

/** Publication state of one bucket. No publications exist yet: every bucket is unpublished. */
export function publicationSummary(_deps: Deps, _bucketId: string, _db?: DbOrTx): PublicationSummary {
  return unpublished;
}

/** True while archive and delete must be refused with `required_action: unpublish_first`. */
export function publicationLifecycleActive(deps: Deps, bucketId: string, db?: DbOrTx): boolean {
  return publicationSummary(deps, bucketId, db).lifecycleActive;
}
