// Upgrades: a data dir with pending migrations is copied aside before they run (and Pier says
// so); a data dir written by a newer Pier is refused with a clear message and left untouched.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../../src/config";
import { openDatabase } from "../../../src/db/client";
import { migrate } from "../../../src/db/migrate";
import { migrations } from "../../../src/db/migrations";
import { openData } from "../../../src/runtime";
import { ServeDidNotStart, spawnFromSource } from "../../helpers/binary";

const dirs: string[] = [];
const newDir = () => {
  const d = mkdtempSync(join(tmpdir(), "pier-upgrade-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A data dir as the previous release left it: every migration but the newest, and some data. */
function oldDataDir(): string {
  const dataDir = newDir();
  const h = openDatabase(join(dataDir, "pier.db"));
  migrate(h.sqlite, migrations.slice(0, -1));
  h.sqlite
    .query(
      "INSERT INTO users (id, email, password_hash, is_instance_admin, created_at, updated_at) VALUES ('usr_old', 'old@example.com', 'x', 1, '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z')",
    )
    .run();
  h.close();
  return dataDir;
}

describe("upgrades", () => {
  test("pending migrations: the database is backed up first, the copy opens and holds the old data", () => {
    const dataDir = oldDataDir();
    const { handle, applied, preMigrateBackup } = openData({ ...loadConfig({}, {}), dataDir });
    handle.close();
    expect(applied).toEqual([migrations.at(-1)!.name]);
    expect(preMigrateBackup).toMatch(new RegExp(`/backups/pre-migrate-${migrations.at(-2)!.name}-.*\\.sqlite$`));
    const copy = new Database(preMigrateBackup!, { readonly: true });
    const journal = copy
      .query<{ name: string }, []>("SELECT name FROM __pier_migrations")
      .all()
      .map((r) => r.name);
    const users = copy.query<{ email: string }, []>("SELECT email FROM users").all();
    copy.close();
    expect(journal).not.toContain(migrations.at(-1)!.name);
    expect(users).toEqual([{ email: "old@example.com" }]);
  });

  test("an admin command does not migrate a data dir a running older server serves: refused, nothing changed", () => {
    const dataDir = oldDataDir();
    expect(() => openData({ ...loadConfig({}, {}), dataDir }, { servedBy: 4242 })).toThrow(/pid 4242.*Restart the server/);
    const h = new Database(join(dataDir, "pier.db"), { readonly: true });
    const journal = h
      .query<{ name: string }, []>("SELECT name FROM __pier_migrations")
      .all()
      .map((r) => r.name);
    h.close();
    expect(journal).not.toContain(migrations.at(-1)!.name);
    expect(existsSync(join(dataDir, "backups"))).toBe(false);
    // Up to date, the same command runs beside the server.
    const current = newDir();
    openData({ ...loadConfig({}, {}), dataDir: current }).handle.close();
    const again = openData({ ...loadConfig({}, {}), dataDir: current }, { servedBy: 4242 });
    again.handle.close();
    expect(again.applied).toEqual([]);
  });

  test("a new data dir or an up-to-date one makes no copy", () => {
    const dataDir = newDir();
    const config = { ...loadConfig({}, {}), dataDir };
    const first = openData(config);
    first.handle.close();
    const second = openData(config);
    second.handle.close();
    expect(first.preMigrateBackup).toBeNull();
    expect(second.preMigrateBackup).toBeNull();
    expect(existsSync(join(dataDir, "backups"))).toBe(false);
  });

  test("pier serve on an old data dir says it backed the database up", async () => {
    const dataDir = oldDataDir();
    const server = await spawnFromSource({ dataDir, env: { ...process.env, PIER_LOG_LEVEL: "info" } });
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    const out = server.output();
    expect(out).toContain("database backed up before migrating");
    expect(readdirSync(join(dataDir, "backups")).some((n) => n.startsWith("pre-migrate-"))).toBe(true);
  }, 90_000);

  test("a data dir written by a newer Pier is refused with a clear message, and nothing changes", async () => {
    const dataDir = newDir();
    const h = openDatabase(join(dataDir, "pier.db"));
    migrate(h.sqlite);
    h.sqlite.query("INSERT INTO __pier_migrations (name, applied_at) VALUES ('9999_from_the_future', '2030-01-01T00:00:00Z')").run();
    h.close();
    expect(() => openData({ ...loadConfig({}, {}), dataDir })).toThrow(/written by a newer Pier.*9999_from_the_future/);
    const refused = await spawnFromSource({ dataDir }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ServeDidNotStart);
    const { exitCode: code, output: err } = refused as ServeDidNotStart;
    expect(code).toBe(1);
    expect(err).toContain("pier: could not start: The data dir");
    expect(err).toContain("was written by a newer Pier");
    expect(err).not.toContain("INTERNAL_ERROR");
    expect(existsSync(join(dataDir, "backups"))).toBe(false);
  }, 90_000);
});
