// The GitHub App options: all or none, files that exist, a private key that parses; and the web
// address derived from the API URL (github.com, GitHub Enterprise Server).
import { afterAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, parseFlags } from "../../src/config";
import { webUrlFor } from "../../src/features/gitsync/github-app";

const dir = mkdtempSync(join(tmpdir(), "pier-ghcfg-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const key = join(dir, "app.pem");
writeFileSync(key, generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" }));
const bad = join(dir, "bad.pem");
writeFileSync(bad, "not a key\n");
const all = (pem = key) => [
  "--github-app-id=1",
  `--github-app-private-key-file=${pem}`,
  "--github-app-webhook-secret=whsec",
  "--github-app-slug=pier",
  "--github-app-client-id=Iv1.x",
  "--github-app-client-secret=cs",
];
const load = (argv: string[]) => loadConfig({}, parseFlags([`--data-dir=${dir}`, ...argv]));

describe("GitHub App options", () => {
  test("none or all of them start; some of them name what is missing", () => {
    expect(load([]).githubAppId).toBeNull();
    const c = load(all());
    expect(c).toMatchObject({ githubAppId: "1", githubAppSlug: "pier", githubApiUrl: "https://api.github.com", githubUrl: null });
    expect(() => load(all().slice(0, 2))).toThrow(/--github-app-slug/);
  });

  test("a private key file that is not a PEM key, or secrets given twice, are refused at start", () => {
    expect(() => load(all(bad))).toThrow(/not a PEM private key/);
    const secretFile = join(dir, "secret");
    writeFileSync(secretFile, "s\n");
    expect(() => load([...all(), `--github-app-webhook-secret-file=${secretFile}`])).toThrow(/not both/);
  });

  test("the web address follows the API URL", () => {
    expect(webUrlFor("https://api.github.com")).toBe("https://github.com");
    expect(webUrlFor("https://ghe.example.com/api/v3")).toBe("https://ghe.example.com");
    expect(webUrlFor("https://api.acme.ghe.com")).toBe("https://acme.ghe.com");
  });
});
