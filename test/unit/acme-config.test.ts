// Automatic HTTPS options: when --acme auto turns itself on, the CA shortcuts, and the checks
// that stop a start with a message naming the option.
import { describe, expect, test } from "bun:test";
import { acmeEnabled, ConfigError, loadConfig, parseFlags } from "../../src/config";
import { renewalTime, RETRY_BACKOFF_MS } from "../../src/acme";

const load = (argv: string[]) => loadConfig({}, parseFlags(["--sites-domain", "sites.test", ...argv]));
const errorOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("expected a ConfigError");
};

describe("--acme auto", () => {
  test("on with an HTTPS port and a public base URL host", () => {
    expect(acmeEnabled(load(["--https-port", "443", "--base-url", "https://pier.example.com"]))).toBe(true);
  });
  test("off without an HTTPS port, without a base URL, or for hosts no public CA can validate", () => {
    expect(acmeEnabled(load(["--base-url", "https://pier.example.com"]))).toBe(false);
    expect(acmeEnabled(load(["--https-port", "443"]))).toBe(false);
    for (const base of ["https://localhost", "https://pier.localhost", "https://nas.local", "https://192.168.1.10", "https://[::1]", "https://box"])
      expect(acmeEnabled(load(["--https-port", "443", "--base-url", base]))).toBe(false);
  });
  test("on and off override", () => {
    expect(acmeEnabled(load(["--https-port", "443", "--base-url", "https://pier.localhost", "--acme", "on"]))).toBe(true);
    expect(acmeEnabled(load(["--https-port", "443", "--base-url", "https://pier.example.com", "--acme", "off"]))).toBe(false);
  });
});

describe("ACME options", () => {
  test("directory shortcuts and URLs", () => {
    expect(load([]).acmeDirectory).toBe("https://acme-v02.api.letsencrypt.org/directory");
    expect(load(["--acme-directory", "letsencrypt-staging"]).acmeDirectory).toContain("acme-staging-v02");
    expect(load(["--acme-directory", "zerossl"]).acmeDirectory).toBe("https://acme.zerossl.com/v2/DV90");
    expect(load(["--acme-directory", "https://ca.example.net/dir"]).acmeDirectory).toBe("https://ca.example.net/dir");
    expect(errorOf(() => load(["--acme-directory", "http://ca.example.net/dir"]))).toContain("--acme-directory");
  });
  test("bad combinations stop the start with a message naming the option", () => {
    expect(errorOf(() => load(["--acme", "on"]))).toContain("--https-port");
    expect(errorOf(() => load(["--acme-eab-kid", "kid"]))).toContain("--acme-eab-hmac");
    expect(errorOf(() => load(["--acme-ca-root", "/nonexistent/root.pem"]))).toContain("--acme-ca-root");
    expect(errorOf(() => load(["--acme-email", "not an address"]))).toContain("--acme-email");
    expect(errorOf(() => load(["--acme", "maybe"]))).toContain("--acme");
  });
  test("--hsts takes a max-age or off", () => {
    expect(load([]).hsts).toBeNull();
    expect(load(["--hsts", "31536000"]).hsts).toBe(31536000);
    expect(load(["--hsts", "off"]).hsts).toBeNull();
    expect(errorOf(() => load(["--hsts", "1y"]))).toContain("--hsts");
  });
});

describe("renewal and retry schedule", () => {
  test("renewal at two thirds of the lifetime, never sooner than ten minutes after issuance", () => {
    const notBefore = new Date("2026-01-01T00:00:00Z");
    const notAfter = new Date("2026-04-01T00:00:00Z"); // 90 days
    expect(renewalTime({ notBefore, notAfter }, notBefore).toISOString()).toBe("2026-03-02T00:00:00.000Z");
    const short = { notBefore, notAfter: new Date(notBefore.getTime() + 60_000) };
    expect(renewalTime(short, notBefore).getTime() - notBefore.getTime()).toBe(10 * 60_000);
  });
  test("retries back off from 5 minutes to a day and stay there", () => {
    expect(RETRY_BACKOFF_MS.map((ms) => ms / 60_000)).toEqual([5, 30, 120, 360, 1440]);
  });
});
