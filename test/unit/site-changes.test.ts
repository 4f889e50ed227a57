// The site change log (migration 0014_site_changes, src/sites/changes.ts): the triggers name the
// publications whose serving facts changed, and nothing else; every column of the tables the site
// server reads is classified, so a new column cannot be forgotten silently.
import { Database } from "bun:sqlite";
import { beforeEach, describe, expect, test } from "bun:test";
import { migrate } from "../../src/db/migrate";
import { SERVING_COLUMNS, siteChangeReader } from "../../src/sites/changes";

let db: Database;
const now = "2026-11-25T00:00:00.000Z";

beforeEach(() => {
  db = new Database(":memory:");
  db.exec("PRAGMA foreign_keys = ON");
  migrate(db);
  db.query("INSERT INTO accounts (id, name, plan, created_at, updated_at) VALUES ('acc_1', 'Ada', 'free', ?, ?)").run(now, now);
  for (const b of ["bkt_1", "bkt_2"])
    db.query("INSERT INTO buckets (id, account_id, title, created_at, updated_at) VALUES (?, 'acc_1', 'B', ?, ?)").run(b, now, now);
});

function insertPublication(id: string, bucket: string, slug: string) {
  db.query(
    `INSERT INTO publications (id, bucket_id, account_id, kind, public_slug, status, publish_state, created_at, updated_at)
     VALUES (?, ?, 'acc_1', 'main', ?, 'published', 'ready', ?, ?)`,
  ).run(id, bucket, slug, now, now);
}

describe("site change log", () => {
  test("every column of the tables the site server reads is classified, and each serving column fires a trigger", () => {
    for (const [table, { serving, notServing }] of Object.entries(SERVING_COLUMNS)) {
      const columns = (db.query(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name).sort();
      // A new column fails here until it is put in one list (and, if it changes what a site
      // serves, added to the table's update trigger in a migration).
      expect([...serving, ...notServing].sort()).toEqual(columns);
      const triggers = (db.query("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?").all(table) as { sql: string }[])
        .map((t) => t.sql)
        .filter((sql) => /AFTER UPDATE OF/i.test(sql));
      expect(triggers.length).toBe(1);
      const [head, when] = triggers[0]!.split(/\bWHEN\b/);
      for (const column of serving) {
        expect(head).toContain(`\`${column}\``);
        expect(when).toContain(`OLD.\`${column}\``);
      }
      for (const column of notServing) expect(head).not.toContain(`\`${column}\``);
    }
  });

  test("a publication's serving changes name it; publish progress, counts and timestamps do not", () => {
    const read = siteChangeReader(db);
    expect(read()).toBeNull();
    insertPublication("pub_a", "bkt_1", "alpha");
    insertPublication("pub_b", "bkt_2", "beta");
    expect(read()).toEqual({ all: false, publicationIds: ["pub_a", "pub_b"] });

    db.query(
      "UPDATE publications SET updated_at = 'x', publish_state = 'processing', published_files_count = 3, publish_request = '{}' WHERE id = 'pub_a'",
    ).run();
    // Written with the same value: no change.
    db.query("UPDATE publications SET access_mode = 'public', public_slug = 'alpha' WHERE id = 'pub_a'").run();
    expect(read()).toBeNull();

    db.query("UPDATE publications SET access_version = access_version + 1 WHERE id = 'pub_a'").run();
    expect(read()).toEqual({ all: false, publicationIds: ["pub_a"] });
    db.query("UPDATE publications SET public_slug = 'renamed', current_deploy_id = 'dep_1' WHERE id = 'pub_b'").run();
    expect(read()).toEqual({ all: false, publicationIds: ["pub_b"] });
    db.query("DELETE FROM publications WHERE id = 'pub_b'").run();
    expect(read()).toEqual({ all: false, publicationIds: ["pub_b"] });
  });

  test("an account's name names its publications; its plan or a dashboard visit does not", () => {
    insertPublication("pub_a", "bkt_1", "alpha");
    insertPublication("pub_b", "bkt_2", "beta");
    const read = siteChangeReader(db);
    db.query("UPDATE accounts SET plan = 'pro', last_dashboard_visit_at = ?, updated_at = ? WHERE id = 'acc_1'").run(now, now);
    expect(read()).toBeNull();
    db.query("UPDATE accounts SET name = 'Grace' WHERE id = 'acc_1'").run();
    expect(read()).toEqual({ all: false, publicationIds: ["pub_a", "pub_b"] });
  });

  test("a custom domain's activation or removal names its bucket's sites; its DNS re-checks do not", () => {
    insertPublication("pub_a", "bkt_1", "alpha");
    insertPublication("pub_b", "bkt_2", "beta");
    const read = siteChangeReader(db);
    db.query(
      `INSERT INTO custom_domains (id, bucket_id, account_id, hostname, status, ownership_token, created_at, updated_at)
       VALUES ('dom_1', 'bkt_1', 'acc_1', 'www.example.org', 'pending_validation', 't', ?, ?)`,
    ).run(now, now);
    expect(read()).toEqual({ all: false, publicationIds: ["pub_a"] });
    db.query("UPDATE custom_domains SET checks = '[1]', last_checked_at = ?, next_check_at = ?, check_attempts = 2 WHERE id = 'dom_1'").run(now, now);
    expect(read()).toBeNull();
    db.query("UPDATE custom_domains SET status = 'active', verified_at = ?, activated_at = ? WHERE id = 'dom_1'").run(now, now);
    expect(read()).toEqual({ all: false, publicationIds: ["pub_a"] });
    db.query("DELETE FROM custom_domains WHERE id = 'dom_1'").run();
    expect(read()).toEqual({ all: false, publicationIds: ["pub_a"] });
  });

  test("commits to other tables name nothing (analytics roll-ups, sessions, jobs)", () => {
    insertPublication("pub_a", "bkt_1", "alpha");
    const read = siteChangeReader(db);
    db.query("INSERT INTO analytics_salts (day, salt) VALUES ('2026-11-25', 's')").run();
    db.query("UPDATE buckets SET title = 'other', updated_at = 'y' WHERE id = 'bkt_1'").run();
    expect(read()).toBeNull();
  });

  test("a NULL entry, or entries pruned before they were read, mean every site", () => {
    const read = siteChangeReader(db);
    db.query("INSERT INTO site_changes (publication_id) VALUES (NULL)").run();
    expect(read()).toEqual({ all: true });
    insertPublication("pub_a", "bkt_1", "alpha");
    // The log keeps the newest 10,000 entries: a reader further behind has missed some.
    db.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10001) INSERT INTO site_changes (publication_id) SELECT 'pub_x' FROM n");
    expect((db.query("SELECT count(*) AS n FROM site_changes").get() as { n: number }).n).toBeLessThanOrEqual(10_000);
    expect(read()).toEqual({ all: true });
    expect(read()).toBeNull();
  });
});
