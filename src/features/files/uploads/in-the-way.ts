// What a delete_missing upload session must delete early: files its omitted paths leave in the
// way of a chunk's files (D302). Split from sessions.ts, which commits the chunks.
import { and, eq, inArray } from "drizzle-orm";
import { uploadEntries } from "../../../db/schema";
import type { DbOrTx } from "../../../db/tx";
import type { Change } from "../commit";
import { folderBounds, type CommitStatements } from "../commit-statements";
import { isMailPath } from "../paths";
import type { UploadEntryRow } from "./declare";
import type { UploadSessionRow } from "./sessions";

/**
 * The files a delete_missing sync omits that stand in the way of this chunk's files: "docs" when
 * the folder now has "docs/a.txt", or the files under "docs/" when "docs" became a file. A file
 * and a folder cannot share a path (D302), and the sync deletes what it omits only with its last
 * chunk, so an earlier chunk (or a finalize_batch) would clash; these files go with the chunk
 * that replaces them instead. Only undeclared ones: a folder cannot hold both, so a declared one
 * is the client's own clash, refused by the commit. Received mail is never deleted by a sync.
 */
export function omittedInTheWay(st: CommitStatements, s: UploadSessionRow, entries: UploadEntryRow[], tx: DbOrTx): Change[] {
  const inTheWay = new Set<string>();
  for (const e of entries) {
    for (let at = e.path.indexOf("/"); at > 0; at = e.path.indexOf("/", at + 1)) inTheWay.add(e.path.slice(0, at));
    for (const f of st.filesUnder.all(s.bucketId, ...folderBounds(e.path))) inTheWay.add(f.path);
  }
  const out: Change[] = [];
  for (const path of inTheWay) {
    if (isMailPath(path) || !st.fileByPath.get(s.bucketId, path)) continue;
    const declared = tx
      .select({ id: uploadEntries.id })
      .from(uploadEntries)
      // Both statuses named: the lookup then runs along the (session_id, status, path) index.
      .where(and(eq(uploadEntries.sessionId, s.id), inArray(uploadEntries.status, ["pending", "finalized"]), eq(uploadEntries.path, path)))
      .get();
    if (!declared) out.push({ path, blob: null });
  }
  return out;
}
