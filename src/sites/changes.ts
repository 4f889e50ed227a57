// What another process changed about sites, read from the `site_changes` log that SQLite triggers
// keep (migration 0014_site_changes): a serving process forgets only the publications named
// there, so commits that change no site (analytics roll-ups, sessions, jobs, mail) leave its
// caches alone. A NULL entry, or a gap (entries pruned before this process read them), means
// "forget every site".
import type { Database } from "bun:sqlite";

/** More entries than this in one poll: forgetting everything is cheaper than one by one. */
const MAX_NAMED = 1_000;

export type SiteChanges = { all: true } | { all: false; publicationIds: string[] };

/**
 * The columns of the tables the site server reads, split by whether a change to them changes
 * what a site serves (those fire the triggers). Every column must be in one list:
 * test/unit/site-changes.test.ts fails when a table gains a column nobody classified.
 */
export const SERVING_COLUMNS: Record<string, { serving: string[]; notServing: string[] }> = {
  publications: {
    serving: [
      "id",
      "bucket_id",
      "account_id",
      "kind",
      "public_slug",
      "title",
      "description",
      "status",
      "expires_at",
      "site_mode",
      "access_mode",
      "password_hash",
      "access_version",
      "tracking_enabled",
      "analytics_enabled",
      "client_events_enabled",
      "clean_urls",
      "current_deploy_id",
    ],
    notServing: [
      "publish_state",
      "publish_error",
      "publish_enqueued_at",
      "publish_started_at",
      "publish_completed_at",
      "password_sealed",
      "published_files_count",
      "publish_request",
      "created_at",
      "updated_at",
    ],
  },
  // The account's name shows on its sites' Auto-Index pages; nothing else of it is served (the
  // time zone is read by analytics at each flush, not by the site server).
  accounts: {
    serving: ["name"],
    notServing: ["id", "plan", "read_only", "read_only_reason", "last_dashboard_visit_at", "created_at", "updated_at", "time_zone"],
  },
  // An active custom domain serves its bucket's main site.
  custom_domains: {
    serving: ["bucket_id", "hostname", "status"],
    notServing: [
      "id",
      "account_id",
      "failure_reason",
      "ownership_token",
      "verified_at",
      "activated_at",
      "checks",
      "last_checked_at",
      "next_check_at",
      "check_attempts",
      "contested_since",
      "created_at",
      "updated_at",
    ],
  },
};

/** The newest entry's number (0: none yet). AUTOINCREMENT keeps it even when entries are pruned. */
function newestSeq(sqlite: Database): number {
  const row = sqlite.query("SELECT seq FROM sqlite_sequence WHERE name = 'site_changes'").get() as { seq: number } | null;
  return row?.seq ?? 0;
}

/**
 * A reader of the change log from now on: each call returns what changed since the previous one
 * (null: nothing). One indexed range read of the log's primary key.
 */
export function siteChangeReader(sqlite: Database): () => SiteChanges | null {
  let last = newestSeq(sqlite);
  const since = sqlite.query("SELECT seq, publication_id FROM site_changes WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?");
  return () => {
    const top = newestSeq(sqlite);
    if (top <= last) return null;
    const rows = since.all(last, top, MAX_NAMED + 1) as { seq: number; publication_id: string | null }[];
    const from = last;
    last = top;
    // Entries pruned before we read them, or too many to name: everything may have moved.
    if (rows.length === 0 || rows[0]!.seq !== from + 1 || rows.length > MAX_NAMED) return { all: true };
    const ids = new Set<string>();
    for (const r of rows) {
      if (r.publication_id === null) return { all: true };
      ids.add(r.publication_id);
    }
    return { all: false, publicationIds: [...ids] };
  };
}
