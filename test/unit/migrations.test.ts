import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { migrate } from "../../src/db/migrate";
import { migrations as embedded } from "../../src/db/migrations";
import { openDatabase } from "../../src/db/client";
import { mailboxOf } from "../../src/sites/gate-limits";
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { migrationsModule, sitesModule, outputs } from "../../scripts/gen-embeds";

const tables = (db: Database) =>
  db
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type IN ('table','index') ORDER BY name")
    .all()
    .map((r) => r.name);

describe("migrations", () => {
  test("the embedded list holds every SQL file in src/db/migrations, in order", () => {
    const dir = join(import.meta.dir, "../../src/db/migrations");
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".sql"))
      .sort();
    expect(embedded.map((m) => m.name + ".sql")).toEqual(files);
    for (const m of embedded) expect(m.sql).toBe(readFileSync(join(dir, `${m.name}.sql`), "utf8"));
  });

  test("apply on a fresh database, then a second run is a no-op", () => {
    const db = new Database(":memory:");
    expect(migrate(db)).toEqual(embedded.map((m) => m.name));
    const schema = tables(db);
    expect(schema).toContain("jobs");
    expect(schema).toContain("__pier_migrations");
    expect(migrate(db)).toEqual([]);
    expect(tables(db)).toEqual(schema);
    expect(db.query("SELECT count(*) AS n FROM __pier_migrations").get()).toEqual({ n: embedded.length });
  });

  test("each migration runs in its own transaction: a failing one leaves the earlier ones applied and itself not at all", () => {
    const db = new Database(":memory:");
    const list = [
      { name: "0001_one", sql: "CREATE TABLE one (id INTEGER);" },
      { name: "0002_two", sql: "CREATE TABLE two (id INTEGER);\n--> statement-breakpoint\nINSERT INTO missing_table VALUES (1);" },
      { name: "0003_three", sql: "CREATE TABLE three (id INTEGER);" },
    ];
    expect(() => migrate(db, list)).toThrow(/missing_table/);
    expect(tables(db)).toContain("one");
    expect(tables(db)).not.toContain("two"); // its first statement was rolled back with it
    expect(tables(db)).not.toContain("three");
    expect(db.query("SELECT name FROM __pier_migrations").all()).toEqual([{ name: "0001_one" }]);

    // Fixed in the next release: only the missing ones run.
    list[1]!.sql = "CREATE TABLE two (id INTEGER);\n--> statement-breakpoint\nINSERT INTO two VALUES (1);";
    expect(migrate(db, list)).toEqual(["0002_two", "0003_three"]);
    expect(db.query("SELECT count(*) AS n FROM two").get()).toEqual({ n: 1 });
  });

  test("a file database opened twice (a restart) keeps its data and applies nothing new", () => {
    const dir = mkdtempSync(join(tmpdir(), "pier-mig-"));
    try {
      const a = openDatabase(join(dir, "pier.db"));
      migrate(a.sqlite);
      a.sqlite.exec("INSERT INTO __pier_migrations (name, applied_at) VALUES ('9999_marker', 'x')");
      a.close();
      const b = openDatabase(join(dir, "pier.db"));
      expect(migrate(b.sqlite)).toEqual([]);
      expect(b.sqlite.query("SELECT count(*) AS n FROM __pier_migrations WHERE name = '9999_marker'").get()).toEqual({ n: 1 });
      expect(b.sqlite.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()!.journal_mode).toBe("wal");
      expect(b.sqlite.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()!.foreign_keys).toBe(1);
      // A second connection (pier admin next to a running server) waits for locks instead of failing.
      expect(b.sqlite.query<{ timeout: number }, []>("PRAGMA busy_timeout").get()!.timeout).toBeGreaterThanOrEqual(1000);
      b.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("0019: publish sessions lose their clear site passwords", () => {
  test("every session's password is removed; a pending one that had one expires, the others are left as they were", () => {
    const db = new Database(":memory:");
    const upTo = embedded.findIndex((m) => m.name.startsWith("0019_"));
    migrate(db, embedded.slice(0, upTo));
    const future = new Date(Date.now() + 3600_000).toISOString();
    const insert = db.prepare(
      "INSERT INTO publish_sessions (id, account_id, bucket_id, credential_id, kind, status, bucket_revision, delete_missing, files, publish_request, created_at, expires_at) VALUES (?, 'acc', 'bkt', 'cred', 'main', ?, 1, 1, '[]', ?, 'x', ?)",
    );
    insert.run("pus_pending_pw", "pending", JSON.stringify({ access_mode: "password", password: "clear-secret", title: "T" }), future);
    insert.run("pus_pending", "pending", JSON.stringify({ access_mode: "public" }), future);
    insert.run("pus_done_pw", "finalized", JSON.stringify({ access_mode: "password", password: "clear-secret-2" }), "2026-01-01T00:00:00.000Z");
    migrate(db);
    const rows = db
      .query<{ id: string; publish_request: string; expires_at: string }, []>("SELECT id, publish_request, expires_at FROM publish_sessions ORDER BY id")
      .all();
    expect(JSON.stringify(rows)).not.toContain("clear-secret");
    const by = Object.fromEntries(rows.map((r) => [r.id, { request: JSON.parse(r.publish_request), expires: r.expires_at }]));
    expect(by.pus_pending_pw!.request).toEqual({ access_mode: "password", title: "T" });
    expect(by.pus_pending_pw!.expires <= new Date().toISOString()).toBe(true);
    expect(by.pus_pending_pw!.expires).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(by.pus_pending!).toEqual({ request: { access_mode: "public" }, expires: future });
    expect(by.pus_done_pw!).toEqual({ request: { access_mode: "password" }, expires: "2026-01-01T00:00:00.000Z" });
  });
});

describe("0021: gate codes get the inbox they went to", () => {
  test("the backfill computes mailboxOf's inbox for every address the gate accepts", () => {
    const db = new Database(":memory:");
    migrate(
      db,
      embedded.slice(
        0,
        embedded.findIndex((m) => m.name.startsWith("0021_")),
      ),
    );
    db.exec("PRAGMA foreign_keys = OFF");
    const insert = db.prepare(
      "INSERT INTO site_email_codes (id, publication_id, email, code_hash, created_at, expires_at) VALUES (?, 'pub', ?, 'h', 'x', 'x')",
    );
    const part = fc.stringMatching(/^[a-z0-9._+\-éü日]{1,12}$/);
    const domain = fc.oneof(fc.constantFrom("gmail.com", "googlemail.com", "example.org"), fc.stringMatching(/^[a-z0-9]{1,8}\.[a-z]{2,4}$/));
    const emails = fc.sample(
      fc.tuple(part, domain).map(([local, d]) => `${local}@${d}`),
      300,
    );
    emails.push("john.doe+news@gmail.com", "j.o.h.n@googlemail.com", "+tag@example.com", "a.b@example.com");
    emails.forEach((email, i) => insert.run(`gcd_${i}`, email));
    migrate(db);
    const rows = db.query<{ email: string; mailbox: string }, []>("SELECT email, mailbox FROM site_email_codes ORDER BY id").all();
    expect(rows).toHaveLength(emails.length);
    for (const r of rows) expect([r.email, r.mailbox]).toEqual([r.email, mailboxOf(r.email)]);
    expect(mailboxOf("j.o.h.n+x@googlemail.com")).toBe("john@gmail.com");
    expect(mailboxOf("a.b+x@example.com")).toBe("a.b@example.com");
  });
});

describe("generated embed lists", () => {
  // `npm run db:generate` and `npm run build` regenerate them; this catches a forgotten run.
  test("src/db/migrations/index.ts and src/sites-assets.gen.ts are up to date", () => {
    const root = join(import.meta.dir, "../..");
    expect(Object.keys(outputs).sort()).toEqual(["src/db/migrations/index.ts", "src/sites-assets.gen.ts"]);
    const hint = "run: bun run scripts/gen-embeds.ts";
    expect(readFileSync(join(root, "src/db/migrations/index.ts"), "utf8"), hint).toBe(migrationsModule());
    expect(readFileSync(join(root, "src/sites-assets.gen.ts"), "utf8"), hint).toBe(sitesModule());
  });
});
