// The CLI's saved login: which addresses count as this machine (plain http allowed, no clear-text
// warning) and the folder the credentials live in.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configDir, normalizeUrl, saveCredentials } from "../../src/cli/client/credentials";
import { isLoopbackHost } from "../../src/core/hosts";

describe("server URLs", () => {
  test("without a scheme, this machine's names get http and every other host https", () => {
    expect(normalizeUrl("localhost:8080")).toBe("http://localhost:8080");
    expect(normalizeUrl("blog.localhost:8080")).toBe("http://blog.localhost:8080");
    expect(normalizeUrl("127.0.0.1:8080")).toBe("http://127.0.0.1:8080");
    expect(normalizeUrl("[::1]:8080")).toBe("http://[::1]:8080");
    expect(normalizeUrl("pier.example.com")).toBe("https://pier.example.com");
    // Names that only start like a loopback one are other machines.
    expect(normalizeUrl("localhost.example.com")).toBe("https://localhost.example.com");
    expect(normalizeUrl("127.example.com")).toBe("https://127.example.com");
    expect(normalizeUrl("http://pier.example.com/x")).toBe("http://pier.example.com");
  });

  test("isLoopbackHost", () => {
    for (const h of ["localhost", "LOCALHOST", "a.localhost", "127.0.0.1", "127.8.9.10", "[::1]", "::1"]) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ["localhost.example.com", "127.example.com", "10.0.0.1", "[::2]", "pier.example.com"]) expect(isLoopbackHost(h)).toBe(false);
  });
});

describe("the credentials folder", () => {
  let home: string | null = null;
  afterEach(() => {
    if (home) rmSync(home, { recursive: true, force: true });
    home = null;
  });

  test("a folder that already existed with wider permissions is made private to the user", () => {
    home = mkdtempSync(join(tmpdir(), "pier-cli-creds-"));
    const env = { HOME: home, XDG_CONFIG_HOME: undefined };
    mkdirSync(configDir(env), { recursive: true, mode: 0o755 });
    saveCredentials({ version: 1, default: null, servers: {} }, env);
    expect(statSync(configDir(env)).mode & 0o777).toBe(0o700);
    expect(statSync(join(configDir(env), "credentials.json")).mode & 0o777).toBe(0o600);
  });
});
