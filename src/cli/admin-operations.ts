// `pier admin check` and `pier admin backups`: the operator's view of the data dir's health and
// of the scheduled backups (src/features/operations).
import { CommandFailed, type AdminCommand } from "./admin";
import { UsageError } from "./client/args";

/** Loaded to run a command, not for --help (as in admin.ts). */
const operations = () => import("../features/operations");

export const operationsCommands: Record<string, AdminCommand> = {
  check: {
    usage: "check [--quick] [--repair] [--json]",
    summary:
      "Check the data dir: database integrity and foreign keys, every live file's and live deploy's blob (present, right size and hash; --quick hashes a sample), stray temp files, jobs stuck past their deadline. --repair fixes what is safe (re-queues jobs, removes temp files, moves damaged blobs aside) and says what it did. Exit 1 when something is wrong.",
    options: [
      { name: "quick", help: "Quick database check and hash only a sample of blobs" },
      { name: "repair", help: "Fix what is safe to fix" },
      { name: "json", help: "Print the report as one JSON line" },
    ],
    async run(deps, o, io) {
      const { checkDataDir } = await operations();
      const report = await checkDataDir(
        { sqlite: deps.sqlite, blobs: deps.blobs, clock: deps.clock, dataDir: deps.config.dataDir },
        { quick: !!o.quick, repair: !!o.repair },
      );
      const c = report.checked;
      if (o.json) io.out(JSON.stringify(report));
      else for (const f of report.findings) io.out(`${f.kind}: ${f.message}${f.repaired ? `\n  repaired: ${f.repaired}` : ""}`);
      const unrepaired = report.findings.filter((f) => !f.repaired).length;
      io.err(
        `${report.ok ? "ok" : `${report.findings.length} problem(s)${o.repair ? `, ${report.findings.length - unrepaired} repaired` : ""}`}: ` +
          `${c.blobs} blobs of ${c.file_refs} files and ${c.deploy_refs} live site files checked (${c.blobs_hashed} hashed${report.quick ? ", quick" : ""}), ` +
          `${c.running_jobs} running job(s)`,
      );
      if (unrepaired) throw new CommandFailed(`${unrepaired} problem(s) left; see above and /docs/guides/operations#restore`);
    },
  },
  backups: {
    usage: "backups [--json] [--now]",
    summary:
      "Show the scheduled backups (--backup-dir): each backup folder, the last one, the next due time and the last failure. --now writes one at once (the server need not run).",
    options: [
      { name: "json", help: "Print the state as one JSON line" },
      { name: "now", help: "Take a scheduled backup now (into --backup-dir), whatever the schedule" },
    ],
    async run(deps, o, io) {
      const { backupStatus, runScheduledBackup } = await operations();
      if (o.now) {
        if (!deps.config.backupDir) throw new UsageError("--now needs --backup-dir DIR (or PIER_BACKUP_DIR)");
        const r = await runScheduledBackup(deps, { force: true });
        io.err(`backup written to ${r.folder}`);
      }
      const s = backupStatus(deps);
      if (o.json) return io.out(JSON.stringify(s));
      if (!s.enabled) {
        io.err(
          "scheduled backups are off: start Pier with --backup-dir DIR (see /docs/guides/operations#scheduled-backups); pier backup --to DIR takes one by hand",
        );
        return;
      }
      io.out(`backup dir ${s.dir}, every ${s.every_ms / 3600_000}h, keeping ${s.keep}`);
      io.out(`last complete: ${s.last ? `${s.last.created_at} (${s.last.name})` : "none yet"}; next due: ${s.next_due_at}`);
      if (s.last_error) io.out(`last run FAILED at ${s.last_error.at}: ${s.last_error.message}`);
      for (const b of s.backups)
        io.out(
          `  ${b.name}  ${b.complete ? `complete, ${b.blobs} blobs, ${mib((b.blob_bytes ?? 0) + (b.database_bytes ?? 0))}, ${b.duration_seconds}s` : "INCOMPLETE (interrupted; not restorable)"}`,
        );
    },
  },
};

const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
