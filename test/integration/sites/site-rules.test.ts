// `_redirects`, `_headers` and clean URLs over real HTTP against published sites.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
let s: PublishedSite;

const redirects = `# a site moved from Netlify
/old-page        /new-page
/moved           /new-page         301
/see-other       /new-page         303
/temp            /new-page         307
/perm            /new-page         308
/blog/:year/:slug /posts/:year-:slug 301
/assets/*        /static/:splat    301
/store id=:id    /items/:id        301
/go              https://example.org/landing 302
/app/*           /app/index.html   200
/gone            /errors/gone.html 404
/index-shadow    /elsewhere        301
/style.css       /elsewhere.css    301
/forced.txt      /new-page         301!
/team            /about            200!
`;

const headers = `/*
  X-Frame-Options: DENY
  X-Site: all
/secure/*
  ! X-Frame-Options
  Content-Security-Policy: default-src 'self'
/style.css
  Cache-Control: public, max-age=31536000, immutable
  X-Site: css
/cookie
  Set-Cookie: a=b
/nosniff.txt
  X-Content-Type-Options: off
`;

beforeAll(async () => {
  t = await startTestPier();
  s = await publishSite(t, {
    files: [
      { path: "index.html", bytes: "<h1>Home</h1>" },
      { path: "new-page.html", bytes: "<h1>New page</h1>" },
      { path: "about.html", bytes: "<h1>About</h1>" },
      { path: "app/index.html", bytes: "<h1>App shell</h1>" },
      { path: "errors/gone.html", bytes: "<h1>This page is gone</h1>" },
      { path: "style.css", bytes: "body{}" },
      { path: "forced.txt", bytes: "never seen" },
      { path: "index-shadow.html", bytes: "<h1>Shadowing page</h1>" },
      { path: "secure/page.html", bytes: "<h1>Secure</h1>" },
      { path: "nosniff.txt", bytes: "text" },
      { path: "docs/index.html", bytes: "<h1>Docs</h1>" },
      { path: "docs.html", bytes: "<h1>Docs page beside the folder</h1>" },
      { path: "_redirects", bytes: redirects },
      { path: "_headers", bytes: headers },
    ],
  });
});
afterAll(() => t?.stop());

const get = (path: string, init = {}) => siteFetch(t, s.host, path, init);

describe("_redirects", () => {
  test.each([
    ["/old-page", 302, "/new-page"],
    ["/moved", 301, "/new-page"],
    ["/see-other", 303, "/new-page"],
    ["/temp", 307, "/new-page"],
    ["/perm", 308, "/new-page"],
    ["/blog/2024/hello", 301, "/posts/2024-hello"],
    ["/assets/img/logo.png", 301, "/static/img/logo.png"],
    ["/store?id=42", 301, "/items/42"],
    ["/go", 302, "https://example.org/landing"],
    ["/moved?utm=x", 301, "/new-page?utm=x"],
    ["/moved/", 301, "/new-page"],
  ])("%s answers %d to %s", async (path, status, location) => {
    const r = await get(path);
    expect(r.status).toBe(status);
    expect(r.headers.get("location")).toBe(location);
  });

  test("a query condition that is not met lets the request through", async () => {
    const r = await get("/store");
    expect(r.status).toBe(404);
  });

  test("a 200 rule serves another file of the site under the asked URL", async () => {
    const r = await get("/app/settings/profile");
    expect(r.status).toBe(200);
    expect(await r.text()).toBe("<h1>App shell</h1>");
    expect(r.headers.get("content-type")).toContain("text/html");
  });

  test("a 404 rule serves the named page with status 404", async () => {
    const r = await get("/gone");
    expect(r.status).toBe(404);
    expect(await r.text()).toBe("<h1>This page is gone</h1>");
  });

  test("an existing file wins over a rule without !; a forced rule wins over the file", async () => {
    const css = await get("/style.css");
    expect(css.status).toBe(200);
    expect(await css.text()).toBe("body{}");
    const shadow = await get("/index-shadow"); // served by clean URLs: content exists
    expect(shadow.status).toBe(200);
    expect(await shadow.text()).toBe("<h1>Shadowing page</h1>");
    const forced = await get("/forced.txt");
    expect(forced.status).toBe(301);
    expect(forced.headers.get("location")).toBe("/new-page");
    const team = await get("/team");
    expect(team.status).toBe(200);
    expect(await team.text()).toBe("<h1>About</h1>");
  });

  test("_redirects and _headers themselves are never served", async () => {
    for (const p of ["/_redirects", "/_headers"]) {
      const r = await get(p);
      expect(r.status).toBe(404);
      expect(await r.text()).not.toContain("/old-page");
    }
  });

  test("rules also apply on the preview host, which keeps its noindex header", async () => {
    const p = await publishSite(t, {
      kind: "preview",
      files: [
        { path: "index.html", bytes: "home" },
        { path: "_redirects", bytes: "/old /new 301\n" },
        { path: "_headers", bytes: "/*\n  X-Robots-Tag: all\n" },
      ],
    });
    const r = await siteFetch(t, p.host, "/old");
    expect(r.status).toBe(301);
    expect(r.headers.get("location")).toBe("/new");
    expect(r.headers.get("x-robots-tag")).toBe("noindex, nofollow");
  });

  test("on an spa site rules come before the fallback to the index page; paths no rule matches still fall back", async () => {
    const p = await publishSite(t, {
      siteMode: "spa",
      files: [
        { path: "index.html", bytes: "<h1>SPA shell</h1>" },
        { path: "_redirects", bytes: "/old/:lang/* /docs/:lang/:splat 301\n/legacy /app/settings 302\n" },
      ],
    });
    const moved = await siteFetch(t, p.host, "/old/en/a/b");
    expect(moved.status).toBe(301);
    expect(moved.headers.get("location")).toBe("/docs/en/a/b");
    // Asked again (the outcome is remembered): the same answer.
    expect((await siteFetch(t, p.host, "/old/en/a/b")).headers.get("location")).toBe("/docs/en/a/b");
    expect((await siteFetch(t, p.host, "/legacy?tab=2")).headers.get("location")).toBe("/app/settings?tab=2");
    const deep = await siteFetch(t, p.host, "/app/settings");
    expect(deep.status).toBe(200);
    expect(await deep.text()).toBe("<h1>SPA shell</h1>");
  });

  test("shadowing by a dynamic rule follows the files, the folder form and clean URLs, asked repeatedly and after a settings change", async () => {
    const p = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "home" },
        { path: "p/real.html", bytes: "real page" },
        { path: "p/folder/index.html", bytes: "folder index" },
        { path: "_redirects", bytes: "/p/* /moved 301\n" },
      ],
    });
    const expectations: Array<[string, number, string | null]> = [
      ["/p/real.html", 308, "/p/real"], // a file: the rule does not apply; clean URLs move it
      ["/p/real", 200, null], // clean URLs serve real.html: content exists
      ["/p/folder/", 200, null],
      ["/p/folder", 301, "/p/folder/"], // the folder rule, not the redirect rule
      ["/p/nothing", 301, "/moved"],
    ];
    for (let round = 0; round < 2; round++)
      for (const [path, status, location] of expectations) {
        const r = await siteFetch(t, p.host, path);
        expect([path, r.status, r.headers.get("location")]).toEqual([path, status, location]);
      }
    // Same deploy, clean URLs off: /p/real has no content any more, so the rule applies.
    const off = await t.api("PATCH", `/api/v1/publications/${p.pub.id}`, { key: p.user.key, body: { clean_urls: false } });
    expect(off.status).toBe(200);
    const real = await siteFetch(t, p.host, "/p/real");
    expect([real.status, real.headers.get("location")]).toEqual([301, "/moved"]);
    expect((await siteFetch(t, p.host, "/p/real.html")).status).toBe(200);
  });

  test("a rule never reveals a protected site: the gate answers first", async () => {
    const p = await publishSite(t, {
      access: "password",
      password: "correct horse battery",
      files: [
        { path: "index.html", bytes: "secret home" },
        { path: "_redirects", bytes: "/leak https://attacker.example/:splat 301\n/* /index.html 200\n" },
      ],
    });
    for (const path of ["/leak", "/anything"]) {
      const r = await siteFetch(t, p.host, path);
      expect(r.status).toBe(401);
      expect(r.headers.get("location")).toBeNull();
      expect(await r.text()).not.toContain("secret home");
    }
  });
});

describe("a Netlify-style documentation site", () => {
  let docs: PublishedSite;
  beforeAll(async () => {
    docs = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "<h1>Docs home</h1>" },
        { path: "docs/latest/index.html", bytes: "<h1>Latest</h1>" },
        { path: "docs/latest/install.html", bytes: "<h1>Install (latest)</h1>" },
        { path: "docs/v1/install.html", bytes: "<h1>Install v1</h1>" },
        { path: "search/index.html", bytes: "<h1>Search</h1>" },
        { path: "404.html", bytes: "<h1>Docs 404</h1>" },
        {
          path: "_redirects",
          bytes: `# Documentation site redirects
# Old URL scheme
/docs/current/*        /docs/latest/:splat            301
/guide/:section/:page  /docs/latest/:section/:page    301
/getting-started       /docs/latest/install            301
# Versioned API reference lives on the API host
/api/*                 https://api.example.org/:splat  301
# Search pages: query parameters
/search q=:query       /search/?q=:query               302
/s q=:query            /search/?q=:query               302
# Shortcut, forced even though the file exists
/docs/v1/install       /docs/latest/install            301!
# Everything under /docs/v0 is gone
/docs/v0/*             /404.html                       404
# Old single-page app section
/playground/*          /index.html                     200
`,
        },
      ],
    });
  });
  const cases: Array<[string, number, string | null, string | null]> = [
    ["/docs/current/install", 301, "/docs/latest/install", null],
    ["/docs/current/", 301, "/docs/latest/", null],
    ["/guide/setup/linux", 301, "/docs/latest/setup/linux", null],
    ["/getting-started", 301, "/docs/latest/install", null],
    ["/api/v2/users", 301, "https://api.example.org/v2/users", null],
    ["/s?q=hello%20world", 302, "/search/?q=hello%20world", null],
    ["/docs/v1/install", 301, "/docs/latest/install", null],
    ["/docs/v0/old/page", 404, null, "<h1>Docs 404</h1>"],
    ["/playground/deep/link", 200, null, "<h1>Docs home</h1>"],
    ["/docs/latest/install", 200, null, "<h1>Install (latest)</h1>"],
    ["/nowhere", 404, null, "<h1>Docs 404</h1>"],
  ];
  test.each(cases)("%s -> %d", async (path, status, location, body) => {
    const r = await siteFetch(t, docs.host, path);
    expect(r.status).toBe(status);
    if (location !== null) expect(r.headers.get("location")).toBe(location);
    if (body !== null) expect(await r.text()).toBe(body);
  });
});

describe("_headers", () => {
  test("blocks add up in order; a later block joins a header set by an earlier one", async () => {
    const r = await get("/style.css");
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    expect(r.headers.get("x-site")).toBe("all, css");
  });

  test("Cache-Control from _headers wins over Pier's default", async () => {
    expect((await get("/style.css")).headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect((await get("/about")).headers.get("cache-control")).toBe("public, no-cache");
  });

  test("! Name detaches a header an earlier block set", async () => {
    const r = await get("/secure/page.html");
    expect(r.headers.get("x-frame-options")).toBeNull();
    expect(r.headers.get("content-security-policy")).toBe("default-src 'self'");
    expect(r.headers.get("x-site")).toBe("all");
  });

  test("Pier's protective headers cannot be replaced", async () => {
    const r = await get("/nosniff.txt");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
  });

  test("Set-Cookie is not sent under the shared sites domain", async () => {
    const r = await get("/cookie");
    expect(r.headers.get("set-cookie")).toBeNull();
  });

  test("headers also apply to redirects and 404 answers of the site", async () => {
    const r = await get("/moved");
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    const missing = await get("/no-such-page");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-frame-options")).toBe("DENY");
  });
});

describe("clean URLs", () => {
  test("/about serves about.html; /about.html redirects (308) to /about, keeping the query", async () => {
    const r = await get("/about");
    expect(r.status).toBe(200);
    expect(await r.text()).toBe("<h1>About</h1>");
    const old = await get("/about.html?x=1");
    expect(old.status).toBe(308);
    expect(old.headers.get("location")).toBe("/about?x=1");
  });

  test("a folder keeps today's rules: /docs redirects to /docs/, which serves its index", async () => {
    const r = await get("/docs");
    expect(r.status).toBe(301);
    expect(r.headers.get("location")).toBe("/docs/");
    expect(await (await get("/docs/")).text()).toBe("<h1>Docs</h1>");
    // docs.html stays reachable under its own name: /docs would not serve it.
    expect((await get("/docs.html")).status).toBe(200);
  });

  test("clean_urls false (PATCH) turns both off at once; the publication shows the setting", async () => {
    const p = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "home" },
        { path: "about.html", bytes: "about" },
      ],
    });
    const off = await t.api("PATCH", `/api/v1/publications/${p.pub.id}`, { key: p.user.key, body: { clean_urls: false } });
    expect(off.status).toBe(200);
    expect(off.body.data.publication.clean_urls).toBe(false);
    expect((await siteFetch(t, p.host, "/about")).status).toBe(404);
    expect((await siteFetch(t, p.host, "/about.html")).status).toBe(200);
    const on = await t.api("PATCH", `/api/v1/publications/${p.pub.id}`, { key: p.user.key, body: { clean_urls: true } });
    expect(on.body.data.publication.clean_urls).toBe(true);
    expect((await siteFetch(t, p.host, "/about")).status).toBe(200);
  });
});

describe("destinations outside ASCII", () => {
  // A site moved from Netlify keeps its non-English URLs; a Location header only carries bytes,
  // so a destination written as Unicode must go out %-encoded, not fail the answer.
  test("a destination written in Unicode redirects, %-encoded (fixed, with a splat, and as a rewrite)", async () => {
    const site = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "home" },
        { path: "日本/index.html", bytes: "<h1>Japan</h1>" },
        { path: "_redirects", bytes: "/japan /日本/ 301\n/jp/* /日本/:splat 301\n/café /menu/café 302\n/nihon /日本/ 200\n" },
      ],
    });
    const cases: Array<[string, number, string]> = [
      ["/japan", 301, "/%E6%97%A5%E6%9C%AC/"],
      ["/jp/a/b", 301, "/%E6%97%A5%E6%9C%AC/a/b"],
      ["/caf%C3%A9", 302, "/menu/caf%C3%A9"],
    ];
    for (const [path, status, location] of cases) {
      const r = await siteFetch(t, site.host, path);
      expect(r.status).toBe(status);
      expect(r.headers.get("location")).toBe(location);
    }
    const rewrite = await siteFetch(t, site.host, "/nihon");
    expect(rewrite.status).toBe(200);
    expect(await rewrite.text()).toBe("<h1>Japan</h1>");
  });
});

describe("bad input: warnings with line numbers, the rest works", () => {
  test("each faulty line is reported on the publication and skipped", async () => {
    const p = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "home" },
        {
          path: "_redirects",
          bytes: [
            "/ok /index.html 301", // 1
            "/bad-status /x 418", // 2
            "/bad*pattern /x 301", // 3
            "/a /b 301", // 4
            "/b /a 301", // 5
            "/p/:id /q/:other 301", // 6
            "/proxy https://evil.example/ 200", // 7
            "/js javascript:alert(1) 302", // 8
            "/still-ok /index.html 302", // 9
          ].join("\n"),
        },
        { path: "_headers", bytes: "/*\n  Vary: *\n  Bad Header Line\n  X-Ok: yes\n  ! Content-Length\n" },
      ],
    });
    const pub = (await t.api("GET", `/api/v1/publications/${p.pub.id}`, { key: p.user.key })).body.data.publication;
    const rules = pub.site_rules;
    expect(rules.redirects).toBe(4);
    expect(rules.headers).toBe(1);
    const lines = (file: string) => rules.warnings.filter((w: any) => w.file === file).map((w: any) => w.line);
    expect(lines("_redirects")).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(lines("_headers")).toEqual([2, 3, 5]);
    expect(rules.warnings.find((w: any) => w.line === 4).message).toContain("loop");
    expect(rules.warnings.find((w: any) => w.line === 7).message).toContain("never proxies");
    expect((await siteFetch(t, p.host, "/still-ok")).headers.get("location")).toBe("/index.html");
    expect((await siteFetch(t, p.host, "/proxy")).status).toBe(404);
    expect((await siteFetch(t, p.host, "/js")).status).toBe(404);
    const home = await siteFetch(t, p.host, "/");
    expect(home.headers.get("x-ok")).toBe("yes");
    expect(home.headers.get("vary")).not.toBe("*");
  });

  test("a multi-megabyte _redirects file is cut at 2 MiB with a warning; the rules before the cut work", async () => {
    const line = "/from-%d /to-%d 301\n";
    let text = "";
    for (let i = 0; text.length < 3 * 1024 * 1024; i++) text += line.replaceAll("%d", String(i));
    const p = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "home" },
        { path: "_redirects", bytes: text },
      ],
    });
    const rules = (await t.api("GET", `/api/v1/publications/${p.pub.id}`, { key: p.user.key })).body.data.publication.site_rules;
    expect(rules.redirects).toBe(10_000);
    expect(rules.warnings.some((w: any) => w.message.includes("larger than 2 MiB"))).toBe(true);
    expect(rules.warnings.some((w: any) => w.message.includes("over the limits"))).toBe(true);
    expect((await siteFetch(t, p.host, "/from-9999")).headers.get("location")).toBe("/to-9999");
    expect((await siteFetch(t, p.host, "/from-10000")).status).toBe(404);
  });
});

describe("through the real publish path (bucket files, build job)", () => {
  test("the build compiles the bucket's rules files, reports them, and the site follows them", async () => {
    const u = await t.user();
    const id = await newBucket(t, u.key, "Rules via build");
    const files = {
      "index.html": "<h1>home</h1>",
      "about.html": "<h1>about</h1>",
      _redirects: "/old /about 301\n/broken /x 999\n",
      _headers: "/*\n  X-Built: yes\n",
    };
    for (const [path, text] of Object.entries(files)) {
      const r = await directUpload(t, u.key, id, textFile(path, text, path.endsWith(".html") ? "text/html; charset=utf-8" : "text/plain; charset=utf-8"));
      expect(r.status).toBeLessThan(300);
    }
    const r = await t.api("POST", `/api/v1/buckets/${id}/publication`, { key: u.key, body: { clean_urls: true } });
    expect(r.status).toBe(202);
    await t.pier.runner.drain();
    const pub = (await t.api("GET", `/api/v1/publications/${r.body.data.publication.id}`, { key: u.key })).body.data.publication;
    expect(pub.publish_state).toBe("ready");
    expect(pub.clean_urls).toBe(true);
    expect(pub.site_rules).toMatchObject({ redirects: 1, headers: 1, warnings: [{ file: "_redirects", line: 2 }] });
    expect(pub.published_files_count).toBe(2);
    const host = `${pub.public_slug}.${t.pier.deps.urls.sitesDomain}`;
    const old = await siteFetch(t, host, "/old");
    expect(old.status).toBe(301);
    expect(old.headers.get("location")).toBe("/about");
    const about = await siteFetch(t, host, "/about");
    expect(await about.text()).toBe("<h1>about</h1>");
    expect(about.headers.get("x-built")).toBe("yes");
    expect((await siteFetch(t, host, "/_redirects")).status).toBe(404);
  });
});

describe("through the MCP tools", () => {
  test("an agent's publish reports the rules and each skipped line in the tool result, and the site follows the rest", async () => {
    const u = await t.user();
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(t.pier.deps.urls.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${u.key}` } } }),
    );
    try {
      const json = (r: any) => JSON.parse(r.content[0].text);
      const id = json(await client.callTool({ name: "bucket_create", arguments: { title: "Rules via MCP" } })).bucket.id;
      const files = { "index.html": "<h1>home</h1>", _redirects: "/docs/:v/* /guide/:v/:splat 301\n/oops /x 299\n", _headers: "/*\n  X-Agent: yes\n" };
      for (const [path, content] of Object.entries(files)) {
        const w = await client.callTool({ name: "bucket_file_write", arguments: { bucket_id: id, path, content } });
        expect(w.isError).toBeFalsy();
      }
      const queued = json(await client.callTool({ name: "bucket_publish", arguments: { bucket_id: id } })).publication;
      await t.pier.runner.drain();
      const pub = json(await client.callTool({ name: "publication_get", arguments: { publication_id: queued.id } })).publication;
      expect(pub.site_rules).toMatchObject({ redirects: 1, headers: 1, warnings: [{ file: "_redirects", line: 2 }] });
      expect(pub.site_rules.warnings[0].message).toContain("299");
      const r = await siteFetch(t, `${pub.public_slug}.${t.pier.deps.urls.sitesDomain}`, "/docs/v2/install/linux");
      expect(r.status).toBe(301);
      expect(r.headers.get("location")).toBe("/guide/v2/install/linux");
      expect(r.headers.get("x-agent")).toBe("yes");
    } finally {
      await client.close();
    }
  });
});
