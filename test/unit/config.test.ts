import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkConfig, ConfigError, configOptions, describeConfig, ensureSecretKey, envName, loadConfig, parseFlags, resolveUrls } from "../../src/config";

const load = (env: Record<string, string> = {}, argv: string[] = []) => loadConfig(env, parseFlags(argv));
const errorOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("expected a ConfigError");
};

describe("config sources", () => {
  test("defaults give the zero-config appliance", () => {
    const c = load();
    expect(c.httpPort).toBe(8080);
    expect(c.smtpPort).toBe(2525);
    expect(c.httpsPort).toBeNull();
    expect(c.baseUrl).toBeNull();
    expect(c.sitesDomain).toBe("localhost");
    expect(c.signupMode).toBe("invite");
    expect(c.dataDir).toBe(join(process.cwd(), "data"));
    expect(resolveUrls(c, 8080).baseUrl).toBe("http://localhost:8080");
  });

  test("a flag beats the environment, which beats the default", () => {
    expect(load({ PIER_HTTP_PORT: "9000" }).httpPort).toBe(9000);
    expect(load({ PIER_HTTP_PORT: "9000" }, ["--http-port", "9001"]).httpPort).toBe(9001);
    expect(load({ PIER_HTTP_PORT: "9000" }, ["--http-port=9002"]).httpPort).toBe(9002);
    expect(load({ PIER_SIGNUP_MODE: "open" }, ["--signup-mode", "closed"]).signupMode).toBe("closed");
  });

  test("an empty environment variable counts as unset", () => {
    expect(load({ PIER_HTTP_PORT: "", PIER_SMTP_PORT: " " }).httpPort).toBe(8080);
    expect(load({ PIER_SMTP_PORT: "" }).smtpPort).toBe(2525);
  });

  test("port 0 means any free port; 'off' turns optional listeners off", () => {
    const c = load({}, ["--http-port", "0", "--smtp-port", "off", "--https-port", "0"]);
    expect(c.httpPort).toBe(0);
    expect(c.smtpPort).toBeNull();
    expect(c.httpsPort).toBe(0);
    expect(load({ PIER_SMTP_PORT: "OFF" }).smtpPort).toBeNull();
  });

  test("every option has an env name and a flag, and all defaults are valid", () => {
    for (const o of configOptions) expect(envName(o)).toMatch(/^PIER_[A-Z_]+$/);
    expect(new Set(configOptions.map((o) => o.name)).size).toBe(configOptions.length);
    const flags = Object.fromEntries(configOptions.map((o) => [o.name, o.default]));
    expect(() => loadConfig({}, flags)).not.toThrow();
  });

  test("hostnames are normalised: lower case, no trailing dot", () => {
    const c = load({ PIER_SITES_DOMAIN: "Sites.Example.COM.", PIER_BASE_URL: "https://Pier.Example.com/" });
    expect(c.sitesDomain).toBe("sites.example.com");
    expect(c.baseUrl).toBe("https://pier.example.com");
  });
});

describe("bad values give a ConfigError naming the variable or flag", () => {
  const cases: Array<[string, Record<string, string>, string[], RegExp]> = [
    ["port not a number (env)", { PIER_HTTP_PORT: "eighty" }, [], /PIER_HTTP_PORT must be a port number 0-65535/],
    ["port not a number (flag)", {}, ["--http-port", "eighty"], /--http-port must be a port number/],
    ["port out of range", { PIER_SMTP_PORT: "70000" }, [], /PIER_SMTP_PORT must be a port number 0-65535 or 'off'/],
    ["negative port", {}, ["--https-port=-1"], /--https-port must be a port number/],
    ["fractional port", { PIER_HTTP_PORT: "80.5" }, [], /PIER_HTTP_PORT/],
    ["http port cannot be off", { PIER_HTTP_PORT: "off" }, [], /PIER_HTTP_PORT must be a port number 0-65535 \(0 picks/],
    ["empty flag port", {}, ["--http-port="], /--http-port must be a port number/],
    ["base URL with a path", { PIER_BASE_URL: "https://pier.example.com/app" }, [], /PIER_BASE_URL must be an origin without a path/],
    ["base URL not a URL", { PIER_BASE_URL: "pier.example.com" }, [], /PIER_BASE_URL must be an absolute URL/],
    ["base URL ftp", { PIER_BASE_URL: "ftp://pier.example.com" }, [], /PIER_BASE_URL must use http or https/],
    ["sites domain with a space", { PIER_SITES_DOMAIN: "my sites.com" }, [], /PIER_SITES_DOMAIN must be a DNS name/],
    ["sites domain with a scheme", {}, ["--sites-domain", "https://sites.example.com"], /--sites-domain must be a DNS name/],
    ["mail domain with @", { PIER_MAIL_DOMAIN: "bob@example.com" }, [], /PIER_MAIL_DOMAIN must be a DNS name/],
    ["short secret", { PIER_SECRET_KEY: "too-short" }, [], /PIER_SECRET_KEY must be at least 32 characters/],
    ["signup mode", { PIER_SIGNUP_MODE: "everyone" }, [], /PIER_SIGNUP_MODE must be one of open, invite, closed, got "everyone"/],
    ["rate limit zero", { PIER_RATE_LIMIT_PER_MINUTE: "0" }, [], /PIER_RATE_LIMIT_PER_MINUTE must be a positive integer/],
    ["rate limit text", {}, ["--rate-limit-anon-per-minute", "lots"], /--rate-limit-anon-per-minute must be a positive integer/],
    ["idle timeout over Bun's 255 s", {}, ["--idle-timeout", "300"], /--idle-timeout must be at most 255 seconds, got "300"/],
    ["idle timeout zero", { PIER_IDLE_TIMEOUT: "0" }, [], /PIER_IDLE_TIMEOUT must be a positive integer/],
    ["boolean", { PIER_TRUST_PROXY: "maybe" }, [], /PIER_TRUST_PROXY must be true or false/],
    ["log level", { PIER_LOG_LEVEL: "loud" }, [], /PIER_LOG_LEVEL must be one of debug, info, warn, error/],
  ];
  for (const [name, env, argv, re] of cases) test(name, () => expect(errorOf(() => load(env, argv))).toMatch(re));

  test("unknown flags, stray arguments and missing values are refused", () => {
    expect(errorOf(() => parseFlags(["--http-prot", "80"]))).toMatch(/unknown option --http-prot/);
    expect(errorOf(() => parseFlags(["serve"]))).toMatch(/unexpected argument "serve"/);
    expect(errorOf(() => parseFlags(["--data-dir"]))).toMatch(/--data-dir needs a value/);
  });
});

describe("checks across options", () => {
  test("two listeners on one port", () => {
    expect(errorOf(() => load({ PIER_HTTP_PORT: "8080", PIER_SMTP_PORT: "8080" }))).toMatch(
      /PIER_HTTP_PORT \(--http-port\) and PIER_SMTP_PORT \(--smtp-port\) are both 8080/,
    );
    // Port 0 twice is fine: each listener gets its own free port.
    expect(() => load({ PIER_HTTP_PORT: "0", PIER_SMTP_PORT: "0" })).not.toThrow();
  });

  test("the API host must not be a site address under the sites domain", () => {
    expect(errorOf(() => load({ PIER_BASE_URL: "https://pier.example.com", PIER_SITES_DOMAIN: "example.com" }))).toMatch(
      /PIER_BASE_URL \(--base-url\) host pier.example.com is itself a site address.*sites\.example\.com/,
    );
    // Sites on subdomains of the API host itself, or on their own domain, are fine.
    expect(() => load({ PIER_BASE_URL: "https://pier.example.com", PIER_SITES_DOMAIN: "pier.example.com" })).not.toThrow();
    expect(() => load({ PIER_BASE_URL: "https://pier.example.com", PIER_SITES_DOMAIN: "sites.example.com" })).not.toThrow();
    expect(() => load({ PIER_BASE_URL: "https://example.com", PIER_SITES_DOMAIN: "example.com" })).not.toThrow();
    expect(() => load({ PIER_BASE_URL: "https://pier.example.com", PIER_SITES_DOMAIN: "pages.dev" })).not.toThrow();
  });

  test("sites and mail domains cannot be IP addresses", () => {
    expect(errorOf(() => load({ PIER_SITES_DOMAIN: "192.168.1.10" }))).toMatch(/PIER_SITES_DOMAIN \(--sites-domain\) must be a DNS name.*not the IP address/);
    expect(errorOf(() => load({ PIER_MAIL_DOMAIN: "10.0.0.1" }))).toMatch(/PIER_MAIL_DOMAIN \(--mail-domain\) must be a DNS name/);
  });

  test("warnings for likely mistakes that still run", () => {
    const w = (env: Record<string, string>) => checkConfig(load(env)).warnings.join("\n");
    expect(w({})).toBe("");
    expect(w({ PIER_SITES_DOMAIN: "sites.example.com" })).toMatch(/PIER_BASE_URL \(--base-url\) is unset/);
    expect(w({ PIER_BASE_URL: "http://192.168.1.10:8080", PIER_SITES_DOMAIN: "lan.example" })).toMatch(/@192.168.1.10, an IP address.*PIER_MAIL_DOMAIN/);
    expect(w({ PIER_BASE_URL: "http://192.168.1.10:8080", PIER_SITES_DOMAIN: "lan.example", PIER_SMTP_PORT: "off" })).toBe("");
    expect(w({ PIER_BASE_URL: "https://pier.example.com", PIER_SITES_DOMAIN: "sites.example.com" })).toMatch(/is https but the HTTPS listener is off/);
    expect(w({ PIER_BASE_URL: "https://pier.example.com", PIER_SITES_DOMAIN: "sites.example.com", PIER_TRUST_PROXY: "true" })).toBe("");
  });

  test("mail domain defaults to the base URL's host", () => {
    expect(resolveUrls(load({ PIER_BASE_URL: "https://pier.example.com" }), 8080).mailDomain).toBe("pier.example.com");
    expect(resolveUrls(load({ PIER_BASE_URL: "https://pier.example.com", PIER_MAIL_DOMAIN: "in.example.com" }), 8080).mailDomain).toBe("in.example.com");
  });
});

describe("secret key", () => {
  test("generated into the data dir with mode 0600 on first run, then reused", () => {
    const dir = mkdtempSync(join(tmpdir(), "pier-cfg-"));
    try {
      const c = load({}, ["--data-dir", join(dir, "data")]);
      const first = ensureSecretKey(c);
      const file = join(dir, "data", "secret.key");
      expect(first.length).toBeGreaterThanOrEqual(32);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readFileSync(file, "utf8").trim()).toBe(first);
      expect(ensureSecretKey(c)).toBe(first);
      expect(ensureSecretKey(load({}, ["--data-dir", join(dir, "data")]))).toBe(first);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a configured key is used as is and nothing is written", () => {
    const dir = mkdtempSync(join(tmpdir(), "pier-cfg-"));
    try {
      const key = "k".repeat(40);
      expect(ensureSecretKey(load({ PIER_SECRET_KEY: key, PIER_DATA_DIR: dir }))).toBe(key);
      expect(() => statSync(join(dir, "secret.key"))).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("describeConfig never shows the secret", () => {
    const key = "super-secret-value-super-secret-value";
    const described = JSON.stringify(describeConfig(load({ PIER_SECRET_KEY: key })));
    expect(described).not.toContain(key);
    expect(described).toContain("[redacted]");
  });
});
