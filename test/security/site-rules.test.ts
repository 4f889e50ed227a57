// Site rules (`_redirects`, `_headers`) as an attacker would use them: one test per attack.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestPier, type TestPier } from "../helpers/pier";
import { publishSite, siteFetch } from "../helpers/sites";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t?.stop());

describe("site rules attacks", () => {
  test("a 200 rewrite to another origin is never proxied (no SSRF, no open proxy)", async () => {
    let hits = 0;
    const inner = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => (hits++, new Response("internal secret")) });
    try {
      const s = await publishSite(t, {
        files: [
          { path: "index.html", bytes: "home" },
          { path: "_redirects", bytes: `/internal http://127.0.0.1:${inner.port}/ 200\n/internal2 http://127.0.0.1:${inner.port}/ 200!\n` },
        ],
      });
      for (const path of ["/internal", "/internal2"]) {
        const r = await siteFetch(t, s.host, path);
        expect(r.status).toBe(404);
        expect(await r.text()).not.toContain("internal secret");
      }
      expect(hits).toBe(0);
    } finally {
      inner.stop(true);
    }
  });

  test("a rule never reveals a gated site's content or where it points", async () => {
    const s = await publishSite(t, {
      access: "password",
      password: "correct horse battery",
      files: [
        { path: "index.html", bytes: "gated secret" },
        { path: "_redirects", bytes: "/where /internal-plan-2026 301!\n/peek /index.html 200!\n" },
      ],
    });
    for (const path of ["/where", "/peek"]) {
      const r = await siteFetch(t, s.host, path);
      expect(r.status).toBe(401);
      expect(r.headers.get("location")).toBeNull();
      expect(await r.text()).not.toContain("gated secret");
    }
  });

  test("a rewrite cannot climb out of the site (dot segments, encoded slashes)", async () => {
    const s = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "home" },
        { path: "_redirects", bytes: "/a /../../../etc/passwd 200\n/b /%2e%2e/%2e%2e/etc/passwd 200\n/c /x%2f..%2f..%2fetc/passwd 200\n" },
      ],
    });
    for (const path of ["/a", "/b", "/c"]) {
      const r = await siteFetch(t, s.host, path);
      expect(r.status).toBe(404);
      expect(await r.text()).not.toContain("root:");
    }
  });

  test("Set-Cookie from _headers cannot plant cookies under the shared sites domain", async () => {
    const s = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "home" },
        { path: "_headers", bytes: `/*\n  Set-Cookie: pier_site_access=forged; Domain=${t.pier.deps.urls.sitesDomain}; Path=/\n` },
      ],
    });
    const r = await siteFetch(t, s.host, "/");
    expect(r.status).toBe(200);
    expect(r.headers.getSetCookie()).toEqual([]);
  });

  // Clear-Site-Data "cookies" clears the cookies of the whole registrable domain, not only the
  // answering host (https://w3c.github.io/webappsec-clear-site-data/#clear-cookies): from one
  // site it would sign visitors out of every other site's gate and of Pier's own pages.
  test("Clear-Site-Data from _headers cannot clear other sites' cookies under the shared sites domain", async () => {
    const s = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "home" },
        {
          path: "_headers",
          bytes: `/*\n  Clear-Site-Data: "cookies"\n/wild\n  Clear-Site-Data: "*"\n/own\n  Clear-Site-Data: "cache", "Cookies", "storage"\n`,
        },
      ],
    });
    expect((await siteFetch(t, s.host, "/")).headers.get("clear-site-data")).toBeNull();
    expect((await siteFetch(t, s.host, "/wild")).headers.get("clear-site-data")).toBeNull();
    // What stays within the site's own origin still goes out.
    expect((await siteFetch(t, s.host, "/own")).headers.get("clear-site-data")).toBe('"cache", "storage"');
  });

  test("_headers cannot switch off nosniff or the ETag", async () => {
    const s = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "home" },
        { path: "_headers", bytes: "/*\n  ! X-Content-Type-Options\n  ! ETag\n  X-Content-Type-Options: none\n" },
      ],
    });
    const r = await siteFetch(t, s.host, "/");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.headers.get("etag")).not.toBeNull();
  });

  test("_headers cannot make a gated site cacheable by shared caches", async () => {
    const password = "correct horse battery";
    const s = await publishSite(t, {
      access: "password",
      password,
      files: [
        { path: "index.html", bytes: "home" },
        { path: "_headers", bytes: "/*\n  Cache-Control: public, max-age=86400\n" },
      ],
    });
    const login = await siteFetch(t, s.host, "/_pier/gate/password", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ password, next: "/" }).toString(),
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const r = await siteFetch(t, s.host, "/", { headers: { cookie } });
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("private, no-cache");
  });

  test("an empty splat cannot turn a path destination into another host (//host)", async () => {
    const s = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "home" },
        { path: "_redirects", bytes: "/jump/* /:splat/evil.example 301\n" },
      ],
    });
    const r = await siteFetch(t, s.host, "/jump");
    expect(r.status).toBe(301);
    expect(r.headers.get("location")).toBe("/evil.example");
  });

  test("a header value that cannot go on the wire is refused at build, and the site still answers", async () => {
    const s = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "home" },
        { path: "_headers", bytes: "/*\n  X-Emoji: \u{1F600}\n  X-Fine: ok\n" },
      ],
    });
    const r = await siteFetch(t, s.host, "/");
    expect(r.status).toBe(200);
    expect(r.headers.get("x-emoji")).toBeNull();
    expect(r.headers.get("x-fine")).toBe("ok");
  });

  test("the rules files are never served, even when asked for with encodings or a trailing slash", async () => {
    const s = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "home" },
        { path: "_redirects", bytes: "/private-map /x 301\n" },
        { path: "_headers", bytes: "/*\n  X-Secret-Token: abc\n" },
      ],
    });
    for (const path of ["/_redirects", "/_headers", "/%5Fredirects", "/_headers/", "/_redirects?x=1"]) {
      const r = await siteFetch(t, s.host, path);
      expect(r.status).toBe(404);
      expect(await r.text()).not.toContain("/private-map");
    }
  });
});
