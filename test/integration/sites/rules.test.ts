// The small pure rules behind the site server, table-driven.
import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../../src/config";
import { isExcludedFromPublish, normalizeSitePath } from "../../../src/features/publish/exclusions";
import { validateSlug } from "../../../src/features/publish/publications";
import { safeUrl } from "../../../src/sites/markdown";
import { noneMatch, parseRange, pickEncoding } from "../../../src/sites/negotiate";
import { hasExtension, parseRequestPath } from "../../../src/sites/paths";

describe("exclusions", () => {
  test.each([
    [".workers/api.js", true],
    [".env", true],
    [".env.local", true],
    ["sub/.env.production", true],
    [".envrc", true],
    ["node_modules/react/index.js", true],
    ["app/node_modules/x.js", true],
    ["package-lock.json", true],
    ["sub/yarn.lock", true],
    ["pnpm-lock.yaml", true],
    ["bun.lockb", true],
    ["bun.lock", true],
    ["Cargo.lock", true],
    ["setup.EXE", true],
    ["a.dmg", true],
    ["x.msi", true],
    ["x.pkg", true],
    ["x.deb", true],
    ["x.rpm", true],
    ["run.sh", true],
    ["x.bat", true],
    ["x.cmd", true],
    ["x.ps1", true],
    ["x.apk", true],
    ["Tool.AppImage", true],
    ["index.html", false],
    ["workers/a.js", false],
    ["docs/.workers/a.js", false],
    ["env.txt", false],
    ["environment.md", false],
    ["package.json", false],
    ["data.bin", false],
    ["lock.json", false],
    ["shell.html", false],
    [".well-known/security.txt", false],
  ])("%s excluded: %p", (path, excluded) => {
    expect(isExcludedFromPublish(path)).toBe(excluded);
  });

  test("storage paths are normalized or refused", () => {
    expect(normalizeSitePath("/a//b/c.txt")).toBe("a/b/c.txt");
    for (const bad of ["", "/", "../x", "a/../b", "a/./b", "a\\b", "a\u0000b", "a\nb"]) expect(normalizeSitePath(bad)).toBeNull();
  });
});

describe("request paths", () => {
  test.each([
    ["/", "", true],
    ["/a/b.html", "a/b.html", false],
    ["/docs/", "docs", true],
    ["/a%20b/c%C3%A9.txt", "a b/cé.txt", false],
    ["/%25252e", "%252e", false],
  ])("%s -> %s", (raw, path, dir) => {
    const p = parseRequestPath(raw);
    expect(p).toMatchObject({ ok: true, path, dir });
  });
  test.each(["/a/../b", "/a/%2e%2e/b", "/%2E", "/a%2fb", "/a%5cb", "/a%00", "/a//b", "/%c0%ae%c0%ae", "/%zz", "/a\\b"])("%s refused", (raw) => {
    expect(parseRequestPath(raw).ok).toBe(false);
  });
  test("extensions", () => {
    expect(hasExtension("a/b.js")).toBe(true);
    expect(hasExtension("users/42")).toBe(false);
    expect(hasExtension(".hidden")).toBe(false);
    expect(hasExtension("v1.")).toBe(false);
  });
});

describe("negotiation", () => {
  test.each([
    ["gzip, deflate, br", "br"],
    ["br;q=0.5, gzip;q=0.8", "gzip"],
    ["br;q=0", "identity"],
    ["*", "br"],
    ["*, br;q=0", "gzip"],
    ["identity", "identity"],
    ["GZIP", "gzip"],
    ["", "identity"],
  ])("Accept-Encoding %p -> %s", (ae, enc) => {
    expect(pickEncoding(ae, true, true)).toBe(enc as "br");
  });
  test("only available variants are chosen", () => {
    expect(pickEncoding("br, gzip", false, true)).toBe("gzip");
    expect(pickEncoding("br", false, true)).toBe("identity");
  });
  test("If-None-Match", () => {
    expect(noneMatch('"a", "b"', '"b"')).toBe(true);
    expect(noneMatch('W/"b"', '"b"')).toBe(true);
    expect(noneMatch("*", '"b"')).toBe(true);
    expect(noneMatch('"c"', '"b"')).toBe(false);
    expect(noneMatch(null, '"b"')).toBe(false);
  });
  test.each([
    ["bytes=0-9", 100, { kind: "range", start: 0, end: 9 }],
    ["bytes=90-", 100, { kind: "range", start: 90, end: 99 }],
    ["bytes=-10", 100, { kind: "range", start: 90, end: 99 }],
    ["bytes=50-500", 100, { kind: "range", start: 50, end: 99 }],
    ["bytes=100-", 100, { kind: "unsatisfiable" }],
    ["bytes=-0", 100, { kind: "unsatisfiable" }],
    ["bytes=9-2", 100, { kind: "none" }],
    ["bytes=0-1,5-6", 100, { kind: "none" }],
    ["items=0-1", 100, { kind: "none" }],
    ["bytes=0-0", 0, { kind: "unsatisfiable" }],
  ])("Range %s of %d", (h, size, expected) => {
    expect(parseRange(h, size)).toEqual(expected as never);
  });
});

describe("markdown URLs", () => {
  test.each([
    ["docs/a.md", "docs/a.md"],
    ["/x", "/x"],
    ["#top", "#top"],
    ["https://e.com/a?b=1", "https://e.com/a?b=1"],
    ["mailto:a@b.c", "mailto:a@b.c"],
    ["javascript:alert(1)", null],
    ["JaVaScRiPt:x", null],
    [" javascript:x", null],
    ["java&#x73;cript:x", null],
    ["data:text/html,x", null],
    ["vbscript:x", null],
    ["java\tscript:x", null],
  ])("%s", (raw, out) => {
    expect(safeUrl(raw)).toBe(out);
  });
});

describe("slugs and config", () => {
  test("slugs shorter than 9, reserved or not DNS-safe are refused", () => {
    for (const bad of ["short", "has_underscore1", "-leadinghyphen", "UPPERCASE1", "preview-something", "administrator"])
      expect(() => validateSlug(bad)).toThrow();
    expect(() => validateSlug("my-site-123")).not.toThrow();
  });
  test("PIER_SMTP_RELAY_URL must be an smtp(s) URL", () => {
    expect(loadConfig({ PIER_SMTP_RELAY_URL: "smtps://u:p@mail.example.com:465" }).smtpRelayUrl).toBe("smtps://u:p@mail.example.com:465");
    expect(loadConfig({}).smtpRelayUrl).toBeNull();
    expect(() => loadConfig({ PIER_SMTP_RELAY_URL: "http://x" })).toThrow(ConfigError);
  });
});
