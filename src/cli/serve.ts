import { configOptions, ConfigError, describeConfig, envName, loadConfig, parseFlags } from "../config";
import { serverVersion } from "../core/version";
import { startPier } from "../runtime";

export function serveHelp(): string {
  const rows = configOptions.map((o) => `  --${o.name.padEnd(28)} ${envName(o).padEnd(34)} ${o.help}${o.default ? ` [${o.default}]` : ""}`);
  return `Usage: pier serve [options]\n\nEvery option is also an environment variable:\n${rows.join("\n")}\n`;
}

export async function serve(argv: string[]): Promise<void> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(serveHelp());
    return;
  }
  let pier;
  try {
    const config = loadConfig(process.env, parseFlags(argv));
    pier = await startPier(config);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`pier: configuration error: ${e.message}`);
      process.exit(2);
    }
    if ((e as { code?: string }).code === "EADDRINUSE") {
      console.error(`pier: ${(e as Error).message}. Another program uses the port; pick another with --http-port or --smtp-port.`);
      process.exit(1);
    }
    throw e;
  }
  const { deps } = pier;
  const lines = [
    `Pier ${serverVersion} is running`,
    `  API and dashboard  ${deps.urls.baseUrl}  (HTTP port ${pier.httpPort})`,
    `  Sites              ${deps.urls.siteUrl(`<slug>.${deps.urls.sitesDomain}`)}`,
    `  API reference      ${deps.urls.docsUrl}`,
    `  Inbound email      ${pier.smtp ? `SMTP port ${pier.smtp.port} for @${deps.urls.mailDomain} (STARTTLS: ${pier.smtp.tlsSource})` : "off"}`,
    `  Data               ${deps.config.dataDir}`,
  ];
  console.log(lines.join("\n"));
  deps.log.info("config", describeConfig(deps.config));
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`Pier: ${signal} received, shutting down`);
    await pier.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}
