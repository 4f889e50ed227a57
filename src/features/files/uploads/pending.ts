// A session's pending entries, read a page at a time in declare order (index
// upload_entries_session_order): a session may hold a million declared files, and no call
// reads, sorts or stats all of them at once.
import { and, asc, count, eq, inArray, notInArray, sql } from "drizzle-orm";
import type { Deps } from "../../../core/context";
import { uploadEntries } from "../../../db/schema";
import type { DbOrTx } from "../../../db/tx";
import { entryBytesReady, type Holder, type UploadEntryRow } from "./declare";

const pendingIn = (sessionId: string) => and(eq(uploadEntries.sessionId, sessionId), eq(uploadEntries.status, "pending"));

/** Up to `limit` pending entries of the session in declare order, after `after` (keyset paging). */
export function pendingPage(sessionId: string, limit: number, db: DbOrTx, after?: UploadEntryRow): UploadEntryRow[] {
  const past = after ? sql`(${uploadEntries.createdAt}, ${uploadEntries.id}) > (${after.createdAt}, ${after.id})` : undefined;
  return db
    .select()
    .from(uploadEntries)
    .where(and(pendingIn(sessionId), past))
    .orderBy(asc(uploadEntries.createdAt), asc(uploadEntries.id))
    .limit(limit)
    .all();
}

/** The session's pending entries among `ids` (at most one chunk), in declare order. */
export function pendingAmong(sessionId: string, ids: string[], db: DbOrTx): UploadEntryRow[] {
  if (ids.length === 0) return [];
  // Looked up by id, filtered and sorted here: with the session in the WHERE clause SQLite walks
  // the session's whole pending range in index order instead (EXPLAIN QUERY PLAN).
  return db
    .select()
    .from(uploadEntries)
    .where(inArray(uploadEntries.id, ids))
    .all()
    .filter((e) => e.sessionId === sessionId && e.status === "pending")
    .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
}

/** How many entries of the session are pending, leaving out `except` (at most one chunk). */
export function pendingCount(sessionId: string, db: DbOrTx, except: string[] = []): number {
  const left = except.length ? notInArray(uploadEntries.id, except) : undefined;
  return db
    .select({ n: count() })
    .from(uploadEntries)
    .where(and(pendingIn(sessionId), left))
    .get()!.n;
}

/** Paths of up to `limit` pending entries of the session outside `except`, in declare order. */
export function pendingPathsExcept(sessionId: string, except: string[], limit: number, db: DbOrTx): string[] {
  return db
    .select({ path: uploadEntries.path })
    .from(uploadEntries)
    .where(and(pendingIn(sessionId), except.length ? notInArray(uploadEntries.id, except) : undefined))
    .orderBy(asc(uploadEntries.createdAt), asc(uploadEntries.id))
    .limit(limit)
    .all()
    .map((e) => e.path);
}

/** Entries whose bytes were proven and are in the store (checked outside any transaction). */
export async function uploadedSplit(deps: Deps, holder: Holder, entries: UploadEntryRow[]): Promise<{ ready: UploadEntryRow[]; missing: UploadEntryRow[] }> {
  const ready: UploadEntryRow[] = [];
  const missing: UploadEntryRow[] = [];
  for (let i = 0; i < entries.length; i += 64) {
    const slice = entries.slice(i, i + 64);
    const ok = await Promise.all(slice.map((e) => entryBytesReady(deps, holder, e)));
    slice.forEach((e, j) => (ok[j] ? ready : missing).push(e));
  }
  return { ready, missing };
}

/**
 * Every pending entry of the session whose bytes are missing: the first `keep` of them and how
 * many there are. Reads the session a page at a time, so a large one never blocks the server.
 */
export async function missingUploads(deps: Deps, holder: Holder, sessionId: string, keep = 50): Promise<{ first: UploadEntryRow[]; count: number }> {
  const first: UploadEntryRow[] = [];
  let missingCount = 0;
  let after: UploadEntryRow | undefined;
  for (;;) {
    const page = pendingPage(sessionId, 512, deps.db, after);
    if (page.length === 0) break;
    const { missing } = await uploadedSplit(deps, holder, page);
    missingCount += missing.length;
    first.push(...missing.slice(0, keep - first.length));
    after = page.at(-1);
  }
  return { first, count: missingCount };
}
