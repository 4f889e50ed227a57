// The value parsers of the configuration table (src/config.ts): each takes the raw string of a
// PIER_* variable or --flag and its name, and returns the typed value or throws ConfigError
// with a message that names the option and says what would be accepted.
export class ConfigError extends Error {}

export const port = (allowOff: boolean) => (raw: string, name: string) => {
  if (allowOff && ["off", "false", "none"].includes(raw.toLowerCase())) return null;
  const n = raw === "" ? NaN : Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isInteger(n) || n < 0 || n > 65535)
    throw new ConfigError(`${name} must be a port number 0-65535${allowOff ? " or 'off'" : ""} (0 picks a free port), got "${raw}"`);
  return n;
};
export const positiveInt = (raw: string, name: string) => {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1) throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  return n;
};
/** Bun's idle timeout: 1 to 255 seconds. */
export const idleSeconds = (raw: string, name: string) => {
  const n = positiveInt(raw, name);
  if (n > 255) throw new ConfigError(`${name} must be at most 255 seconds, got "${raw}"`);
  return n;
};
export const oneOf =
  <T extends string>(...values: T[]) =>
  (raw: string, name: string) => {
    if (!values.includes(raw as T)) throw new ConfigError(`${name} must be one of ${values.join(", ")}, got "${raw}"`);
    return raw as T;
  };
export const str = (raw: string) => raw;
export const optionalStr = (raw: string) => (raw === "" ? null : raw);
export const bool = (raw: string, name: string) => {
  if (["1", "true", "yes", "on"].includes(raw.toLowerCase())) return true;
  if (["0", "false", "no", "off", ""].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
};
export const hostname = (raw: string, name: string) => {
  const v = raw.toLowerCase().replace(/\.$/, "");
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(v))
    throw new ConfigError(`${name} must be a DNS name such as sites.example.com, got "${raw}"`);
  return v;
};
export const optionalHostname = (raw: string, name: string) => (raw === "" ? null : hostname(raw, name));
export const url = (raw: string, name: string) => {
  if (raw === "") return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL such as https://pier.example.com, got "${raw}"`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new ConfigError(`${name} must use http or https`);
  if (u.pathname !== "/" || u.search || u.hash) throw new ConfigError(`${name} must be an origin without a path, got "${raw}"`);
  return u.origin;
};
/** An http(s) URL that may carry a path (no query or fragment); trailing slash dropped. */
export const absoluteUrl = (raw: string, name: string) => {
  if (raw === "") return null;
  const u = URL.canParse(raw) ? new URL(raw) : null;
  if (!u || (u.protocol !== "http:" && u.protocol !== "https:") || u.search || u.hash)
    throw new ConfigError(`${name} must be an absolute http(s) URL such as https://pier.example.com/mcp, got "${raw}"`);
  return u.href.replace(/\/$/, "");
};
export const secret = (raw: string, name: string) => {
  if (raw === "") return null;
  if (raw.length < 32) throw new ConfigError(`${name} must be at least 32 characters (generate one with: openssl rand -base64 48)`);
  return raw;
};

const ACME_DIRECTORIES: Record<string, string> = {
  letsencrypt: "https://acme-v02.api.letsencrypt.org/directory",
  "letsencrypt-staging": "https://acme-staging-v02.api.letsencrypt.org/directory",
  zerossl: "https://acme.zerossl.com/v2/DV90",
};
/** A shortcut for a well-known CA, or the https URL of any RFC 8555 directory. */
export const acmeDirectory = (raw: string, name: string) => {
  const known = ACME_DIRECTORIES[raw.toLowerCase()];
  if (known) return known;
  const u = URL.canParse(raw) ? new URL(raw) : null;
  if (!u || u.protocol !== "https:")
    throw new ConfigError(`${name} must be letsencrypt, letsencrypt-staging, zerossl or an https:// ACME directory URL, got "${raw}"`);
  return u.href;
};
/** HSTS max-age in seconds, or off (null). */
export const hstsMaxAge = (raw: string, name: string) => {
  if (["off", "false", "none", ""].includes(raw.toLowerCase())) return null;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n > 2 ** 31)
    throw new ConfigError(`${name} must be a max-age in seconds (e.g. 31536000) or off, got "${raw}"`);
  return n;
};

/** A count, or "auto" (0: decided at start, e.g. one per CPU core). */
export const countOrAuto = (raw: string, name: string) => (raw === "auto" ? 0 : positiveInt(raw, name));

/** "host", "host:port", "[v6]:port" or a bare IPv6 address; "" = the system's resolvers. */
export function dnsServer(raw: string, name: string): string | null {
  if (raw === "") return null;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+))(?::(\d{1,5}))?$/.exec(raw) ?? /^()([0-9a-fA-F:]+:[0-9a-fA-F:.]*)()$/.exec(raw);
  const port = m?.[3] ? Number(m[3]) : 53;
  if (!m || port < 1 || port > 65535) throw new ConfigError(`${name} must be host:port (e.g. 127.0.0.1:53), got "${raw}"`);
  const host = m[1] || m[2]!;
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** "90s", "30m", "24h", "7d" in milliseconds; at least a minute. */
export function durationMs(raw: string, name: string): number {
  const m = /^(\d+)\s*(s|m|h|d)$/.exec(raw);
  const ms = m ? Number(m[1]) * { s: 1000, m: 60_000, h: 3600_000, d: 86400_000 }[m[2] as "s" | "m" | "h" | "d"] : NaN;
  if (!(ms >= 60_000)) throw new ConfigError(`${name} must be a duration of at least a minute such as 30m, 24h or 7d, got "${raw}"`);
  return ms;
}
