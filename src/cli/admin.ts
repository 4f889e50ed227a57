// `pier admin ...`: operator commands against the data dir directly (no server needed; a
// running server on the same data dir is fine: SQLite WAL + busy timeout). Results go to
// stdout (keys and codes as the only line, everything else as one JSON line); messages to stderr.
import { loadConfig, type Config } from "../config";
import type { Deps, Scope } from "../core/context";
import { ApiError } from "../core/errors";
import { createLogger } from "../core/log";
import {
  adminCreateAccount, adminCreateKey, adminCreateUser, adminDisableTwoFactor, adminSetPassword, bootstrap,
} from "../features/accounts/admin";
import { createInvite } from "../features/accounts/invites";
import { getAccount, setPlan, setReadOnly } from "../features/accounts/service";
import { setDisabledByAdmin } from "../features/mail/addresses";
import { listOutbox } from "../features/mail/outbound";
import { sendTestMessage } from "../features/mail/test-message";
import { createDeps } from "../runtime";
import { ConfigError, parseArgs, required, UsageError } from "./args";

export const adminUsage = `Usage: pier admin <command> [options]

Commands:
  bootstrap --email E (--password P | --password-stdin) [--plan X]
                        Create the user and an account they own if missing; print a NEW
                        account-owner bucket_admin API key (the only line on stdout).
  user create --email E (--password P | --password-stdin) [--plan X]
                        Create a user with their own account.
  user password --email E (--password P | --password-stdin)
                        Set a new password (signs the user out everywhere).
  user disable-2fa --email E
                        Turn two-factor off for a user who lost their authenticator.
  account create --name N --owner EMAIL [--plan X]
  account plan --account ACC --plan X
  account read-only --account ACC [--reason R] [--off]
                        Make an account read-only (reads work, writes fail), or --off to undo.
  key create --email E [--account ACC] [--scope bucket_read|bucket_write|bucket_admin] [--label L]
                        Print a new API key (the only line on stdout; shown once).
  invite create [--email E] [--days N]
                        Print a one-time sign-up invite code (for --signup-mode invite).
  plans                 Print the plans and their entitlements as JSON.
  mail test ADDRESS [--server HOST:PORT]
                        Send a test message (text, HTML, one attachment) to ADDRESS through
                        the local SMTP receiver (--smtp-port; STARTTLS when offered).
  mail disable ADDRESS | mail enable ADDRESS
                        Block a bucket address (blocked_reason disabled_by_admin) or lift it.
  mail outbox [--limit N]
                        Print the outbound messages kept while no SMTP relay is configured
                        (agent login codes, site email codes, notices), newest first, one
                        JSON line each (default 20, at most 500).

Every command takes --data-dir DIR (or PIER_DATA_DIR) and the other server options
(--plans-file, --default-plan, --secret-key, ...). Passwords can come from --password,
from standard input with --password-stdin, or from PIER_ADMIN_PASSWORD, so they need
not appear in shell history or process lists.
`;

/** A command that ran but failed (exit 1, one line on stderr). */
class CommandFailed extends Error {}

type Io = { out: (line: string) => void; err: (line: string) => void };

const scopes: Scope[] = ["bucket_read", "bucket_write", "bucket_admin"];

async function password(options: Record<string, string>): Promise<string> {
  if (options["password-stdin"]) {
    const text = (await Bun.stdin.text()).replace(/\r?\n$/, "");
    if (!text) throw new UsageError("--password-stdin: nothing on standard input");
    return text;
  }
  const p = options.password ?? process.env.PIER_ADMIN_PASSWORD;
  if (!p) throw new UsageError("give a password with --password, --password-stdin or PIER_ADMIN_PASSWORD");
  return p;
}

function scopeOption(v: string | undefined): Scope | undefined {
  if (v === undefined) return undefined;
  if (!scopes.includes(v as Scope)) throw new UsageError(`--scope must be one of ${scopes.join(", ")}`);
  return v as Scope;
}

interface Command {
  /** Name of the one positional argument (e.g. `address`), stored in the options under it. */
  positional?: string;
  values?: string[];
  flags?: string[];
  run(deps: Deps, o: Record<string, string>, io: Io): Promise<void> | void;
}

const pw = { values: ["email", "password", "plan"], flags: ["password-stdin"] };

const commands: Record<string, Command> = {
  bootstrap: {
    ...pw,
    async run(deps, o, io) {
      const r = await bootstrap(deps, { email: required(o, "email"), password: await password(o), plan: o.plan });
      io.err(`${r.createdUser ? "created" : "found"} user ${r.user.email} (${r.user.id}); ${r.createdAccount ? "created" : "found"} account ${r.account.id} on plan ${r.account.plan}; new owner key follows`);
      io.out(r.key);
    },
  },
  "user create": {
    ...pw,
    async run(deps, o, io) {
      const { user, account } = await adminCreateUser(deps, { email: required(o, "email"), password: await password(o), plan: o.plan });
      io.out(JSON.stringify({ user_id: user.id, email: user.email, instance_admin: user.isInstanceAdmin, account_id: account.id, plan: account.plan }));
    },
  },
  "user password": {
    values: ["email", "password"], flags: ["password-stdin"],
    async run(deps, o, io) {
      const user = await adminSetPassword(deps, required(o, "email"), await password(o));
      io.err(`password of ${user.email} changed; their browser sessions ended`);
      io.out(JSON.stringify({ user_id: user.id, email: user.email }));
    },
  },
  "user disable-2fa": {
    values: ["email"],
    run(deps, o, io) {
      adminDisableTwoFactor(deps, required(o, "email"));
      io.err(`two-factor authentication is off for ${o.email}; their browser sessions ended`);
    },
  },
  "account create": {
    values: ["name", "owner", "plan"],
    run(deps, o, io) {
      const a = adminCreateAccount(deps, { name: required(o, "name"), ownerEmail: required(o, "owner"), plan: o.plan });
      io.out(JSON.stringify({ account_id: a.id, name: a.name, plan: a.plan }));
    },
  },
  "account plan": {
    values: ["account", "plan"],
    run(deps, o, io) {
      const a = setPlan(deps, required(o, "account"), required(o, "plan"));
      io.out(JSON.stringify({ account_id: a.id, plan: a.plan }));
    },
  },
  "account read-only": {
    values: ["account", "reason"], flags: ["off"],
    run(deps, o, io) {
      const readOnly = !o.off;
      if (!readOnly && o.reason) throw new UsageError("--reason is for turning read-only on");
      getAccount(deps, required(o, "account"));
      const a = setReadOnly(deps, o.account!, readOnly, o.reason ?? null);
      io.err(readOnly ? `account ${a.id} is read-only: reads work, writes fail with ACCOUNT_READ_ONLY` : `account ${a.id} is writable again`);
      io.out(JSON.stringify({ account_id: a.id, read_only: a.readOnly, reason: a.readOnlyReason }));
    },
  },
  "key create": {
    values: ["email", "account", "scope", "label"],
    run(deps, o, io) {
      const { key, accountId } = adminCreateKey(deps, { email: required(o, "email"), accountId: o.account, scope: scopeOption(o.scope), label: o.label });
      io.err(`new ${o.scope ?? "bucket_admin"} key for ${o.email} on ${accountId} follows; it is shown only once`);
      io.out(key);
    },
  },
  "invite create": {
    values: ["email", "days"],
    run(deps, o, io) {
      const days = o.days === undefined ? undefined : Number(o.days);
      const { code, invite } = createInvite(deps, { email: o.email ?? null, createdBy: "admin CLI", days });
      io.err(`invite ${invite.id}${invite.email ? ` for ${invite.email}` : ""}, valid until ${invite.expiresAt}; sign-up link: ${deps.urls.baseUrl}/signup?invite=${code}`);
      io.out(code);
    },
  },
  "mail test": {
    positional: "address", values: ["server"],
    async run(deps, o, io) {
      const to = required(o, "address");
      let server;
      if (o.server) {
        const m = /^(.+):(\d{1,5})$/.exec(o.server);
        if (!m) throw new UsageError("--server takes HOST:PORT");
        server = { host: m[1]!, port: Number(m[2]) };
      }
      const r = await sendTestMessage(deps.config, deps.urls, to, server).catch((e: Error & { response?: string }) => {
        throw new CommandFailed(`the receiver did not accept the message: ${e.response ?? e.message}`);
      });
      io.err(`test message sent to ${to} via ${r.server}: ${r.response}`);
      io.out(JSON.stringify(r));
    },
  },
  "mail disable": {
    positional: "address",
    run(deps, o, io) {
      const row = setDisabledByAdmin(deps, required(o, "address"), true);
      if (!row) throw new UsageError(`no bucket address ${o.address}`);
      io.err(`${o.address} refuses mail (blocked_reason disabled_by_admin) until \`pier admin mail enable\``);
      io.out(JSON.stringify({ address: o.address, bucket_id: row.bucketId, disabled_by_admin: true }));
    },
  },
  "mail enable": {
    positional: "address",
    run(deps, o, io) {
      const row = setDisabledByAdmin(deps, required(o, "address"), false);
      if (!row) throw new UsageError(`no bucket address ${o.address}`);
      io.out(JSON.stringify({ address: o.address, bucket_id: row.bucketId, disabled_by_admin: false }));
    },
  },
  "mail outbox": {
    values: ["limit"],
    run(deps, o, io) {
      const limit = o.limit === undefined ? 20 : Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new UsageError("--limit takes a whole number from 1 to 500");
      const rows = listOutbox(deps, limit);
      io.err(rows.length ? `${rows.length} outbox message(s), newest first` : `the outbox is empty${deps.config.smtpRelayUrl ? " (an SMTP relay is configured: mail goes there)" : ""}`);
      for (const m of rows) io.out(JSON.stringify({ id: m.id, created_at: m.created_at, kind: m.kind, to: m.to_address, subject: m.subject, text: m.text_body }));
    },
  },
  plans: {
    run(deps, _o, io) {
      io.out(JSON.stringify(deps.plans.ids().map((id) => ({ ...deps.plans.get(id), default: id === deps.config.defaultPlan }))));
    },
  },
};

export async function admin(argv: string[], io: Io = { out: (l) => console.log(l), err: (l) => console.error(l) }): Promise<number> {
  if (!argv.length || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    (argv.length ? io.out : io.err)(adminUsage);
    return argv.length ? 0 : 2;
  }
  const name = commands[`${argv[0]} ${argv[1]}`] ? `${argv[0]} ${argv[1]}` : argv[0]!;
  const command = commands[name];
  if (!command) {
    io.err(`pier admin: unknown command "${argv.slice(0, 2).join(" ")}"\n\n${adminUsage}`);
    return 2;
  }
  const rest = argv.slice(name.split(" ").length);
  const positional = command.positional && rest[0] !== undefined && !rest[0].startsWith("--") ? rest.shift() : undefined;
  if (rest.includes("--help") || rest.includes("-h")) {
    io.out(adminUsage);
    return 0;
  }
  let deps: (Deps & { close(): void }) | null = null;
  try {
    const { options, config: flags } = parseArgs(rest, command);
    if (command.positional && positional !== undefined) options[command.positional] = positional;
    const config: Config = loadConfig(process.env, flags);
    // Quiet unless asked: stdout is for results, stderr for one-line messages.
    const log = createLogger(flags["log-level"] || process.env.PIER_LOG_LEVEL ? config.logLevel : "warn");
    deps = await createDeps(config, config.httpPort, { log });
    await command.run(deps, options, io);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`pier admin ${name}: ${e.message} (see pier admin --help)`);
      return 2;
    }
    if (e instanceof ConfigError) {
      io.err(`pier admin: configuration error: ${e.message}`);
      return 2;
    }
    if (e instanceof ApiError || e instanceof CommandFailed) {
      io.err(`pier admin ${name}: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    deps?.close();
  }
}
