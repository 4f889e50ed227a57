// `pier serve`: load and check the config, start everything, print where it listens, and shut
// down cleanly on SIGTERM/SIGINT (exit 0) so systemd and Docker see a clean stop.
import { checkConfig, configOptions, ConfigError, describeConfig, envName, loadConfig, parseFlags } from "../config";
import { serverVersion } from "../core/version";
import { ownerPlanNote } from "../features/accounts/plan-help";
import { countUsers } from "../features/accounts/service";
import { startPier, type Pier } from "../runtime";

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
    `  Outbound mail      ${outboundMail(config.smtpRelayUrl)}`,
    `  Data               ${config.dataDir}`,
    `  Secret key         ${config.secretKey ? "from PIER_SECRET_KEY / --secret-key" : `${config.dataDir}/secret.key`}`,
  ];
  if (countUsers(pier.deps) === 0) lines.push(`  First step         open ${urls.baseUrl}/ and sign up: the first user administers this instance`);
  for (const w of warnings) lines.push(`  warning: ${w}`);
  const note = ownerPlanNote(pier.deps);
  if (note) lines.push(`  note: ${note}`);
  return lines.join("\n");
}

/** Where mail Pier sends goes: the relay's host (never its credentials), or the outbox. */
function outboundMail(relayUrl: string | null): string {
  if (!relayUrl) return "no relay: site email codes and notices wait in the outbox (read them with: pier admin mail outbox)";
  const u = new URL(relayUrl);
  return `relay ${u.protocol}//${u.host}`;
}

export async function serve(argv: string[]): Promise<void> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(serveHelp());
    return;
  }
  let pier: Pier;
  let warnings: string[];
  try {
    const config = loadConfig(process.env, parseFlags(argv));
    warnings = checkConfig(config).warnings;
    pier = await startPier(config);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`pier: configuration error: ${e.message}`);
      process.exit(2);
    }
    const err = e as Error & { code?: string; path?: string };
    if (err.code === "EADDRINUSE") {
      console.error(`pier: ${err.message}. Another program uses the port; pick another with --http-port, --https-port or --smtp-port.`);
      process.exit(1);
    }
    // System errors (data dir not writable, a file where the data dir should be, ...) get one
    // clear line; anything else is a bug and keeps its stack.
    console.error(`pier: could not start: ${err.code ? `${err.message}${err.path && !err.message.includes(err.path) ? ` (${err.path})` : ""}` : err.stack ?? String(e)}`);
    process.exit(1);
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`Pier: ${signal} received, shutting down`);
    try {
      await pier.stop();
    } catch (e) {
      console.error(`pier: error during shutdown: ${(e as Error).message}`);
      process.exit(1);
    }
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  // The banner means "ready": signal handlers are in place before it appears, so a supervisor
  // that stops Pier right after seeing it still gets a clean shutdown.
  console.log(startupBanner(pier, warnings));
  pier.deps.log.info("config", describeConfig(pier.deps.config));
}
