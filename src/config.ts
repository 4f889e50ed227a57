// Typed configuration, validated once at start. Every option is an environment variable
// PIER_<NAME> and a `pier serve --<name>` flag (flags win). README's config table mirrors
// `configOptions` (src/config-options.ts).
import { createPrivateKey } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomSecret } from "./core/crypto";
import type { LogLevel } from "./core/log";
import { ConfigError } from "./config-values";
import { configOptions, type Option } from "./config-options";

export type SignupMode = "open" | "invite" | "closed";

export interface Config {
  dataDir: string;
  /** Public URL of the API/dashboard host; when unset it is derived from the bound HTTP port. */
  baseUrl: string | null;
  sitesDomain: string;
  mailDomain: string | null;
  httpPort: number;
  /** null = HTTPS listener off. */
  httpsPort: number | null;
  /** PEM files for the HTTPS listener; unset = a self-signed certificate in the data dir. */
  tlsCert: string | null;
  tlsKey: string | null;
  /** null = SMTP receiver off. */
  smtpPort: number | null;
  smtpMaxMessageBytes: number;
  smtpMaxRecipients: number;
  /** PEM paths; cert "off" = no STARTTLS; both null = self-signed fallback in the data dir. */
  smtpTlsCert: string | null;
  smtpTlsKey: string | null;
  smtpRateLimitPerIp: number;
  smtpRateLimitPerRecipient: number;
  smtpRejectDmarcFail: boolean;
  host: string;
  secretKey: string | null;
  signupMode: SignupMode;
  defaultPlan: string;
  plansFile: string | null;
  rateLimitPerMinute: number;
  rateLimitAnonPerMinute: number;
  bucketDeleteSyncLimit: number;
  publishRateLimitPerMinute: number;
  uploadRateLimitPerMinute: number;
  siteRenewal: boolean;
  trustProxy: boolean;
  /** With trustProxy: how many proxies append to X-Forwarded-For; the client is that many entries from the right. */
  trustedProxyHops: number;
  logLevel: LogLevel;
  /** smtp(s)://user:pass@host:port for outbound mail; null = messages go to the outbox table. */
  smtpRelayUrl: string | null;
  /** Whether an smtp:// relay must give STARTTLS: auto (unless on this machine or a private IP without credentials), required, opportunistic. */
  smtpRelayTls: "auto" | "required" | "opportunistic";
  /** Public URL of the hosted MCP endpoint when a proxy/tunnel publishes it elsewhere; default <base-url>/mcp. */
  mcpResourceUrl: string | null;
  /** Plan of the first user's account (the instance admin's); everyone else gets defaultPlan. */
  ownerPlan: string;
  /** Seconds a request body (other than a storage upload) may take to arrive in full. */
  bodyTimeoutSeconds: number;
  /** Seconds a connection may stay idle between requests (Bun's idleTimeout, at most 255). */
  idleTimeoutSeconds: number;
  /** DNS server ("host:port") for custom-domain checks; null = the system's resolvers. */
  dnsResolver: string | null;

  /** Automatic certificates: auto = on when HTTPS is on and the base URL's host is public (see acmeEnabled). */
  acme: "auto" | "on" | "off";
  acmeEmail: string | null;
  /** The ACME directory URL (shortcuts resolved). */
  acmeDirectory: string;
  acmeEabKid: string | null;
  acmeEabHmac: string | null;
  /** Extra PEM root trusted for the ACME directory's own TLS (test CAs). */
  acmeCaRoot: string | null;
  /** HSTS max-age in seconds on HTTPS responses; null = no header. */
  hsts: number | null;
  /** Host name the mail domain's MX record points at (its STARTTLS certificate); null = the base URL's host. */
  mxHost: string | null;

  /** Days of daily analytics roll-ups kept (hourly ones are kept 3 days). */
  analyticsRetentionDays: number;
  /** IP-to-country MMDB file; null = the embedded database. */
  geoipDb: string | null;
  /** Cloudflare Turnstile for forms that ask for it (turnstile: "auto"); both keys or neither. */
  turnstileSiteKey: string | null;
  turnstileSecretKey: string | null;
  turnstileVerifyUrl: string;

  /** Git sync on or off for the whole instance. */
  gitSync: "on" | "off";
  /** Plain http:// git remotes allowed. */
  gitAllowHttp: "on" | "off";
  /** Extra PEM root trusted for git remotes' HTTPS. */
  gitCaRoot: string | null;
  /** Seconds between polls of a branch (the start of the backoff). */
  gitPollInterval: number;
  /** Largest single fetch (MiB) a sync accepts. */
  gitMaxRepositoryMb: number;
  /** Seconds one request to a git server may take. */
  gitTimeout: number;
  /** Most paths (files and folders) one sync walks in the repository's changes. */
  gitMaxFiles: number;
  /** Git remotes on loopback, private and link-local addresses allowed. */
  gitAllowPrivateNetwork: "on" | "off";

  /** Scheduled backups go here (one folder per run); null = none. */
  backupDir: string | null;
  /** Milliseconds between scheduled backups. */
  backupEvery: number;
  /** Complete scheduled backups kept. */
  backupKeep: number;

  /** Bearer token that opens /metrics on the API host; null = not served there. */
  metricsToken: string | null;
  /** Loopback port serving /metrics, /livez and /readyz; null = off. */
  metricsPort: number | null;
  /** Log lines as JSON objects or as readable text. */
  logFormat: "json" | "text";
  /** One log line per HTTP request. */
  accessLog: boolean;
  /** Client addresses in access log lines: off, truncated (/24, /48) or full. */
  logClientIp: "off" | "truncated" | "full";
  /** Seconds SIGTERM waits for in-flight requests, SMTP transactions and the running job. */
  shutdownTimeoutSeconds: number;

  /** Serving processes sharing the HTTP and HTTPS ports (`pier serve`); 0 = one per CPU core. */
  workers: number;

  /** The GitHub App (all null: GitHub App sync off; generic git hosts still work). */
  githubAppId: string | null;
  githubAppPrivateKeyFile: string | null;
  githubAppWebhookSecret: string | null;
  githubAppWebhookSecretFile: string | null;
  githubAppSlug: string | null;
  githubAppClientId: string | null;
  githubAppClientSecret: string | null;
  githubAppClientSecretFile: string | null;
  /** GitHub's REST API base (GitHub Enterprise Server: https://HOST/api/v3). */
  githubApiUrl: string;
  /** GitHub's web origin; null = derived from githubApiUrl. */
  githubUrl: string | null;
}

export { ConfigError };
export { configOptions };

export const envName = (o: Option) => `PIER_${o.name.toUpperCase().replaceAll("-", "_")}`;

/** Parse `--name value` / `--name=value` flags; unknown flags are an error, not a silent no-op. */
export function parseFlags(argv: string[]): Record<string, string> {
  const known = new Set(configOptions.map((o) => o.name));
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--")) throw new ConfigError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (!known.has(name)) throw new ConfigError(`unknown option --${name} (see pier serve --help)`);
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined) throw new ConfigError(`--${name} needs a value`);
    out[name] = value;
  }
  return out;
}

/**
 * Flags win over PIER_* variables, which win over defaults. An empty variable counts as unset
 * (`PIER_X=` in a compose file or unit means "not configured"); an empty flag is a value.
 * Throws ConfigError naming the flag or variable at fault.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, flags: Record<string, string> = {}): Config {
  const cfg: Record<string, unknown> = {};
  for (const o of configOptions) {
    const fromEnv = env[envName(o)]?.trim() || undefined;
    const raw = flags[o.name] ?? fromEnv ?? o.default;
    const label = flags[o.name] !== undefined ? `--${o.name}` : fromEnv !== undefined ? envName(o) : `the default of ${envName(o)}`;
    cfg[o.key] = o.parse(raw.trim(), label);
  }
  const config = cfg as unknown as Config;
  config.dataDir = resolve(config.dataDir);
  const { errors } = checkConfig(config);
  if (errors.length) throw new ConfigError(errors.join("; "));
  return config;
}

const optionLabel = (name: string) => `${envName(configOptions.find((o) => o.name === name)!)} (--${name})`;
const isIpv4 = (host: string) => /^\d{1,3}(\.\d{1,3}){3}$/.test(host);
const isIpLiteral = (host: string) => isIpv4(host) || host.startsWith("[");

/**
 * Checks across options, once they are parsed. Errors stop the start; warnings go to the
 * banner. The host layout rules (docs/configuration.md, "Hosts"):
 * - Sites live at <slug>.<sites-domain> and preview-<slug>.<sites-domain>. The sites domain may
 *   equal the API host (the default: API on localhost, sites on *.localhost) because sites are
 *   always one label below it.
 * - The API host must not itself look like a site host, i.e. <label>.<sites-domain>
 *   (base https://pier.example.com with sites domain example.com): the slug "pier" would be
 *   shadowed by the API, and a site's cookies and scripts would share a parent domain with the
 *   dashboard's. Use a dedicated sites domain (sites.example.com, or the API host itself).
 * - Neither the sites domain nor the mail domain can be an IP address.
 */
export function checkConfig(config: Config): { errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  const ports: Array<[string, number | null]> = [
    ["http-port", config.httpPort],
    ["https-port", config.httpsPort],
    ["smtp-port", config.smtpPort],
  ];
  for (let i = 0; i < ports.length; i++) {
    for (let j = i + 1; j < ports.length; j++) {
      const [a, pa] = ports[i]!;
      const [b, pb] = ports[j]!;
      if (pa !== null && pa !== 0 && pa === pb) errors.push(`${optionLabel(a)} and ${optionLabel(b)} are both ${pa}; each listener needs its own port`);
    }
  }
  if (!config.host.trim()) errors.push(`${optionLabel("host")} must be an address to listen on, such as 0.0.0.0 or 127.0.0.1`);
  if (isIpv4(config.sitesDomain))
    errors.push(`${optionLabel("sites-domain")} must be a DNS name (sites live at <slug>.<sites-domain>), not the IP address ${config.sitesDomain}`);
  if (config.mailDomain && isIpv4(config.mailDomain))
    errors.push(`${optionLabel("mail-domain")} must be a DNS name (bucket addresses are <name>@<mail-domain>), not the IP address ${config.mailDomain}`);
  const apiHost = config.baseUrl ? new URL(config.baseUrl).hostname : "localhost";
  const suffix = `.${config.sitesDomain}`;
  if (apiHost.endsWith(suffix) && !apiHost.slice(0, -suffix.length).includes(".")) {
    errors.push(
      `${optionLabel("base-url")} host ${apiHost} is itself a site address under ${optionLabel("sites-domain")} ${config.sitesDomain} ` +
        `(it would shadow the site "${apiHost.slice(0, -suffix.length)}" and share cookies with sites); ` +
        `use a dedicated sites domain such as sites.${config.sitesDomain} or ${apiHost}`,
    );
  }
  if (!config.baseUrl && config.sitesDomain !== "localhost")
    warnings.push(
      `${optionLabel("sites-domain")} is ${config.sitesDomain} but ${optionLabel("base-url")} is unset, so links point at http://localhost; set the public base URL`,
    );
  if (config.smtpPort !== null && !config.mailDomain && isIpLiteral(apiHost))
    warnings.push(`bucket addresses would be @${apiHost}, an IP address that mail cannot be sent to; set ${optionLabel("mail-domain")}`);
  if (config.baseUrl?.startsWith("https:") && config.httpsPort === null && !config.trustProxy)
    warnings.push(
      `${optionLabel("base-url")} is https but the HTTPS listener is off; run behind a TLS-terminating reverse proxy with ${optionLabel("trust-proxy")} set, or set ${optionLabel("https-port")}`,
    );
  errors.push(...checkAcmeConfig(config));
  errors.push(...checkGithubAppConfig(config));
  return { errors, warnings };
}

/**
 * Whether automatic certificates are on. auto: only with an HTTPS listener and a base URL whose
 * host a public CA could validate (not localhost, *.localhost, *.local, *.internal or an IP).
 */
export function acmeEnabled(config: Config): boolean {
  if (config.acme !== "auto") return config.acme === "on";
  if (config.httpsPort === null || !config.baseUrl) return false;
  const host = new URL(config.baseUrl).hostname;
  const privateName = host === "localhost" || /\.(localhost|local|internal|test|invalid)$/.test(host) || !host.includes(".");
  return !privateName && !isIpLiteral(host);
}

function checkAcmeConfig(config: Config): string[] {
  const errors: string[] = [];
  if (config.acme === "on" && config.httpsPort === null)
    errors.push(`${optionLabel("acme")} is on but ${optionLabel("https-port")} is off; certificates need an HTTPS listener to serve them`);
  if ((config.acmeEabKid === null) !== (config.acmeEabHmac === null))
    errors.push(`set both ${optionLabel("acme-eab-kid")} and ${optionLabel("acme-eab-hmac")} (or neither)`);
  if (config.acmeCaRoot !== null && !existsSync(config.acmeCaRoot)) errors.push(`${optionLabel("acme-ca-root")} ${config.acmeCaRoot} does not exist`);
  if ((config.turnstileSiteKey === null) !== (config.turnstileSecretKey === null))
    errors.push(`set both ${optionLabel("turnstile-site-key")} and ${optionLabel("turnstile-secret-key")} (or neither)`);
  if (config.acmeEmail !== null && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(config.acmeEmail))
    errors.push(`${optionLabel("acme-email")} must be an email address, got "${config.acmeEmail}"`);
  return errors;
}

/** The secret key from config, or the one generated into the data dir on first run. */
export function ensureSecretKey(config: Config): string {
  if (config.secretKey) return config.secretKey;
  const file = join(config.dataDir, "secret.key");
  if (existsSync(file)) {
    const key = readFileSync(file, "utf8").trim();
    if (key.length < 32) throw new ConfigError(`${file} is corrupt (shorter than 32 characters)`);
    return key;
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const key = randomSecret(48);
  writeFileSync(file, key + "\n", { mode: 0o600, flag: "wx" });
  chmodSync(file, 0o600);
  return key;
}

/** Derived public addresses once ports are bound. */
export interface Urls {
  baseUrl: string;
  apiHost: string; // host[:port] as seen in Host headers
  sitesDomain: string;
  mailDomain: string;
  /** Scheme + port suffix used for site URLs (same listener as the API). */
  siteUrl(host: string): string;
  docsUrl: string;
  mcpUrl: string;
}

export function resolveUrls(config: Config, boundHttpPort: number): Urls {
  const baseUrl = config.baseUrl ?? `http://localhost:${boundHttpPort}`;
  const u = new URL(baseUrl);
  const portSuffix = u.port ? `:${u.port}` : "";
  return {
    baseUrl,
    apiHost: u.host,
    sitesDomain: config.sitesDomain,
    mailDomain: config.mailDomain ?? u.hostname,
    siteUrl: (host) => `${u.protocol}//${host}${portSuffix}/`,
    docsUrl: `${baseUrl}/docs`,
    mcpUrl: config.mcpResourceUrl ?? `${baseUrl}/mcp`,
  };
}

/** For the start-up banner: every option with secrets redacted. */
export function describeConfig(config: Config): Record<string, unknown> {
  return {
    ...config,
    secretKey: config.secretKey ? "[redacted]" : `(generated in ${join(config.dataDir, "secret.key")})`,
    metricsToken: config.metricsToken ? "[redacted]" : null,
  };
}

/** The GitHub App's options come as a set: all of them, or none (docs/git-sync.md, GitHub App). */
function checkGithubAppConfig(config: Config): string[] {
  const set = {
    "github-app-id": config.githubAppId,
    "github-app-private-key-file": config.githubAppPrivateKeyFile,
    "github-app-webhook-secret": config.githubAppWebhookSecret ?? config.githubAppWebhookSecretFile,
    "github-app-slug": config.githubAppSlug,
    "github-app-client-id": config.githubAppClientId,
    "github-app-client-secret": config.githubAppClientSecret ?? config.githubAppClientSecretFile,
  };
  const missing = Object.entries(set).filter(([, v]) => v === null);
  if (missing.length === Object.keys(set).length) return [];
  const errors: string[] = [];
  if (missing.length)
    errors.push(`the GitHub App needs ${missing.map(([name]) => optionLabel(name)).join(", ")} as well (or none of the --github-app-* options)`);
  for (const [name, file] of [
    ["github-app-private-key-file", config.githubAppPrivateKeyFile],
    ["github-app-webhook-secret-file", config.githubAppWebhookSecretFile],
    ["github-app-client-secret-file", config.githubAppClientSecretFile],
  ] as const)
    if (file !== null && !existsSync(file)) errors.push(`${optionLabel(name)} ${file} does not exist`);
  if (config.githubAppPrivateKeyFile !== null && existsSync(config.githubAppPrivateKeyFile)) {
    try {
      createPrivateKey(readFileSync(config.githubAppPrivateKeyFile, "utf8"));
    } catch {
      errors.push(
        `${optionLabel("github-app-private-key-file")} ${config.githubAppPrivateKeyFile} is not a PEM private key (GitHub's "Generate a private key" file)`,
      );
    }
  }
  if (config.githubAppWebhookSecret !== null && config.githubAppWebhookSecretFile !== null)
    errors.push(`set ${optionLabel("github-app-webhook-secret")} or ${optionLabel("github-app-webhook-secret-file")}, not both`);
  if (config.githubAppClientSecret !== null && config.githubAppClientSecretFile !== null)
    errors.push(`set ${optionLabel("github-app-client-secret")} or ${optionLabel("github-app-client-secret-file")}, not both`);
  return errors;
}
