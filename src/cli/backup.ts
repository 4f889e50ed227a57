// `pier backup`, `pier backup verify` and `pier restore`: operator commands on the data dir and
// a backup folder (no server needed; `pier backup` runs fine beside a serving Pier). Results go
// to stdout as one JSON line, messages to stderr.
import { join } from "node:path";
import { loadConfig } from "../config";
import { ApiError } from "../core/errors";
import { createBackup, isArchivePath, restoreBackup, verifyBackup } from "../features/operations";
import type { CommandSpec, Parsed } from "./client/args";
import type { Command } from "./client/command";
import { CliError } from "./client/errors";
import { runningServer } from "./running-server";

const say = (line: string) => process.stderr.write(`${line}\n`);

/** Operation failures are the operator's to fix, not bugs: one line with the code. */
async function operatorErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ApiError) throw new CliError(e.message, e.code);
    throw e;
  }
}

const backupSpec: CommandSpec = {
  name: "backup",
  summary: "Copy the data dir (database snapshot, referenced blobs, optionally the secret key) into a backup folder or archive while Pier runs.",
  usage: "backup --to DIR|FILE.tar[.gz] [--data-dir DIR] [--include-secret-key]\n       pier backup verify FOLDER|FILE",
  options: [
    {
      name: "to",
      value: "DIR|FILE",
      help: "A backup folder (new, empty, or an earlier backup: then only new blobs are copied), or a file ending in .tar, .tar.gz or .tgz (one archive, always a full backup)",
    },
    { name: "include-secret-key", help: "Also copy the secret key (needed to read encrypted secrets and form submissions after a restore)" },
  ],
  config: true,
  details:
    "The database is copied from one consistent snapshot (VACUUM INTO) and every blob that snapshot references is copied\n" +
    "and hash-checked. The backup is complete only when its manifest.json exists: an interrupted or failed backup never\n" +
    "writes one. An archive (.tar, .tar.gz/.tgz gzip) is written under a temp name and renamed when complete; it is\n" +
    "always full (use a folder for incremental backups). See /docs/guides/operations#backups.",
};

export const backup: Command = {
  spec: backupSpec,
  async run(args: Parsed) {
    const to = args.options.to;
    if (!to) throw new CliError("give the backup folder with --to DIR", "USAGE", undefined, 2);
    const config = loadConfig(process.env, args.config);
    const include = args.options["include-secret-key"] === "true";
    const r = await operatorErrors(() => createBackup({ dataDir: config.dataDir, to, includeSecretKey: include, secretKey: config.secretKey }));
    const m = r.manifest;
    say(
      isArchivePath(to)
        ? `full backup of ${config.dataDir} written to the archive ${r.folder}: database ${mib(m.database.size)}, ${m.blobs.count} blobs (${mib(m.blobs.bytes)}) (an archive is always full; back up to a folder for incremental backups)`
        : `backup of ${config.dataDir} written to ${r.folder}: database ${mib(m.database.size)}, ${m.blobs.count} blobs (${mib(m.blobs.bytes)}), ` +
            `${m.blobs.copied} copied now (${mib(m.blobs.copied_bytes)}), ${m.duration_seconds}s`,
    );
    say(secretKeyNotice(include, config.secretKey ? "PIER_SECRET_KEY / --secret-key" : join(config.dataDir, "secret.key")));
    for (const p of r.problems) say(`warning: ${p} (run pier admin check on the data dir)`);
    process.stdout.write(`${JSON.stringify({ folder: r.folder, ...m, problems: r.problems })}\n`);
    return r.problems.length ? 1 : 0;
  },
};

export function secretKeyNotice(included: boolean, keySource: string): string {
  return included
    ? "WARNING: this backup CONTAINS the secret key (secret.key). Anyone who has the backup can read the encrypted secret variables, form submissions and two-factor seeds: store it like the key itself."
    : `WARNING: the secret key is NOT in this backup. Keep a copy of it (${keySource}) somewhere safe: without it, encrypted secret variables, form submissions and two-factor seeds cannot be read after a restore. Add --include-secret-key to put it in the backup.`;
}

const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;

const verifySpec: CommandSpec = {
  name: "backup verify",
  summary:
    "Check a backup folder or archive: manifest, database hash and integrity, the hash of every blob it references, and that this Pier can restore it (not written by a newer one).",
  usage: "backup verify FOLDER|FILE",
  positionals: [{ name: "FOLDER", required: true }],
};

export const backupVerify: Command = {
  spec: verifySpec,
  async run(args: Parsed) {
    const r = await operatorErrors(() => verifyBackup(args.positionals.FOLDER!));
    for (const p of r.problems) say(`problem: ${p}`);
    const tooNew = r.too_new ? { code: "BACKUP_TOO_NEW", message: r.too_new } : {};
    process.stdout.write(
      `${JSON.stringify({ folder: r.folder, ok: r.problems.length === 0 && !r.too_new, ...tooNew, blobs_checked: r.blobs_checked, bytes_checked: r.bytes_checked, problems: r.problems })}\n`,
    );
    // A backup this Pier cannot restore fails here as the restore would, with its code (D298).
    if (r.too_new) throw new CliError(r.too_new, "BACKUP_TOO_NEW");
    say(
      r.problems.length
        ? `${r.folder}: ${r.problems.length} problem(s); this backup would not restore as taken`
        : `${r.folder}: ok (backup of ${r.manifest.created_at} by Pier ${r.manifest.pier_version}; ${r.blobs_checked} blobs, ${mib(r.bytes_checked)} checked; secret key ${r.manifest.secret_key_included ? "included" : "not included"})`,
    );
    return r.problems.length ? 1 : 0;
  },
};

const restoreSpec: CommandSpec = {
  name: "restore",
  summary: "Rebuild a data dir from a backup folder or archive (verified first).",
  usage: "restore FOLDER|FILE --data-dir NEW [--force]",
  positionals: [{ name: "FOLDER", required: true }],
  options: [{ name: "force", help: "Restore into a data dir that is not empty (its database, blobs and key are replaced)" }],
  config: true,
  details: "Refuses a data dir that is not empty (without --force) or that a running Pier serves. See /docs/guides/operations#restore.",
};

export const restore: Command = {
  spec: restoreSpec,
  async run(args: Parsed) {
    if (!args.config["data-dir"] && !process.env.PIER_DATA_DIR) throw new CliError("give the data dir to rebuild with --data-dir NEW", "USAGE", undefined, 2);
    const config = loadConfig(process.env, args.config);
    const running = runningServer(config.dataDir);
    const r = await operatorErrors(() =>
      restoreBackup({ from: args.positionals.FOLDER!, dataDir: config.dataDir, force: args.options.force === "true", runningPid: running?.pid ?? null }),
    );
    say(`restored the backup of ${r.manifest.created_at} (Pier ${r.manifest.pier_version}) into ${r.dataDir}: ${r.blobs} blobs, ${mib(r.bytes)}`);
    if (r.blobs_missing.length)
      say(
        `WARNING: ${r.blobs_missing.length} blob(s) were already missing from the data dir when the backup was taken (first: ${r.blobs_missing[0]}); the files using them are restored broken. pier admin check --data-dir ${r.dataDir} names them: upload them again, or copy the blobs from an older backup.`,
      );
    if (r.jobs_requeued) say(`${r.jobs_requeued} job(s) that were running at backup time will run again on start`);
    say(
      r.secret_key_restored
        ? "the secret key was restored from the backup"
        : `WARNING: the backup has no secret key. Copy the original secret.key into ${r.dataDir} or start Pier with the original PIER_SECRET_KEY; without it encrypted secret variables, form submissions and two-factor seeds cannot be read.`,
    );
    say(`next: pier serve --data-dir ${r.dataDir}, then pier admin check --data-dir ${r.dataDir}`);
    process.stdout.write(`${JSON.stringify(r)}\n`);
    return 0;
  },
};
