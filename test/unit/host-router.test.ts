import { describe, expect, test } from "bun:test";
import { loadConfig, resolveUrls } from "../../src/config";
import { classifyHost, parseHost } from "../../src/http/host-router";

describe("parseHost", () => {
  const cases: Array<[string | null, string | null]> = [
    ["localhost:8080", "localhost"],
    ["Example.COM", "example.com"],
    ["example.com.", "example.com"],
    ["example.com.:8080", "example.com"],
    ["[::1]:8080", "[::1]"],
    ["[2001:db8::1]", "[2001:db8::1]"],
    ["127.0.0.1:8080", "127.0.0.1"],
    [null, null],
    ["", null],
    ["   ", null],
    ["a".repeat(300), null],
    [`${"a".repeat(64)}.example.com`, null], // label longer than 63
    ["evil.com@localhost", null],
    ["evil.com/localhost", null],
    ["evil .com", null],
    ["exa mple.com:80", null],
    ["example.com:80:80", null],
    ["example.com:abc", null],
    ["example.com:123456", null],
    ["::1", null], // IPv6 without brackets
    ["[::1", null],
    ["-bad.example.com", null],
    ["bad-.example.com", null],
    ["under_score.example.com", null],
    ["example..com", null],
    [".example.com", null],
    ["xn--bcher-kva.example", "xn--bcher-kva.example"],
    ["bücher.example", null], // browsers send punycode
    ["example.com\r\nx-injected: 1", null],
    ["example.com%00", null],
    // A numeric last label reads as a broken IPv4 address: no URL can be built for it (was a 500).
    ["a.0", null],
    ["x.1:8080", null],
    ["a.08", null],
    ["1.2.3.4", "1.2.3.4"],
  ];
  for (const [raw, want] of cases) test(`${JSON.stringify(raw)?.slice(0, 40)} -> ${want}`, () => expect(parseHost(raw)).toBe(want));
});

describe("classifyHost", () => {
  const zeroConfig = resolveUrls(loadConfig({}, {}), 8080);
  const prod = resolveUrls(loadConfig({ PIER_BASE_URL: "https://pier.example.com", PIER_SITES_DOMAIN: "sites.example.com" }), 8080);
  const sameHost = resolveUrls(loadConfig({ PIER_BASE_URL: "https://pier.example.com", PIER_SITES_DOMAIN: "pier.example.com" }), 8080);

  test("zero config: localhost and any address reach the API; *.localhost are sites", () => {
    expect(classifyHost("localhost:8080", zeroConfig, false)).toEqual({ kind: "api" });
    expect(classifyHost("LOCALHOST.:8080", zeroConfig, false)).toEqual({ kind: "api" });
    expect(classifyHost("127.0.0.1:8080", zeroConfig, false)).toEqual({ kind: "api" });
    expect(classifyHost("[::1]:8080", zeroConfig, false)).toEqual({ kind: "api" });
    expect(classifyHost("192.168.1.20:8080", zeroConfig, false)).toEqual({ kind: "api" });
    expect(classifyHost("blog.localhost:8080", zeroConfig, false)).toEqual({ kind: "site", label: "blog" });
    expect(classifyHost("Preview-Blog.localhost", zeroConfig, false)).toEqual({ kind: "site", label: "preview-blog" });
  });

  test("configured: the API host, site hosts, and every other name as a (possible) custom domain", () => {
    expect(classifyHost("pier.example.com", prod, true)).toEqual({ kind: "api" });
    expect(classifyHost("PIER.EXAMPLE.COM.", prod, true)).toEqual({ kind: "api" });
    expect(classifyHost("blog.sites.example.com", prod, true)).toEqual({ kind: "site", label: "blog" });
    expect(classifyHost("www.customer.org", prod, true)).toEqual({ kind: "custom", hostname: "www.customer.org" });
    expect(classifyHost("127.0.0.1:8080", prod, true)).toEqual({ kind: "custom", hostname: "127.0.0.1" });
  });

  test("sites on subdomains of the API host itself", () => {
    expect(classifyHost("pier.example.com", sameHost, true)).toEqual({ kind: "api" });
    expect(classifyHost("blog.pier.example.com", sameHost, true)).toEqual({ kind: "site", label: "blog" });
  });

  test("hostile or odd Host headers never reach the API or a site", () => {
    for (const raw of [null, "", " ", "a".repeat(261), "evil.com@pier.example.com", "evil.com pier.example.com", "pier.example.com:99999"]) {
      expect(classifyHost(raw, prod, true)).toEqual({ kind: "invalid" });
    }
    // The bare sites domain and nested names under it are not sites.
    expect(classifyHost("a.b.sites.example.com", prod, true)).toEqual({ kind: "invalid" });
    expect(classifyHost(".sites.example.com", prod, true)).toEqual({ kind: "invalid" });
    // A look-alike suffix is not under the sites domain.
    expect(classifyHost("blog.evilsites.example.com", prod, true)).toEqual({ kind: "custom", hostname: "blog.evilsites.example.com" });
  });

  test("distinct huge Host headers are not remembered: memory stays flat", () => {
    const heap = () => {
      Bun.gc(true);
      return process.memoryUsage().heapUsed;
    };
    const before = heap();
    // 3,000 distinct 15 KB values (the listener lets 16 KB of headers through): 45 MB if kept.
    const pad = "a".repeat(15_000);
    for (let i = 0; i < 3_000; i++) expect(classifyHost(`${i}${pad}`, prod, true).kind).toBe("invalid");
    expect(heap() - before).toBeLessThan(10 * 1024 * 1024);
  });
});
