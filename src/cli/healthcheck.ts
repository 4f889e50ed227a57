// `pier healthcheck`: exit 0 when the local server answers GET /livez, 1 otherwise.
// For container HEALTHCHECKs and monitoring on hosts without curl (the runtime image has none).
// It reads the same options as `pier serve` (flags and PIER_* variables), so it checks the
// port the server was told to use and sends the API host in the Host header (with a base URL
// configured, other host names are routed to the site server, not the API).
import { ConfigError, loadConfig, resolveUrls } from "../config";
import { helpText, parseCommand, UsageError, usageErrorText, type CommandSpec } from "./client/args";

const spec: CommandSpec = {
  name: "healthcheck",
  usage: "healthcheck [pier serve options]",
  config: true,
  summary: "Exit 0 when the Pier on this machine answers GET /livez, 1 otherwise.",
};

const TIMEOUT_MS = 5000;

/** Where to reach a listener bound to `host`: loopback for the wildcard addresses. */
export function connectHost(host: string): string {
  if (["", "0.0.0.0", "::", "[::]", "*"].includes(host)) return "127.0.0.1";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

export async function healthcheck(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  let flags: Record<string, string>;
  try {
    const parsed = parseCommand(spec, argv);
    if (parsed.help) {
      process.stdout.write(helpText(spec));
      return 0;
    }
    flags = parsed.config;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(usageErrorText(spec, e.message));
    return 2;
  }
  let url: string;
  let host: string;
  try {
    const config = loadConfig(env, flags);
    if (config.httpPort === 0) throw new ConfigError("cannot check a server whose HTTP port is 0 (any free port); pass --http-port");
    url = `http://${connectHost(config.host)}:${config.httpPort}/livez`;
    host = resolveUrls(config, config.httpPort).apiHost;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(`pier healthcheck: configuration error: ${e.message}`);
    return 1;
  }
  try {
    const res = await fetch(url, { headers: { host, accept: "application/json" }, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: "manual" });
    const body = (await res.json().catch(() => null)) as { data?: { status?: string; server_version?: string } } | null;
    if (res.status === 200 && body?.data?.status === "ok" && body.data.server_version) {
      console.log(`ok: Pier ${body.data.server_version} at ${url}`);
      return 0;
    }
    console.error(`pier healthcheck: ${url} answered HTTP ${res.status}`);
    return 1;
  } catch (e) {
    console.error(`pier healthcheck: ${url} did not answer: ${(e as Error).message}`);
    return 1;
  }
}
