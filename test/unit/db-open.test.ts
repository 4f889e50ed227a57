import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/client";

// Another process may hold the database file's lock for a moment when Pier opens it (an
// operator's sqlite3 shell, a process's last connection checkpointing as it closes). Pier must
// wait for it, as every later statement does, instead of refusing to start with "database is locked".
test("opening a database another process holds locked for a moment waits for the lock", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pier-db-open-"));
  try {
    const file = join(dir, "pier.db");
    const holder = Bun.spawn(
      [
        process.execPath,
        "-e",
        `const { Database } = require("bun:sqlite");
         const db = new Database(${JSON.stringify(file)});
         db.exec("BEGIN EXCLUSIVE"); db.exec("CREATE TABLE held (a)");
         console.log("held");
         setTimeout(() => { db.exec("COMMIT"); db.close(); }, 700);`,
      ],
      { stdout: "pipe" },
    );
    const reader = holder.stdout.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain("held");
    const handle = openDatabase(file);
    try {
      expect(handle.sqlite.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
      expect(handle.sqlite.query("SELECT count(*) AS n FROM held").get()).toEqual({ n: 0 });
    } finally {
      handle.close();
    }
    expect(await holder.exited).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
