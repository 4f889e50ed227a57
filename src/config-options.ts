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
    key: "workers",
    name: "workers",
    default: "auto",
    help: "Serving processes sharing the HTTP and HTTPS ports (`pier serve`): a number, or auto for one per CPU core. The first also runs the job worker, SMTP and ACME.",
    parse: countOrAuto,
  },
];
