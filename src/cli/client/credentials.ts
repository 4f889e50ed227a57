// Where the CLI keeps its credentials: $XDG_CONFIG_HOME/pier/credentials.json (default
// ~/.config/pier), directory 0700, file 0600, written atomically. Keys are never printed.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export interface ServerCredentials {
  api_key: string;
  client_id: string;
  account_id?: string;
  account_name?: string;
  saved_at: string;
}

export interface CredentialsFile {
  version: 1;
  /** The server `pier` commands use when no URL is given. */
  default: string | null;
  servers: Record<string, ServerCredentials>;
}

export function configDir(env: Record<string, string | undefined> = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith("/") ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), ".config");
  return join(base, "pier");
}

export const credentialsPath = (env = process.env) => join(configDir(env), "credentials.json");

export function loadCredentials(env = process.env): CredentialsFile {
  const file = credentialsPath(env);
  if (!existsSync(file)) return { version: 1, default: null, servers: {} };
  try {
    const data = JSON.parse(readFileSync(file, "utf8")) as CredentialsFile;
    if (data && data.version === 1 && typeof data.servers === "object") return data;
  } catch {}
  throw new Error(`${file} is not a Pier credentials file; move it away and run pier login again`);
}

export function saveCredentials(data: CredentialsFile, env = process.env): void {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = credentialsPath(env);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(data, null, 2) + "\n", { mode: 0o600 });
  chmodSync(tmp, 0o600); // mode is ignored when an old temp file exists
  renameSync(tmp, file);
}

export function removeServer(url: string, env = process.env): ServerCredentials | null {
  const data = loadCredentials(env);
  const creds = data.servers[url] ?? null;
  if (!creds) return null;
  delete data.servers[url];
  if (data.default === url) data.default = Object.keys(data.servers)[0] ?? null;
  if (Object.keys(data.servers).length === 0) rmSync(credentialsPath(env), { force: true });
  else saveCredentials(data, env);
  return creds;
}
