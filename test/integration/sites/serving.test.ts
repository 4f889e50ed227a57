import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { activateDeploy, writeDeploy } from "../../../src/features/publish/deploys";
import { markUnpublished } from "../../../src/features/publish/publications";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";

let t: TestPier;
let s: PublishedSite; // static site
let spa: PublishedSite;
const css = "body { color: red; }\n".repeat(200);
const big = new Uint8Array(1024 * 1024).map((_, i) => (i * 7919) % 251);
const html = `<!doctype html><title>Home</title><h1>Hello</h1>${"<p>filler text</p>".repeat(100)}`;

beforeAll(async () => {
  t = await startTestPier();
  s = await publishSite(t, {
    files: [
      { path: "index.html", bytes: html },
      { path: "style.css", bytes: css },
      { path: "big.bin", bytes: big },
      { path: "docs/index.htm", bytes: "<h1>Docs</h1>" },
      { path: "docs/guide.html", bytes: "<h1>Guide</h1>" },
      { path: "404.html", bytes: "<h1>Custom not found</h1>" },
      { path: "data.json", bytes: '{"a":1}' },
      { path: "secret dir/a b.txt", bytes: "spaced" },
      { path: ".env", bytes: "SECRET=1" },
      { path: ".env.production", bytes: "SECRET=2" },
      { path: "node_modules/x/index.js", bytes: "x" },
      { path: ".workers/api.js", bytes: "w" },
      { path: "package-lock.json", bytes: "{}" },
      { path: "setup.exe", bytes: "MZ" },
      { path: "install.sh", bytes: "#!/bin/sh" },
    ],
  });
  spa = await publishSite(t, {
    siteMode: "spa",
    files: [
      { path: "index.html", bytes: "<!doctype html><title>App</title><div id=app></div>" },
      { path: "app.js", bytes: "console.log('app')" },
    ],
  });
});
afterAll(() => t.stop());

describe("site serving", () => {
  test("root serves index.html with type, strong ETag, HTML cache policy and nosniff", async () => {
    const r = await siteFetch(t, s.host, "/", { headers: { "accept-encoding": "identity" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(r.headers.get("etag")).toMatch(/^"[0-9a-f]{40}"$/);
    expect(r.headers.get("cache-control")).toBe("public, no-cache");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.headers.get("x-robots-tag")).toBeNull();
    expect(await r.text()).toBe(html);
  });

  test("index.htm serves a directory; a directory without slash redirects (query kept)", async () => {
    const r = await siteFetch(t, s.host, "/docs/");
    expect(await r.text()).toBe("<h1>Docs</h1>");
    const red = await siteFetch(t, s.host, "/docs?x=1");
    expect(red.status).toBe(301);
    expect(red.headers.get("location")).toBe("/docs/?x=1");
  });

  test("assets: content types and a revalidating max-age", async () => {
    const r = await siteFetch(t, s.host, "/style.css", { headers: { "accept-encoding": "identity" } });
    expect(r.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(r.headers.get("cache-control")).toBe("public, max-age=300, must-revalidate");
    expect(r.headers.get("vary")).toBe("Accept-Encoding");
    expect(await r.text()).toBe(css);
    const j = await siteFetch(t, s.host, "/data.json");
    expect(j.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const spaced = await siteFetch(t, s.host, "/secret%20dir/a%20b.txt");
    expect(await spaced.text()).toBe("spaced");
  });

  test("If-None-Match answers 304 with the ETag; a stale tag gets the body", async () => {
    const first = await siteFetch(t, s.host, "/style.css", { headers: { "accept-encoding": "identity" } });
    const etag = first.headers.get("etag")!;
    const r = await siteFetch(t, s.host, "/style.css", { headers: { "accept-encoding": "identity", "if-none-match": etag } });
    expect(r.status).toBe(304);
    expect(r.headers.get("etag")).toBe(etag);
    expect(await r.text()).toBe("");
    const weak = await siteFetch(t, s.host, "/style.css", { headers: { "accept-encoding": "identity", "if-none-match": `"nope", W/${etag}` } });
    expect(weak.status).toBe(304);
    const stale = await siteFetch(t, s.host, "/style.css", { headers: { "accept-encoding": "identity", "if-none-match": '"other"' } });
    expect(stale.status).toBe(200);
  });

  test("precompressed br and gzip by Accept-Encoding, each with its own ETag", async () => {
    const br = await siteFetch(t, s.host, "/style.css", { headers: { "accept-encoding": "gzip, deflate, br" }, decompress: false });
    expect(br.headers.get("content-encoding")).toBe("br");
    expect(br.headers.get("etag")).toMatch(/-br"$/);
    const brBytes = new Uint8Array(await br.arrayBuffer());
    expect(brBytes.byteLength).toBeLessThan(css.length);
    expect(brotliDecompressSync(brBytes).toString()).toBe(css);

    const gz = await siteFetch(t, s.host, "/style.css", { headers: { "accept-encoding": "gzip" }, decompress: false });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gunzipSync(new Uint8Array(await gz.arrayBuffer())).toString()).toBe(css);

    const noBr = await siteFetch(t, s.host, "/style.css", { headers: { "accept-encoding": "br;q=0, gzip" }, decompress: false });
    expect(noBr.headers.get("content-encoding")).toBe("gzip");
    const none = await siteFetch(t, s.host, "/style.css", { headers: { "accept-encoding": "identity" }, decompress: false });
    expect(none.headers.get("content-encoding")).toBeNull();
    // Binary content is never compressed.
    const bin = await siteFetch(t, s.host, "/big.bin", { method: "HEAD", headers: { "accept-encoding": "br, gzip" }, decompress: false });
    expect(bin.headers.get("content-encoding")).toBeNull();
    // 304 works per representation.
    const again = await siteFetch(t, s.host, "/style.css", {
      headers: { "accept-encoding": "br", "if-none-match": br.headers.get("etag")! },
      decompress: false,
    });
    expect(again.status).toBe(304);
  });

  test("Range: 206 with Content-Range from memory and from disk, 416 past the end, If-Range", async () => {
    const r = await siteFetch(t, s.host, "/style.css", { headers: { range: "bytes=5-9" } });
    expect(r.status).toBe(206);
    expect(r.headers.get("content-range")).toBe(`bytes 5-9/${css.length}`);
    expect(await r.text()).toBe(css.slice(5, 10));
    const suffix = await siteFetch(t, s.host, "/big.bin", { headers: { range: "bytes=-100" } });
    expect(suffix.status).toBe(206);
    expect(suffix.headers.get("content-range")).toBe(`bytes ${big.length - 100}-${big.length - 1}/${big.length}`);
    expect(new Uint8Array(await suffix.arrayBuffer())).toEqual(big.slice(-100));
    const mid = await siteFetch(t, s.host, "/big.bin", { headers: { range: "bytes=1000-1999" } });
    expect(new Uint8Array(await mid.arrayBuffer())).toEqual(big.slice(1000, 2000));
    const bad = await siteFetch(t, s.host, "/big.bin", { headers: { range: `bytes=${big.length}-` } });
    expect(bad.status).toBe(416);
    expect(bad.headers.get("content-range")).toBe(`bytes */${big.length}`);
    const ifRange = await siteFetch(t, s.host, "/style.css", { headers: { range: "bytes=0-1", "if-range": '"old"' } });
    expect(ifRange.status).toBe(200);
  });

  test("HEAD answers headers and length without a body", async () => {
    const r = await siteFetch(t, s.host, "/big.bin", { method: "HEAD" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-length")).toBe(String(big.length));
    expect(r.headers.get("accept-ranges")).toBe("bytes");
    expect((await r.arrayBuffer()).byteLength).toBe(0);
    const small = await siteFetch(t, s.host, "/style.css", { method: "HEAD", headers: { "accept-encoding": "identity" } });
    expect(small.headers.get("content-length")).toBe(String(css.length));
    expect(small.headers.get("etag")).toMatch(/^"[0-9a-f]{40}"$/);
    expect((await small.arrayBuffer()).byteLength).toBe(0);
    const full = await siteFetch(t, s.host, "/big.bin");
    expect(new Uint8Array(await full.arrayBuffer())).toEqual(big);
  });

  test("static: a missing page gets the site's own 404.html with status 404", async () => {
    const r = await siteFetch(t, s.host, "/nope", { headers: { accept: "text/html" } });
    expect(r.status).toBe(404);
    expect(await r.text()).toBe("<h1>Custom not found</h1>");
  });

  test("excluded files are never served and never listed", async () => {
    for (const p of ["/.env", "/.env.production", "/node_modules/x/index.js", "/.workers/api.js", "/package-lock.json", "/setup.exe", "/install.sh"]) {
      const r = await siteFetch(t, s.host, p);
      expect(r.status).toBe(404);
      expect(await r.text()).toBe("<h1>Custom not found</h1>");
    }
  });

  test("spa: deep links get the index page, missing assets stay 404", async () => {
    const deep = await siteFetch(t, spa.host, "/users/42/settings");
    expect(deep.status).toBe(200);
    expect(await deep.text()).toContain("<div id=app>");
    const dotted = await siteFetch(t, spa.host, "/users/john.doe", { headers: { accept: "text/html,application/xhtml+xml" } });
    expect(dotted.status).toBe(200);
    const asset = await siteFetch(t, spa.host, "/missing.js", { headers: { accept: "*/*" } });
    expect(asset.status).toBe(404);
    const real = await siteFetch(t, spa.host, "/app.js");
    expect(await real.text()).toBe("console.log('app')");
  });

  test("traversal and encoding tricks never leave the site and never reach the disk", async () => {
    for (const p of ["/%2e%2e/%2e%2e/etc/passwd", "/../../etc/passwd", "/docs/..%2f..%2fetc/passwd", "/%252e%252e/index.html"]) {
      const r = await siteFetch(t, s.host, p);
      expect([400, 404]).toContain(r.status);
      expect(await r.text()).not.toContain("root:");
    }
    for (const p of ["/a%00b", "/docs%2fguide.html", "/docs%5cguide.html", "/%c0%ae%c0%ae/x", "/a//b"]) {
      expect((await siteFetch(t, s.host, p)).status).toBe(400);
    }
    // A dot segment resolved by the HTTP layer stays inside the site.
    const inside = await siteFetch(t, s.host, "/docs/%2e%2e/style.css", { headers: { "accept-encoding": "identity" } });
    expect(await inside.text()).toBe(css);
  });

  test("methods other than GET/HEAD are refused; /_pier/ is reserved", async () => {
    const r = await siteFetch(t, s.host, "/index.html", { method: "POST", body: "x" });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET, HEAD");
    expect((await siteFetch(t, s.host, "/_pier/gate/password")).status).toBe(404);
    expect(
      (
        await siteFetch(t, s.host, "/_pier/gate/password", {
          method: "POST",
          body: "password=x",
          headers: { "content-type": "application/x-www-form-urlencoded" },
        })
      ).status,
    ).toBe(404);
  });

  test("hostile and unknown Host headers", async () => {
    const unknown = await siteFetch(t, "nosuchsite123.localhost", "/");
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("No site is published");
    for (const host of ["evil.com/../x", "a b.localhost", `${"a".repeat(300)}.localhost`, "x.y.localhost", "-bad.localhost", "%2e.localhost"]) {
      const r = await siteFetch(t, host, "/");
      expect([400, 404]).toContain(r.status);
      expect(await r.text()).not.toContain("<h1>Hello</h1>");
    }
    // The preview host of a slug with no preview is not the main site.
    expect((await siteFetch(t, `preview-${s.pub.publicSlug}.localhost`, "/")).status).toBe(404);
    // Upper case and a trailing dot are the same host.
    expect((await siteFetch(t, `${s.pub.publicSlug.toUpperCase()}.LOCALHOST.`, "/")).status).toBe(200);
  });

  test("a new deploy switches atomically and the cache follows", async () => {
    const site = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "v1" },
        { path: "old.txt", bytes: "old" },
      ],
    });
    expect(await (await siteFetch(t, site.host, "/")).text()).toBe("v1");
    const d2 = await writeDeploy(t.pier.deps, site.pub.id, [{ path: "index.html", bytes: "v2" }]);
    expect(await (await siteFetch(t, site.host, "/")).text()).toBe("v1"); // written, not live
    activateDeploy(t.pier.deps, site.pub.id, d2.deployId);
    expect(await (await siteFetch(t, site.host, "/")).text()).toBe("v2");
    expect((await siteFetch(t, site.host, "/old.txt")).status).toBe(404);
    activateDeploy(t.pier.deps, site.pub.id, site.deployId); // rollback: old deploys stay
    expect(await (await siteFetch(t, site.host, "/old.txt")).text()).toBe("old");
    markUnpublished(t.pier.deps, site.pub.id);
    expect((await siteFetch(t, site.host, "/")).status).toBe(404);
  });

  test("a first publish that is still queued answers 404", async () => {
    const { createPublication } = await import("../../../src/features/publish/publications");
    const u = await t.user();
    const b = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "Q" } } });
    const pub = createPublication(t.pier.deps, { bucketId: b.body.data.bucket.id, accountId: u.accountId, kind: "main", slug: "queuedsite1" });
    expect((await siteFetch(t, "queuedsite1.localhost", "/")).status).toBe(404);
    await writeDeploy(t.pier.deps, pub.id, [{ path: "index.html", bytes: "x" }]);
    expect((await siteFetch(t, "queuedsite1.localhost", "/")).status).toBe(404);
  });

  test("site hosts never reach the API, and the API host never serves sites", async () => {
    const r = await siteFetch(t, s.host, "/api/v1/status");
    expect(r.headers.get("content-type")).not.toContain("json");
    const api = await fetch(`${t.url}/index.html`);
    expect(await api.text()).not.toContain("<h1>Hello</h1>");
  });
});
