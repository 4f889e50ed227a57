// Migrations are embedded in the binary (generated import list, see scripts/gen-embeds.ts) and
// applied in order at start, one transaction each, tracked in __pier_migrations.
import type { Database } from "bun:sqlite";
import { migrations as embedded } from "./migrations";

export function migrate(sqlite: Database, migrations = embedded): string[] {
  sqlite.exec(`CREATE TABLE IF NOT EXISTS __pier_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`);
  const applied = new Set(
    sqlite
      .query<{ name: string }, []>("SELECT name FROM __pier_migrations")
      .all()
      .map((r) => r.name),
  );
  const ran: string[] = [];
  for (const m of migrations) {
    if (applied.has(m.name)) continue;
    const statements = m.sql
      .split("--> statement-breakpoint")
      .map((s) => s.trim())
      .filter(Boolean);
    sqlite
      .transaction(() => {
        for (const s of statements) sqlite.exec(s);
        sqlite.query("INSERT INTO __pier_migrations (name, applied_at) VALUES (?, ?)").run(m.name, new Date().toISOString());
      })
      .immediate();
    ran.push(m.name);
  }
  return ran;
}
