// Every option Pier reads, in README order: its Config key, its flag and PIER_ variable name,
// default, help line and parser. The README's config table is generated from this list
// (scripts/gen-docs.ts); new options go at the END.
import type { Config } from "./config";
import {
  absoluteUrl,
  acmeDirectory,
  bool,
  ConfigError,
  countOrAuto,
  hostname,
  hstsMaxAge,
  oneOf,
  optionalHostname,
  optionalStr,
  port,
  positiveInt,
  secret,
  str,
  url,
} from "./config-values";

export interface Option {
  key: keyof Config;
  name: string; // kebab-case; env is PIER_ + upper snake
  default: string;
  help: string;
  parse: (raw: string, name: string) => unknown;
}

/** "host", "host:port", "[v6]:port" or a bare IPv6 address; "" = the system's resolvers. */
function dnsServer(raw: string, name: string): string | null {
  if (raw === "") return null;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+))(?::(\d{1,5}))?$/.exec(raw) ?? /^()([0-9a-fA-F:]+:[0-9a-fA-F:.]*)()$/.exec(raw);
  const port = m?.[3] ? Number(m[3]) : 53;
  if (!m || port < 1 || port > 65535) throw new ConfigError(`${name} must be host:port (e.g. 127.0.0.1:53), got "${raw}"`);
  const host = m[1] || m[2]!;
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** "90s", "30m", "24h", "7d" in milliseconds; at least a minute. */
function durationMs(raw: string, name: string): number {
  const m = /^(\d+)\s*(s|m|h|d)$/.exec(raw);
  const ms = m ? Number(m[1]) * { s: 1000, m: 60_000, h: 3600_000, d: 86400_000 }[m[2] as "s" | "m" | "h" | "d"] : NaN;
  if (!(ms >= 60_000)) throw new ConfigError(`${name} must be a duration of at least a minute such as 30m, 24h or 7d, got "${raw}"`);
  return ms;
}

export const configOptions: Option[] = [
  { key: "dataDir", name: "data-dir", default: "./data", help: "Where the database, blobs and the generated secret key live.", parse: str },
  {
    key: "baseUrl",
    name: "base-url",
    default: "",
    help: "Public origin of the API and dashboard, e.g. https://pier.example.com. Default: http://localhost:<http-port>.",
    parse: url,
  },
  { key: "sitesDomain", name: "sites-domain", default: "localhost", help: "Sites are served at <slug>.<sites-domain>.", parse: hostname },
  { key: "mailDomain", name: "mail-domain", default: "", help: "Domain of bucket receiving addresses. Default: the base URL's host.", parse: optionalHostname },
  { key: "host", name: "host", default: "0.0.0.0", help: "Address the HTTP, HTTPS and SMTP listeners bind to.", parse: str },
  { key: "httpPort", name: "http-port", default: "8080", help: "HTTP port (0 = any free port; the banner prints the bound one).", parse: port(false) },
  {
    key: "httpsPort",
    name: "https-port",
    default: "off",
    help: "HTTPS port (443 in production), or off. Serves the same API and sites with automatic certificates (see --acme) and/or --tls-cert/--tls-key (a self-signed fallback when neither applies).",
    parse: port(true),
  },
  {
    key: "tlsCert",
    name: "tls-cert",
    default: "",
    help: "PEM certificate (chain) for the HTTPS listener, covering the base host and *.<sites-domain>.",
    parse: optionalStr,
  },
  { key: "tlsKey", name: "tls-key", default: "", help: "PEM private key for --tls-cert.", parse: optionalStr },
  { key: "smtpPort", name: "smtp-port", default: "2525", help: "SMTP receiver port (25 in production), or off.", parse: port(true) },
  {
    key: "smtpMaxMessageBytes",
    name: "smtp-max-message-size",
    default: "31457280",
    help: "Largest message the SMTP receiver accepts, in bytes (announced as SIZE; 30 MiB).",
    parse: positiveInt,
  },
  { key: "smtpMaxRecipients", name: "smtp-max-recipients", default: "100", help: "Recipients per message; more are refused with 452.", parse: positiveInt },
  {
    key: "smtpTlsCert",
    name: "smtp-tls-cert",
    default: "",
    help: "PEM certificate for SMTP STARTTLS, or off. Unset: a self-signed certificate generated into the data dir.",
    parse: optionalStr,
  },
  { key: "smtpTlsKey", name: "smtp-tls-key", default: "", help: "PEM private key for --smtp-tls-cert.", parse: optionalStr },
  {
    key: "smtpRateLimitPerIp",
    name: "smtp-rate-limit-per-ip",
    default: "60",
    help: "Messages per minute one sending IP may start (over: 450, try later).",
    parse: positiveInt,
  },
  {
    key: "smtpRateLimitPerRecipient",
    name: "smtp-rate-limit-per-recipient",
    default: "120",
    help: "Messages per minute one receiving address may accept (over: 450, try later).",
    parse: positiveInt,
  },
  {
    key: "smtpRejectDmarcFail",
    name: "smtp-reject-dmarc-fail",
    default: "false",
    help: "Refuse (550) mail failing DMARC whose domain publishes p=reject or p=quarantine. Off: verdicts are only recorded.",
    parse: bool,
  },
  {
    key: "secretKey",
    name: "secret-key",
    default: "",
    help: "Master key for encryption and signing (>= 32 chars). Generated into <data-dir>/secret.key when unset.",
    parse: secret,
  },
  {
    key: "signupMode",
    name: "signup-mode",
    default: "invite",
    help: "open, invite or closed. The very first user can always sign up and becomes instance admin.",
    parse: oneOf("open", "invite", "closed"),
  },
  { key: "defaultPlan", name: "default-plan", default: "free", help: "Plan given to new accounts.", parse: str },
  {
    key: "plansFile",
    name: "plans-file",
    default: "",
    help: "JSON file defining extra plans or overriding built-in ones (see docs/accounts.md, Plans file).",
    parse: optionalStr,
  },
  { key: "rateLimitPerMinute", name: "rate-limit-per-minute", default: "600", help: "API requests per minute per account.", parse: positiveInt },
  {
    key: "rateLimitAnonPerMinute",
    name: "rate-limit-anon-per-minute",
    default: "120",
    help: "Unauthenticated API requests per minute per client IP.",
    parse: positiveInt,
  },
  {
    key: "bucketDeleteSyncLimit",
    name: "bucket-delete-sync-limit",
    default: "1000",
    help: "Buckets with more items than this are deleted in the background (202).",
    parse: positiveInt,
  },
  {
    key: "publishRateLimitPerMinute",
    name: "publish-rate-limit-per-minute",
    default: "30",
    help: "Publishes (publish, preview, retry, publish-session finalize) per minute per account (over: 429 PUBLISH_RATE_LIMIT_EXCEEDED).",
    parse: positiveInt,
  },
  {
    key: "uploadRateLimitPerMinute",
    name: "upload-rate-limit-per-minute",
    default: "120",
    help: "Upload-control calls (publish-session create and upload refresh) per minute per account (over: 429 UPLOAD_RATE_LIMIT_EXCEEDED).",
    parse: positiveInt,
  },
  {
    key: "siteRenewal",
    name: "site-renewal",
    default: "true",
    help: "Unpublish main sites of plans with site_renewal_days (Free: 30) when the account had no signed-in dashboard visit for that long.",
    parse: bool,
  },
  {
    key: "trustProxy",
    name: "trust-proxy",
    default: "false",
    help: "Trust X-Forwarded-For / X-Forwarded-Proto from a reverse proxy. The client IP is the X-Forwarded-For entry --trusted-proxy-hops places from the right (the one your proxy appended); entries to its left are the client's own claims and are ignored.",
    parse: bool,
  },
  {
    key: "smtpRelayUrl",
    name: "smtp-relay-url",
    default: "",
    help: "Outbound mail relay, e.g. smtps://user:pass@smtp.example.com:465. Unset: messages (site email codes, notices) are kept in the outbox for the admin.",
    parse: (raw, name) => {
      if (raw === "") return null;
      if (!/^smtps?:\/\/[^\s]+$/.test(raw) || !URL.canParse(raw)) throw new ConfigError(`${name} must be an smtp:// or smtps:// URL`);
      return raw;
    },
  },
  {
    key: "mcpResourceUrl",
    name: "mcp-resource-url",
    default: "",
    help: "Public URL of the hosted MCP endpoint (OAuth resource) behind a reverse proxy or tunnel. Default: <base-url>/mcp.",
    parse: absoluteUrl,
  },
  { key: "logLevel", name: "log-level", default: "info", help: "debug, info, warn or error.", parse: oneOf("debug", "info", "warn", "error") },
  {
    key: "ownerPlan",
    name: "owner-plan",
    default: "owner",
    help: "Plan given to the first user's account (the instance admin's): by default every capability and no site renewal. --default-plan decides for everyone else.",
    parse: str,
  },
  {
    key: "bodyTimeoutSeconds",
    name: "body-timeout",
    default: "30",
    help: "Seconds an API or site request body may take to arrive in full (slower: 408 BODY_TIMEOUT). Storage uploads are cut off instead when no byte arrives for this long.",
    parse: positiveInt,
  },
  {
    key: "trustedProxyHops",
    name: "trusted-proxy-hops",
    default: "1",
    help: "With --trust-proxy: how many reverse proxies in a row append to X-Forwarded-For in front of Pier (1 = one proxy; the rightmost entry is the client).",
    parse: positiveInt,
  },
  {
    key: "dnsResolver",
    name: "dns-resolver",
    default: "",
    help: "DNS server (host:port, port 53 when omitted) that custom-domain checks ask. Default: the system's resolvers.",
    parse: dnsServer,
  },
  {
    key: "acme",
    name: "acme",
    default: "auto",
    help: "Automatic certificates (ACME, HTTP-01) for the API host, the MX host and published site hosts: on, off, or auto (on when --https-port is set and the base URL's host is a public name, not localhost, .local or an IP).",
    parse: oneOf("auto", "on", "off"),
  },
  { key: "acmeEmail", name: "acme-email", default: "", help: "Contact address for the ACME account (expiry notices from the CA).", parse: optionalStr },
  {
    key: "acmeDirectory",
    name: "acme-directory",
    default: "letsencrypt",
    help: "ACME directory: letsencrypt, letsencrypt-staging, zerossl, or the https:// URL of any RFC 8555 CA.",
    parse: acmeDirectory,
  },
  { key: "acmeEabKid", name: "acme-eab-kid", default: "", help: "External account binding key id (ZeroSSL and other CAs that need one).", parse: optionalStr },
  { key: "acmeEabHmac", name: "acme-eab-hmac", default: "", help: "External account binding HMAC key (base64url) for --acme-eab-kid.", parse: optionalStr },
  {
    key: "acmeCaRoot",
    name: "acme-ca-root",
    default: "",
    help: "PEM file of an extra root trusted for the ACME directory's HTTPS (a test CA such as Pebble's).",
    parse: optionalStr,
  },
  {
    key: "hsts",
    name: "hsts",
    default: "off",
    help: "Strict-Transport-Security max-age in seconds sent on HTTPS responses (e.g. 31536000), or off.",
    parse: hstsMaxAge,
  },
  {
    key: "mxHost",
    name: "mx-host",
    default: "",
    help: "Host name the mail domain's MX record points at; its certificate is used for SMTP STARTTLS when ACME is on. Default: the base URL's host.",
    parse: optionalHostname,
  },
  {
    key: "analyticsRetentionDays",
    name: "analytics-retention-days",
    default: "400",
    help: "Days of daily website analytics kept (all-time hit counts are kept regardless; hourly figures are kept 3 days).",
    parse: positiveInt,
  },
  {
    key: "geoipDb",
    name: "geoip-db",
    default: "",
    help: "MaxMind-format (.mmdb) IP-to-country database for analytics. Default: the embedded geo-whois-asn-country database (CC BY 4.0, NRO).",
    parse: optionalStr,
  },
  {
    key: "turnstileSiteKey",
    name: "turnstile-site-key",
    default: "",
    help: "Cloudflare Turnstile site key; with --turnstile-secret-key, forms whose configuration says turnstile: auto ask visitors to pass Turnstile.",
    parse: optionalStr,
  },
  {
    key: "turnstileSecretKey",
    name: "turnstile-secret-key",
    default: "",
    help: "Cloudflare Turnstile secret key (see --turnstile-site-key).",
    parse: optionalStr,
  },
  {
    key: "turnstileVerifyUrl",
    name: "turnstile-verify-url",
    default: "https://challenges.cloudflare.com/turnstile/v0/siteverify",
    help: "Where Turnstile tokens are checked (Cloudflare's siteverify endpoint).",
    parse: (raw: string, name: string) => absoluteUrl(raw, name) ?? "https://challenges.cloudflare.com/turnstile/v0/siteverify",
  },
  {
    key: "gitSync",
    name: "git-sync",
    default: "on",
    help: "Git sync of buckets with repositories on any git host (on or off; off makes every bucket's github_sync_setup say feature_disabled).",
    parse: oneOf("on", "off"),
  },
  {
    key: "gitAllowHttp",
    name: "git-allow-http",
    default: "off",
    help: "Allow plain http:// git remotes (a git server on the same host or private network). Default: https:// only.",
    parse: oneOf("on", "off"),
  },
  {
    key: "gitCaRoot",
    name: "git-ca-root",
    default: "",
    help: "PEM file of an extra root CA trusted for git remotes (a private git server).",
    parse: optionalStr,
  },
  {
    key: "gitPollInterval",
    name: "git-poll-interval",
    default: "60",
    help: "Seconds between checks of a connected branch without a webhook; doubles while nothing changes, never past 600.",
    parse: positiveInt,
  },
  {
    key: "gitMaxRepositoryMb",
    name: "git-max-repository-mb",
    default: "1024",
    help: "Largest repository (MiB transferred by one fetch) git sync takes in; a bigger one stops the sync with repository_too_large.",
    parse: positiveInt,
  },
  {
    key: "gitTimeout",
    name: "git-timeout",
    default: "30",
    help: "Seconds one request to a git server may take (answer and body) before the sync stops with remote_timeout and retries later.",
    parse: positiveInt,
  },
  {
    key: "backupDir",
    name: "backup-dir",
    default: "",
    help: "Folder for scheduled backups (one backup folder per run, blobs hard-linked between them); empty: no scheduled backups. See docs/operations.md.",
    parse: optionalStr,
  },
  {
    key: "backupEvery",
    name: "backup-every",
    default: "24h",
    help: "How often the scheduled backup runs (with --backup-dir): a number with s, m, h or d, at least 1m.",
    parse: durationMs,
  },
  {
    key: "backupKeep",
    name: "backup-keep",
    default: "7",
    help: "How many complete scheduled backups are kept (older ones are deleted after a new one completes).",
    parse: positiveInt,
  },
  {
    key: "metricsToken",
    name: "metrics-token",
    default: "",
    help: "Serve Prometheus metrics at <base-url>/metrics to requests with Authorization: Bearer <this token> (>= 16 chars). Unset: /metrics is not served on the API host.",
    parse: (raw, name) => {
      if (raw === "") return null;
      if (raw.length < 16) throw new ConfigError(`${name} must be at least 16 characters (it guards the metrics)`);
      return raw;
    },
  },
  {
    key: "metricsPort",
    name: "metrics-port",
    default: "off",
    help: "Port on 127.0.0.1 serving /metrics, /livez and /readyz without a token (for a local Prometheus or agent), or off.",
    parse: port(true),
  },
  { key: "logFormat", name: "log-format", default: "json", help: "Log lines as json (one object per line) or text (readable).", parse: oneOf("json", "text") },
  {
    key: "accessLog",
    name: "access-log",
    default: "false",
    help: "Write one log line per HTTP request: request id, host kind, route group, method, status, duration, bytes (never the path or query).",
    parse: bool,
  },
  {
    key: "logClientIp",
    name: "log-client-ip",
    default: "truncated",
    help: "Client addresses in access log lines: off, truncated (IPv4 /24, IPv6 /48) or full.",
    parse: oneOf("off", "truncated", "full"),
  },
  {
    key: "shutdownTimeoutSeconds",
    name: "shutdown-timeout",
    default: "30",
    help: "Seconds SIGTERM waits for in-flight HTTP requests, SMTP transactions and the running job before Pier exits anyway.",
    parse: positiveInt,
  },
  {
    key: "workers",
    name: "workers",
    default: "1",
    help: "Serving processes sharing the HTTP and HTTPS ports (`pier serve`): a number, or auto for one per CPU core. The first also runs the job worker, SMTP and ACME. Default 1 for now (see docs/deployment.md).",
    parse: countOrAuto,
  },
];
