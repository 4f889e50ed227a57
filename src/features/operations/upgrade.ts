// Upgrades: before a new Pier migrates an existing database it copies it aside (a migration
// that goes wrong, or a wish to go back to the old binary, then has a way back), and a data dir
// whose journal names migrations this binary does not know was written by a newer Pier: it is
// refused, because an older binary would misread tables it does not understand.
import type { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ApiError } from "../../core/errors";
import { serverVersion } from "../../core/version";
import { migrations as embedded } from "../../db/migrations";
import { snapshotInline } from "./snapshot";

export interface UpgradePlan {
  /** Embedded migrations this database has not run yet. */
  pending: string[];
  /** Where the database was copied before migrating; null for a new database or nothing pending. */
  backup: string | null;
}

export function prepareUpgrade(
  sqlite: Database,
  dataDir: string,
  opts: { now?: Date; migrations?: { name: string }[]; servedBy?: number | null } = {},
): UpgradePlan {
  const known = (opts.migrations ?? embedded).map((m) => m.name);
  const hasJournal =
    sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '__pier_migrations'").get()!.n > 0;
  const applied = hasJournal
    ? sqlite
        .query<{ name: string }, []>("SELECT name FROM __pier_migrations ORDER BY name")
        .all()
        .map((r) => r.name)
    : [];
  const unknown = applied.filter((n) => !known.includes(n));
  if (unknown.length)
    throw new ApiError(
      "DATA_DIR_TOO_NEW",
      `The data dir ${dataDir} was written by a newer Pier: its database has migration(s) ${unknown.join(", ")} that Pier ${serverVersion} does not know. ` +
        "Run that newer version (or a later one), or restore a backup taken before the upgrade into a new data dir. Nothing was changed.",
    );
  const pending = known.filter((n) => !applied.includes(n));
  // An admin command of a newer Pier must not change the schema under a running older server,
  // which would then refuse to start again (DATA_DIR_TOO_NEW).
  if (pending.length && applied.length && opts.servedBy)
    throw new ApiError(
      "DATA_DIR_IN_USE",
      `A Pier (pid ${opts.servedBy}) serves ${dataDir} with an older database than this pier ${serverVersion} (pending: ${pending.join(", ")}). ` +
        "Restart the server with this version (it migrates on start), then run the command again. Nothing was changed.",
    );
  if (!pending.length || !applied.length) return { pending, backup: null };
  const dir = join(dataDir, "backups");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stamp = (opts.now ?? new Date()).toISOString().replace(/[:.]/g, "-");
  const last = applied[applied.length - 1]!.replace(/[^A-Za-z0-9_-]/g, "");
  const file = join(dir, `pre-migrate-${last}-${stamp}.sqlite`);
  snapshotInline(join(dataDir, "pier.db"), file);
  return { pending, backup: file };
}
