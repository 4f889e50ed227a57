// `pier admin ...`: operator commands against the data dir directly (no server needed; a
// running server on the same data dir is fine: SQLite WAL + busy timeout). Results go to
// stdout (keys and codes as the only line, everything else as one JSON line); messages to stderr.
import { ConfigError, loadConfig, type Config } from "../config";
import type { Deps, Scope } from "../core/context";
import { ApiError } from "../core/errors";
import { createLogger } from "../core/log";
import { helpText, parseCommand, required, UsageError, usageErrorText, type CommandSpec, type OptionSpec } from "./client/args";
import { connectHost } from "./healthcheck";
import { runningServer } from "./running-server";
import { operationsCommands } from "./admin-operations";
import { certificateCommands } from "./admin-certs";

// The features and the data dir's Deps (src/deps.ts, not the whole server of src/runtime.ts) are
// loaded when a command runs: the usage, --help and a usage error answer without them.
const accounts = () => import("../features/accounts");
const buckets = () => import("../features/buckets");
const mail = () => import("../features/mail");

/** A command that ran but failed (exit 1, one line on stderr). */
export class CommandFailed extends Error {}

export type Io = { out: (line: string) => void; err: (line: string) => void };

const scopes: Scope[] = ["bucket_read", "bucket_write", "bucket_admin"];

const ARGV_PASSWORD_WARNING =
  "Warning: --password puts the password in the process list and shell history; set PIER_ADMIN_PASSWORD or pipe it to --password-stdin.";

async function password(options: Record<string, string>, io: Io): Promise<string> {
  if (options["password-stdin"]) {
    if (options.password !== undefined) throw new UsageError("give --password or --password-stdin, not both");
    const text = (await Bun.stdin.text()).replace(/\r?\n$/, "");
    if (!text) throw new UsageError("--password-stdin: nothing on standard input");
    return text;
  }
  // As for the client's --key (D296): still taken, with the safer ways named.
  if (options.password !== undefined) io.err(ARGV_PASSWORD_WARNING);
  const p = options.password ?? process.env.PIER_ADMIN_PASSWORD;
  if (!p) throw new UsageError("give a password with --password, --password-stdin or PIER_ADMIN_PASSWORD");
  return p;
}

function scopeOption(v: string | undefined): Scope | undefined {
  if (v === undefined) return undefined;
  if (!scopes.includes(v as Scope)) throw new UsageError(`--scope must be one of ${scopes.join(", ")}`);
  return v as Scope;
}

export interface AdminCommand {
  usage: string;
  summary: string;
  /** The one positional argument (e.g. `ADDRESS`), stored in the options under its lower-case name. */
  positional?: string;
  options?: OptionSpec[];
  /** `configFlags`: the server options given on the command line (--smtp-port, ...). */
  run(deps: Deps, o: Record<string, string>, io: Io, configFlags: Record<string, string>): Promise<void> | void;
}

const opt = {
  email: { name: "email", value: "EMAIL", help: "The user's email address" },
  password: { name: "password", value: "PASSWORD", help: "The password (or --password-stdin, or PIER_ADMIN_PASSWORD)" },
  passwordStdin: { name: "password-stdin", help: "Read the password from standard input" },
  plan: { name: "plan", value: "PLAN", help: "Plan id (pier admin plans lists them; default --default-plan)" },
  account: { name: "account", value: "ACC", help: "Account id (acc_...)" },
};
const pw = [opt.email, opt.password, opt.passwordStdin, opt.plan];

/** Where `mail test` sends: --server, else --smtp-port, else the running server's port, else the configured one. */
function mailTestServer(deps: Deps, o: Record<string, string>, configFlags: Record<string, string>): { host: string; port: number } | undefined {
  if (o.server) {
    const m = /^(.+):(\d{1,5})$/.exec(o.server);
    if (!m) throw new UsageError("--server takes HOST:PORT");
    return { host: m[1]!, port: Number(m[2]) };
  }
  if (configFlags["smtp-port"] !== undefined) return undefined;
  const running = runningServer(deps.config.dataDir);
  if (running?.smtp_port) return { host: connectHost(running.host), port: running.smtp_port };
  return undefined;
}

const commands: Record<string, AdminCommand> = {
  bootstrap: {
    usage: "bootstrap --email EMAIL (--password P | --password-stdin) [--plan PLAN]",
    summary: "Create the user and an account they own if missing; print a NEW account-owner bucket_admin API key (the only line on stdout).",
    options: pw,
    async run(deps, o, io) {
      const { bootstrap } = await accounts();
      const r = await bootstrap(deps, { email: required(o, "email"), password: await password(o, io), plan: o.plan });
      io.err(
        `${r.createdUser ? "created" : "found"} user ${r.user.email} (${r.user.id}); ${r.createdAccount ? "created" : "found"} account ${r.account.id} on plan ${r.account.plan}; new owner key follows`,
      );
      io.out(r.key);
    },
  },
  "user create": {
    usage: "user create --email EMAIL (--password P | --password-stdin) [--plan PLAN]",
    summary: "Create a user with their own account.",
    options: pw,
    async run(deps, o, io) {
      const { adminCreateUser } = await accounts();
      const { user, account } = await adminCreateUser(deps, { email: required(o, "email"), password: await password(o, io), plan: o.plan });
      io.out(JSON.stringify({ user_id: user.id, email: user.email, instance_admin: user.isInstanceAdmin, account_id: account.id, plan: account.plan }));
    },
  },
  "user password": {
    usage: "user password --email EMAIL (--password P | --password-stdin)",
    summary: "Set a new password (signs the user out everywhere).",
    options: [opt.email, opt.password, opt.passwordStdin],
    async run(deps, o, io) {
      const { adminSetPassword } = await accounts();
      const user = await adminSetPassword(deps, required(o, "email"), await password(o, io));
      io.err(`password of ${user.email} changed; their browser sessions ended`);
      io.out(JSON.stringify({ user_id: user.id, email: user.email }));
    },
  },
  "user disable-2fa": {
    usage: "user disable-2fa --email EMAIL",
    summary: "Turn two-factor off for a user who lost their authenticator.",
    options: [opt.email],
    async run(deps, o, io) {
      const { adminDisableTwoFactor } = await accounts();
      adminDisableTwoFactor(deps, required(o, "email"));
      io.err(`two-factor authentication is off for ${o.email}; their browser sessions ended`);
    },
  },
  "user disable": {
    usage: "user disable --email EMAIL",
    summary: "Disable a user: no sign-in, sessions end, their API keys and connections stop working (user enable undoes it).",
    options: [opt.email],
    async run(deps, o, io) {
      const { adminSetDisabled } = await accounts();
      const user = adminSetDisabled(deps, required(o, "email"), true);
      io.err(`${user.email} is disabled: no sign-in, their sessions ended, their keys and connections stop working`);
      io.out(JSON.stringify({ user_id: user.id, email: user.email, disabled: true }));
    },
  },
  "user enable": {
    usage: "user enable --email EMAIL",
    summary: "Enable a disabled user again.",
    options: [opt.email],
    async run(deps, o, io) {
      const { adminSetDisabled } = await accounts();
      const user = adminSetDisabled(deps, required(o, "email"), false);
      io.out(JSON.stringify({ user_id: user.id, email: user.email, disabled: false }));
    },
  },
  "account create": {
    usage: "account create --name NAME --owner EMAIL [--plan PLAN]",
    summary: "Create an account owned by an existing user.",
    options: [{ name: "name", value: "NAME", help: "Account name" }, { name: "owner", value: "EMAIL", help: "The owning user's email" }, opt.plan],
    async run(deps, o, io) {
      const { adminCreateAccount } = await accounts();
      const a = adminCreateAccount(deps, { name: required(o, "name"), ownerEmail: required(o, "owner"), plan: o.plan });
      io.out(JSON.stringify({ account_id: a.id, name: a.name, plan: a.plan }));
    },
  },
  "account plan": {
    usage: "account plan --account ACC --plan PLAN",
    summary: "Move an account to another plan.",
    options: [opt.account, opt.plan],
    async run(deps, o, io) {
      const { setPlan } = await accounts();
      const a = setPlan(deps, required(o, "account"), required(o, "plan"));
      io.out(JSON.stringify({ account_id: a.id, plan: a.plan }));
    },
  },
  "account read-only": {
    usage: "account read-only --account ACC [--reason R] [--off]",
    summary: "Make an account read-only (reads work, writes fail), or --off to undo.",
    options: [opt.account, { name: "reason", value: "R", help: "Why (shown to the account)" }, { name: "off", help: "Make the account writable again" }],
    async run(deps, o, io) {
      const { getAccount, setReadOnly } = await accounts();
      const readOnly = !o.off;
      if (!readOnly && o.reason) throw new UsageError("--reason is for turning read-only on");
      getAccount(deps, required(o, "account"));
      const a = setReadOnly(deps, o.account!, readOnly, o.reason ?? null);
      io.err(readOnly ? `account ${a.id} is read-only: reads work, writes fail with ACCOUNT_READ_ONLY` : `account ${a.id} is writable again`);
      io.out(JSON.stringify({ account_id: a.id, read_only: a.readOnly, reason: a.readOnlyReason }));
    },
  },
  "key create": {
    usage: "key create --email EMAIL [--account ACC] [--scope bucket_read|bucket_write|bucket_admin] [--label L]",
    summary: "Print a new API key (the only line on stdout; shown once).",
    options: [
      opt.email,
      opt.account,
      { name: "scope", value: "SCOPE", help: "bucket_read, bucket_write or bucket_admin (default)" },
      { name: "label", value: "L", help: "A name for the key" },
    ],
    async run(deps, o, io) {
      const { adminCreateKey } = await accounts();
      const { key, accountId } = adminCreateKey(deps, { email: required(o, "email"), accountId: o.account, scope: scopeOption(o.scope), label: o.label });
      io.err(`new ${o.scope ?? "bucket_admin"} key for ${o.email} on ${accountId} follows; it is shown only once`);
      io.out(key);
    },
  },
  "invite create": {
    usage: "invite create [--email EMAIL] [--days N]",
    summary: "Print a one-time sign-up invite code (for --signup-mode invite).",
    options: [
      { name: "email", value: "EMAIL", help: "Only this address may use it" },
      { name: "days", value: "N", help: "Days it stays valid" },
    ],
    async run(deps, o, io) {
      const { createInvite } = await accounts();
      const days = o.days === undefined ? undefined : Number(o.days);
      const { code, invite } = createInvite(deps, { email: o.email ?? null, createdBy: "admin CLI", days });
      io.err(
        `invite ${invite.id}${invite.email ? ` for ${invite.email}` : ""}, valid until ${invite.expiresAt}; sign-up link: ${deps.urls.baseUrl}/signup?invite=${code}`,
      );
      io.out(code);
    },
  },
  plans: {
    usage: "plans",
    summary: "Print the plans and their entitlements as JSON.",
    run(deps, _o, io) {
      io.out(JSON.stringify(deps.plans.ids().map((id) => ({ ...deps.plans.get(id), default: id === deps.config.defaultPlan }))));
    },
  },
  "mail test": {
    usage: "mail test ADDRESS [--server HOST:PORT | --smtp-port PORT]",
    summary:
      "Send a test message (text, HTML, one attachment) to ADDRESS through the local SMTP receiver (STARTTLS when offered): " +
      "the SMTP port of the Pier running on this data dir, else --smtp-port / PIER_SMTP_PORT (default 2525).",
    positional: "ADDRESS",
    options: [{ name: "server", value: "HOST:PORT", help: "Send to another receiver instead" }],
    async run(deps, o, io, configFlags) {
      const { localSmtpServer, sendTestMessage } = await mail();
      const to = required(o, "address");
      const server = mailTestServer(deps, o, configFlags) ?? localSmtpServer(deps.config);
      if (!server) throw new UsageError("the SMTP receiver is off (--smtp-port off) and no Pier runs on this data dir; give --server HOST:PORT");
      const r = await sendTestMessage(deps.config, deps.urls, to, server).catch((e: Error & { response?: string }) => {
        throw new CommandFailed(`the receiver at ${server.host}:${server.port} did not accept the message: ${e.response ?? e.message}`);
      });
      io.err(`test message sent to ${to} via ${r.server}: ${r.response}`);
      io.out(JSON.stringify(r));
    },
  },
  "mail disable": {
    usage: "mail disable ADDRESS",
    summary: "Block a bucket address (blocked_reason disabled_by_admin) until mail enable.",
    positional: "ADDRESS",
    async run(deps, o, io) {
      const { setDisabledByAdmin } = await buckets();
      const row = setDisabledByAdmin(deps, required(o, "address"), true);
      if (!row) throw new UsageError(`no bucket address ${o.address}`);
      io.err(`${o.address} refuses mail (blocked_reason disabled_by_admin) until \`pier admin mail enable\``);
      io.out(JSON.stringify({ address: o.address, bucket_id: row.bucketId, disabled_by_admin: true }));
    },
  },
  "mail enable": {
    usage: "mail enable ADDRESS",
    summary: "Lift a mail disable.",
    positional: "ADDRESS",
    async run(deps, o, io) {
      const { setDisabledByAdmin } = await buckets();
      const row = setDisabledByAdmin(deps, required(o, "address"), false);
      if (!row) throw new UsageError(`no bucket address ${o.address}`);
      io.out(JSON.stringify({ address: o.address, bucket_id: row.bucketId, disabled_by_admin: false }));
    },
  },
  "mail outbox": {
    usage: "mail outbox [--limit N]",
    summary:
      "Print the outbound messages kept while no SMTP relay is configured (agent login codes, site email codes, notices), newest first, one JSON line each.",
    options: [{ name: "limit", value: "N", help: "How many (default 20, at most 500)" }],
    async run(deps, o, io) {
      const { listOutbox } = await mail();
      const limit = o.limit === undefined ? 20 : Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new UsageError("--limit takes a whole number from 1 to 500");
      const rows = listOutbox(deps, limit);
      io.err(
        rows.length
          ? `${rows.length} outbox message(s), newest first`
          : `the outbox is empty${deps.config.smtpRelayUrl ? " (an SMTP relay is configured: mail goes there)" : ""}`,
      );
      for (const m of rows)
        io.out(JSON.stringify({ id: m.id, created_at: m.created_at, kind: m.kind, to: m.to_address, subject: m.subject, text: m.text_body }));
    },
  },
  ...certificateCommands,
  ...operationsCommands,
};

const specOf = (name: string, c: AdminCommand): CommandSpec => ({
  name: `admin ${name}`,
  usage: `admin ${c.usage}`,
  summary: c.summary,
  options: c.options,
  config: true,
  positionals: c.positional ? [{ name: c.positional, required: true }] : [],
});

/** The command list, optionally only one group ("user", "mail", ...). */
export function adminUsage(group?: string): string {
  const rows = Object.entries(commands)
    .filter(([n]) => !group || n.split(" ")[0] === group)
    .map(([, c]) => {
      const head = `  ${c.usage}`;
      return `${head}\n${wrap(c.summary, 24)}`;
    });
  return `Usage: pier admin <command> [options]\n\nCommands:\n${rows.join("\n")}\n
Every command takes --data-dir DIR (or PIER_DATA_DIR) and the other server options
(--plans-file, --default-plan, --secret-key, ...), and answers --help. Passwords can come from
--password, from standard input with --password-stdin, or from PIER_ADMIN_PASSWORD, so they need
not appear in shell history or process lists.
`;
}

function wrap(text: string, indent: number, width = 100): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.map((l) => `${" ".repeat(indent)}${l}`).join("\n");
}

export async function admin(argv: string[], io: Io = { out: (l) => console.log(l), err: (l) => console.error(l) }, debug = false): Promise<number> {
  if (!argv.length || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    (argv.length ? io.out : io.err)(adminUsage());
    return argv.length ? 0 : 2;
  }
  const name = commands[`${argv[0]} ${argv[1]}`] ? `${argv[0]} ${argv[1]}` : argv[0]!;
  const command = commands[name];
  if (!command) {
    const group = Object.keys(commands).some((n) => n.startsWith(`${argv[0]} `)) ? argv[0] : undefined;
    // `pier admin user --help`: the group's commands.
    if (group && (argv[1] === "--help" || argv[1] === "-h" || argv[1] === undefined)) {
      (argv[1] ? io.out : io.err)(adminUsage(group));
      return argv[1] ? 0 : 2;
    }
    io.err(`pier admin: unknown command "${argv.slice(0, group ? 2 : 1).join(" ")}"\n\n${adminUsage(group)}`);
    return 2;
  }
  const spec = specOf(name, command);
  let deps: (Deps & { close(): void }) | null = null;
  try {
    const parsed = parseCommand(spec, argv.slice(name.split(" ").length));
    if (parsed.help) {
      io.out(helpText(spec).trimEnd());
      return 0;
    }
    const options = { ...parsed.options };
    if (command.positional) options[command.positional.toLowerCase()] = parsed.positionals[command.positional]!;
    const config: Config = loadConfig(process.env, parsed.config);
    // Quiet unless asked: stdout is for results, stderr for one-line messages.
    const log = createLogger(parsed.config["log-level"] || process.env.PIER_LOG_LEVEL ? config.logLevel : "warn");
    const { createDeps } = await import("../deps");
    deps = await createDeps(config, config.httpPort, { log, clearTempFiles: false, servedBy: runningServer(config.dataDir)?.pid ?? null });
    await command.run(deps, options, io, parsed.config);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(usageErrorText(spec, e.message).trimEnd());
      return 2;
    }
    if (e instanceof ConfigError) {
      io.err(`pier admin: configuration error: ${e.message}`);
      return 2;
    }
    if (e instanceof ApiError || e instanceof CommandFailed) {
      io.err(`pier admin ${name}: ${e.message}${e instanceof ApiError ? ` (${e.code})` : ""}`);
      return 1;
    }
    io.err(
      `pier ${spec.name}: ${(e as Error)?.message ?? String(e)} (INTERNAL_ERROR)${debug ? `\n${(e as Error)?.stack ?? ""}` : "\nRun the command again with --debug to see where it happened."}`,
    );
    return 1;
  } finally {
    deps?.close();
  }
}
