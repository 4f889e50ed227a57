// `pier serve`: load and check the config, start everything, print where it listens, and shut
// down cleanly on SIGTERM/SIGINT (exit 0) so systemd and Docker see a clean stop.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkConfig, configOptions, ConfigError, describeConfig, envName, loadConfig, type Config } from "../config";
import { serverVersion } from "../core/version";
import { ownerPlanNote } from "../features/accounts";
import { countUsers } from "../features/accounts";
import { relayTlsLabel } from "../features/mail";
import type { Pier } from "../runtime";
import { workerCount } from "../serving-workers";
import { parseCommand, UsageError, usageErrorText, type CommandSpec } from "./client/args";
import { RUNNING_FILE, runningServer, type RunningServer } from "./running-server";
import { acquireServeLock, DataDirInUseError } from "./serve-lock";

export const serveSpec: CommandSpec = {
  name: "serve",
  usage: "serve [options]",
  config: true,
  summary: "Run Pier: HTTP, HTTPS, SMTP and the background worker; site serving on every core (--workers).",
};

/** A busy port in one sentence that says which option moves it, whatever the listener's wording. */
export function busyPortMessage(err: Error & { port?: number }, config: Pick<Config, "httpPort" | "httpsPort" | "smtpPort">): string {
  const port = err.port ?? Number(/(?:port |:)(\d{1,5})\b(?!.*:\d)/.exec(err.message)?.[1]);
  const which =
    port === config.httpPort
      ? ["HTTP", "--http-port"]
      : port === config.smtpPort
        ? ["SMTP", "--smtp-port"]
        : port === config.httpsPort
          ? ["HTTPS", "--https-port"]
          : null;
  if (!port || !which)
    return "pier: a port Pier needs is already in use by another program. Stop that program, or choose other ports with --http-port, --https-port or --smtp-port.";
  return `pier: port ${port} (${which[0]}) is already in use by another program. Stop that program (or the other Pier), or choose another port with ${which[1]}.`;
}

export function serveHelp(): string {
  const rows = configOptions.map((o) => `  --${o.name.padEnd(28)} ${envName(o).padEnd(34)} ${o.help}${o.default ? ` [${o.default}]` : ""}`);
  return `Usage: pier serve [options]\n\nEvery option is also an environment variable (the flag wins):\n${rows.join("\n")}\n`;
}

/**
 * The start-up banner: the addresses and the ports actually bound (port 0 resolved), and any
 * configuration warnings. It never shows secrets: the secret key is only named by where it lives.
 */
export function startupBanner(pier: Pick<Pier, "deps" | "ports"> & { smtp?: Pier["smtp"] }, warnings: string[] = []): string {
  const { urls, config } = pier.deps;
  const { http, https, smtp } = pier.ports;
  const lines = [
    `Pier ${serverVersion} is running`,
    `  API and dashboard  ${urls.baseUrl}  (HTTP port ${http})`,
    `  Sites              ${urls.siteUrl(`<slug>.${urls.sitesDomain}`)}`,
    `  API reference      ${urls.docsUrl}`,
    `  HTTP               ${config.host}:${http}`,
    `  HTTPS              ${https !== null ? `${config.host}:${https}` : config.httpsPort === null ? "off" : "not started"}`,
    `  SMTP               ${smtp !== null ? `${config.host}:${smtp}  (mail for *@${urls.mailDomain}; STARTTLS: ${pier.smtp?.tlsSource ?? "off"})` : config.smtpPort === null ? "off" : "not started"}`,
    `  Outbound mail      ${outboundMail(config.smtpRelayUrl, config.smtpRelayTls)}`,
    `  Metrics            ${metricsLine(urls.baseUrl, config.metricsToken !== null, pier.ports.metrics ?? null)}`,
    `  Data               ${config.dataDir}`,
    `  Secret key         ${config.secretKey ? "from PIER_SECRET_KEY / --secret-key" : `${config.dataDir}/secret.key`}`,
  ];
  if (countUsers(pier.deps) === 0) lines.push(`  First step         open ${urls.baseUrl}/ and sign up: the first user administers this instance`);
  for (const w of warnings) lines.push(`  warning: ${w}`);
  const note = ownerPlanNote(pier.deps);
  if (note) lines.push(`  note: ${note}`);
  return lines.join("\n");
}

/** Where /metrics is served: never the token itself. */
function metricsLine(baseUrl: string, token: boolean, port: number | null): string {
  const where = [token ? `${baseUrl}/metrics (Bearer --metrics-token)` : null, port !== null ? `http://127.0.0.1:${port}/metrics` : null].filter(Boolean);
  return where.length ? where.join(", ") : "off (--metrics-token or --metrics-port)";
}

/** Where mail Pier sends goes: the relay's host (never its credentials), or the outbox. */
function outboundMail(relayUrl: string | null, tls: Config["smtpRelayTls"]): string {
  if (!relayUrl) return "no relay: site email codes and notices wait in the outbox (read them with: pier admin mail outbox)";
  const u = new URL(relayUrl);
  return `relay ${u.protocol}//${u.host} (${relayTlsLabel(relayUrl, tls)})`;
}

export async function serve(argv: string[], debug = false): Promise<void> {
  let flags: Record<string, string>;
  try {
    const parsed = parseCommand(serveSpec, argv);
    if (parsed.help) {
      process.stdout.write(serveHelp());
      return;
    }
    flags = parsed.config;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(usageErrorText(serveSpec, e.message));
    process.exit(2);
  }
  let pier: Pier;
  let warnings: string[];
  let config: Config | undefined;
  // A stop asked for while Pier starts is kept until the start is done and then runs as usual:
  // the default action would kill this process at once and leave its serving workers to notice
  // their primary is gone. A second signal meanwhile stops at once.
  let stopAsked: string | null = null;
  const whileStarting = (signal: string) => () => {
    if (stopAsked !== null) process.exit(1);
    stopAsked = signal;
  };
  const startingHandlers = { SIGINT: whileStarting("SIGINT"), SIGTERM: whileStarting("SIGTERM") };
  process.on("SIGINT", startingHandlers.SIGINT);
  process.on("SIGTERM", startingHandlers.SIGTERM);
  try {
    config = loadConfig(process.env, flags);
    warnings = checkConfig(config).warnings;
    // One server per data dir, taken before anything in it is touched (D266): a second one would
    // take over the relay socket, clear the upload temp folder and re-run the jobs in progress.
    const lock = acquireServeLock(config.dataDir);
    process.on("exit", () => lock.release());
    // The server itself is loaded only now: --help and a usage error answer without it.
    const { startPier } = await import("../runtime");
    pier = await startPier(config, { servingWorkers: workerCount(config) });
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`pier: configuration error: ${e.message}`);
      process.exit(2);
    }
    if (e instanceof DataDirInUseError) {
      console.error(`pier: ${e.message} (DATA_DIR_IN_USE)`);
      process.exit(1);
    }
    const err = e as Error & { code?: string; path?: string };
    if (err.code === "EADDRINUSE") {
      console.error(busyPortMessage(err, config!));
      process.exit(1);
    }
    // System errors (data dir not writable, a file where the data dir should be, ...) get one
    // clear line; anything else is a bug, whose stack --debug shows.
    const detail = err.code
      ? `${err.message}${err.path && !err.message.includes(err.path) ? ` (${err.path})` : ""}`
      : `${err.message ?? String(e)} (INTERNAL_ERROR)`;
    console.error(
      `pier: could not start: ${detail}${debug && err.stack ? `\n${err.stack}` : err.code ? "" : "\nThis looks like a bug; run again with --debug to see where it happened, and report it."}`,
    );
    process.exit(1);
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`Pier: ${signal} received, shutting down`);
    if (runningServer(pier.deps.config.dataDir)?.pid === process.pid) rmSync(runningFile, { force: true });
    try {
      await pier.stop();
    } catch (e) {
      console.error(`pier: error during shutdown: ${(e as Error).message}`);
      process.exit(1);
    }
    process.exit(0);
  };
  const runningFile = join(pier.deps.config.dataDir, RUNNING_FILE);
  const running: RunningServer = {
    pid: process.pid,
    host: pier.deps.config.host,
    http_port: pier.ports.http,
    https_port: pier.ports.https,
    smtp_port: pier.ports.smtp,
    started_at: new Date().toISOString(),
  };
  try {
    writeFileSync(runningFile, JSON.stringify(running) + "\n");
  } catch (e) {
    pier.deps.log.warn("could not record the bound ports", { file: runningFile, error: (e as Error).message });
  }
  process.off("SIGINT", startingHandlers.SIGINT);
  process.off("SIGTERM", startingHandlers.SIGTERM);
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  if (stopAsked !== null) return void shutdown(stopAsked);
  // The banner means "ready": signal handlers are in place before it appears, so a supervisor
  // that stops Pier right after seeing it still gets a clean shutdown.
  console.log(startupBanner(pier, warnings));
  pier.deps.log.info("config", describeConfig(pier.deps.config));
}
