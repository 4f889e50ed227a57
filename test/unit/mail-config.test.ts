import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config";
import { loadSmtpTls } from "../../src/tls/material";

const dir = mkdtempSync(join(tmpdir(), "pier-mailcfg-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("SMTP configuration", () => {
  test("defaults", () => {
    const c = loadConfig({}, {});
    expect(c.smtpPort).toBe(2525);
    expect(c.smtpMaxMessageBytes).toBe(30 * 1024 * 1024);
    expect(c.smtpMaxRecipients).toBe(100);
    expect(c.smtpTlsCert).toBeNull();
    expect(c.smtpRejectDmarcFail).toBe(false);
  });

  test("environment and flags", () => {
    const c = loadConfig({ PIER_SMTP_MAX_MESSAGE_SIZE: "1048576", PIER_SMTP_REJECT_DMARC_FAIL: "true" }, { "smtp-rate-limit-per-ip": "5", "smtp-port": "off" });
    expect(c.smtpMaxMessageBytes).toBe(1048576);
    expect(c.smtpRejectDmarcFail).toBe(true);
    expect(c.smtpRateLimitPerIp).toBe(5);
    expect(c.smtpPort).toBeNull();
    expect(() => loadConfig({ PIER_SMTP_MAX_RECIPIENTS: "0" }, {})).toThrow(ConfigError);
  });
});

describe("STARTTLS certificate", () => {
  test("self-signed fallback is generated once, key private, and reused", async () => {
    const a = await loadSmtpTls({ certFile: null, keyFile: null, dataDir: dir, serverName: "mail.pier.test" });
    expect(a?.source).toBe("self-signed");
    expect(a!.cert).toContain("BEGIN CERTIFICATE");
    expect(statSync(join(dir, "smtp-tls", "self-signed-mail.pier.test.key")).mode & 0o077).toBe(0);
    const b = await loadSmtpTls({ certFile: null, keyFile: null, dataDir: dir, serverName: "mail.pier.test" });
    expect(b!.cert).toBe(a!.cert);
  });

  test("configured files are used; a missing half or unreadable file is a configuration error; off is off", async () => {
    const self = (await loadSmtpTls({ certFile: null, keyFile: null, dataDir: dir, serverName: "x.test" }))!;
    writeFileSync(join(dir, "c.pem"), self.cert);
    writeFileSync(join(dir, "k.pem"), self.key);
    const got = await loadSmtpTls({ certFile: join(dir, "c.pem"), keyFile: join(dir, "k.pem"), dataDir: dir, serverName: "x.test" });
    expect(got).toMatchObject({ source: "configured", cert: self.cert });
    await expect(loadSmtpTls({ certFile: join(dir, "c.pem"), keyFile: null, dataDir: dir, serverName: "x.test" })).rejects.toBeInstanceOf(ConfigError);
    await expect(loadSmtpTls({ certFile: join(dir, "nope.pem"), keyFile: join(dir, "k.pem"), dataDir: dir, serverName: "x.test" })).rejects.toBeInstanceOf(
      ConfigError,
    );
    expect(await loadSmtpTls({ certFile: "off", keyFile: null, dataDir: dir, serverName: "x.test" })).toBeNull();
  });
});
