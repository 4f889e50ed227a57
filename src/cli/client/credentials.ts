// The CLI's one credential store: $XDG_CONFIG_HOME/pier/credentials.json (default
// ~/.config/pier), directory 0700, file 0600, written atomically. `pier login` writes it (one
// entry per server, keyed by the server's canonical base URL, and the default server); every
// client command reads it through resolveTarget. Keys are never printed.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { UsageError } from "./args";
import { CliError } from "./errors";
import { isLoopbackHost } from "../../core/hosts";

type Env = Record<string, string | undefined>;

export interface ServerCredentials {
  api_key: string;
  /** The OAuth client `pier login` registered (absent for keys migrated from the old file). */
  client_id?: string;
  account_id?: string;
  account_name?: string;
  saved_at: string;
  /** Other URLs the user typed for this server (`127.0.0.1:8080` for `http://localhost:8080`). */
  aliases?: string[];
}

export interface CredentialsFile {
  version: 1;
  /** The server `pier` commands use when no URL is given. */
  default: string | null;
  servers: Record<string, ServerCredentials>;
}

export function configDir(env: Env = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith("/") ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), ".config");
  return join(base, "pier");
}

export const credentialsPath = (env: Env = process.env) => join(configDir(env), "credentials.json");

/**
 * "pier.example.com" -> https://pier.example.com: a server URL's origin (paths dropped); without a
 * scheme, http for this machine and https for any other host.
 */
export function normalizeUrl(raw: string): string {
  let v = raw.trim();
  if (!/^https?:\/\//i.test(v)) {
    const host = URL.parse(`http://${v}`)?.hostname;
    v = (host !== undefined && isLoopbackHost(host) ? "http://" : "https://") + v;
  }
  try {
    return new URL(v).origin;
  } catch {
    throw new CliError(
      `"${raw}" is not a server URL`,
      "BAD_URL",
      "Give the address the server's banner prints, e.g. https://pier.example.com or http://localhost:8080.",
      2,
    );
  }
}

const empty = (): CredentialsFile => ({ version: 1, default: null, servers: {} });

/**
 * The store; the file of earlier CLI versions (`{ "base_url", "api_key" }`, one server) is read
 * once and rewritten in the current shape, so keys saved before keep working.
 */
export function loadCredentials(env: Env = process.env): CredentialsFile {
  const file = credentialsPath(env);
  if (!existsSync(file)) return empty();
  let data: any;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    data = null;
  }
  if (data && data.version === 1 && data.servers && typeof data.servers === "object") return data as CredentialsFile;
  if (data && typeof data.base_url === "string" && typeof data.api_key === "string") {
    const base = normalizeUrl(data.base_url);
    const migrated: CredentialsFile = { version: 1, default: base, servers: { [base]: { api_key: data.api_key, saved_at: new Date().toISOString() } } };
    saveCredentials(migrated, env);
    return migrated;
  }
  throw new CliError(`${file} is not a Pier credentials file`, "BAD_CREDENTIALS_FILE", "Move it away and run pier login again.");
}

export function saveCredentials(data: CredentialsFile, env: Env = process.env): void {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700); // mkdir's mode applies only when it creates the folder
  const file = credentialsPath(env);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(data, null, 2) + "\n", { mode: 0o600 });
  chmodSync(tmp, 0o600); // mode is ignored when an old temp file exists
  renameSync(tmp, file);
}

/** The stored entry for `url`: by canonical base URL, else by an alias typed at login. */
export function findServer(data: CredentialsFile, url: string): { base: string; creds: ServerCredentials } | null {
  if (data.servers[url]) return { base: url, creds: data.servers[url]! };
  for (const [base, creds] of Object.entries(data.servers)) if (creds.aliases?.includes(url)) return { base, creds };
  return null;
}

export function removeServer(url: string, env: Env = process.env): ServerCredentials | null {
  const data = loadCredentials(env);
  const found = findServer(data, url);
  if (!found) return null;
  delete data.servers[found.base];
  if (data.default === found.base) data.default = Object.keys(data.servers)[0] ?? null;
  if (Object.keys(data.servers).length === 0) rmSync(credentialsPath(env), { force: true });
  else saveCredentials(data, env);
  return found.creds;
}

/** The server a command talks to: --url, else PIER_URL, else the default server of `pier login`. */
export function resolveServer(options: { url?: string }, env: Env = process.env): string | null {
  const given = options.url || env.PIER_URL?.trim();
  if (given) return normalizeUrl(given);
  return loadCredentials(env).default;
}

/**
 * The warning for a key about to travel over plain HTTP to another machine, else null. Warned,
 * not refused: a Pier on a home network is often reached as http://192.168.x.x (D291).
 */
export function clearTextWarning(baseUrl: string): string | null {
  const url = URL.parse(baseUrl);
  if (!url || url.protocol !== "http:" || isLoopbackHost(url.hostname)) return null;
  return `Warning: ${url.origin} does not use HTTPS; the key travels in clear text.`;
}

export interface Target {
  baseUrl: string;
  apiKey: string;
}

/**
 * The warning for a key given as `--key VALUE`: any local user sees it in `ps` while the command
 * runs, and it stays in the shell's history. Warned, not refused, so scripts keep working (D296).
 */
const ARGV_KEY_WARNING = "Warning: --key puts the key in the process list and shell history; set PIER_API_KEY, pipe it to --key-stdin, or run pier login.";

type KeyOptions = { url?: string; key?: string; "key-stdin"?: string };

/**
 * Server and key for a client command. Flags win (`--key`, or `--key-stdin`: the first line of
 * standard input, as `pier admin --password-stdin`), then PIER_URL / PIER_API_KEY, then what
 * `pier login` saved (the default server, or the entry of the URL given).
 */
export async function resolveTarget(options: KeyOptions, env: Env = process.env, warn = (line: string) => process.stderr.write(`${line}\n`)): Promise<Target> {
  let key = options.key;
  if (options["key-stdin"]) {
    if (key !== undefined) throw new UsageError("give --key or --key-stdin, not both");
    key = (await Bun.stdin.text()).split(/\r?\n/, 1)[0]!.trim();
    if (!key) throw new UsageError("--key-stdin: nothing on standard input");
  } else if (key) warn(ARGV_KEY_WARNING);
  const target = findTarget({ url: options.url, key }, env);
  const warning = clearTextWarning(target.baseUrl);
  if (warning) warn(warning);
  return target;
}

function findTarget(options: { url?: string; key?: string }, env: Env): Target {
  const baseUrl = resolveServer(options, env);
  if (!baseUrl) {
    throw new CliError(
      "no Pier server to talk to",
      "NOT_LOGGED_IN",
      "Run pier login URL once (the key is saved for every later command), or set PIER_URL and PIER_API_KEY.",
    );
  }
  const explicitKey = options.key || env.PIER_API_KEY?.trim();
  if (explicitKey) return { baseUrl, apiKey: explicitKey };
  const saved = findServer(loadCredentials(env), baseUrl);
  if (!saved) {
    throw new CliError(`not logged in to ${baseUrl}`, "NOT_LOGGED_IN", `Run pier login ${baseUrl}, or set PIER_API_KEY.`);
  }
  return { baseUrl: saved.base, apiKey: saved.creds.api_key };
}

/** The options of every command that talks to a server. */
export const serverOptions = [
  { name: "url", value: "URL", help: "Pier server (default: PIER_URL, else the server of pier login)" },
  { name: "key", value: "KEY", help: "API key (default: PIER_API_KEY, else the key pier login saved); visible in ps, prefer those" },
  { name: "key-stdin", help: "Read the API key from standard input (keeps it out of ps and shell history)" },
];
