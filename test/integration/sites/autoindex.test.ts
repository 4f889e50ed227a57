import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setAutoIndexTemplate, validateAutoIndexTemplate } from "../../../src/features/publish/autoindex-templates";
import { ApiError } from "../../../src/core/errors";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";

let t: TestPier;
let s: PublishedSite;
const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
const readme = [
  "# Project <b>files</b>",
  "Some **bold** text and a [relative link](docs/) and [web](https://example.com/?a=1&b=2).",
  "<script>alert('xss')</script>",
  "<img src=x onerror=alert(1)>",
  "[click](javascript:alert(1)) ![pic](java&#x73;cript:alert(2))",
  "",
].join("\n\n");

beforeAll(async () => {
  t = await startTestPier();
  s = await publishSite(t, {
    title: "Shared files",
    files: [
      { path: "README.md", bytes: readme },
      { path: "photo.png", bytes: png },
      { path: "report.pdf", bytes: "%PDF-1.4" },
      { path: "docs/notes.txt", bytes: "n" },
      { path: "docs/README.txt", bytes: "plain <b>text</b> readme" },
      { path: ".env", bytes: "SECRET=1" },
      { path: "node_modules/a.js", bytes: "a" },
      { path: "bun.lockb", bytes: "l" },
    ],
  });
});
afterAll(() => t.stop());

describe("auto-index", () => {
  test("lists files with sizes and image thumbnails, folders first, excluded files absent", async () => {
    const r = await siteFetch(t, s.host, "/");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(r.headers.get("cache-control")).toBe("public, no-cache");
    const html = await r.text();
    expect(html).toContain('<a href="docs/">docs/</a>');
    expect(html).toContain('<img class="thumb" src="photo.png"');
    expect(html).toContain('<a href="report.pdf">report.pdf</a>');
    expect(html).toContain("12 B");
    expect(html.indexOf("docs/")).toBeLessThan(html.indexOf("photo.png"));
    for (const hidden of [".env", "node_modules", "bun.lockb"]) expect(html).not.toContain(hidden);
  });

  test("README.md is rendered below the listing; HTML in it is neutralised", async () => {
    const html = await (await siteFetch(t, s.host, "/")).text();
    expect(html.indexOf('<section class="pier-readme">')).toBeGreaterThan(html.indexOf('src="photo.png"'));
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toContain('<a href="docs/" rel="nofollow noopener">relative link</a>');
    expect(html).toContain('href="https://example.com/?a=1&amp;b=2"');
    expect(html).toContain("&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;");
    expect(html).not.toContain("<script>alert");
    expect(html).not.toMatch(/<img[^>]*onerror/i);
    expect(html).not.toMatch(/href="javascript:/i);
    expect(html).not.toMatch(/src="java&#x73;cript:/i);
    // The only script is the theme switch, allowed by hash in the CSP.
    expect(r0(html.match(/<script>/g))).toBe(1);
    const csp = (await siteFetch(t, s.host, "/")).headers.get("content-security-policy")!;
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
  });

  test("sub-directory listing with a README.txt shown as text, and a parent link", async () => {
    const html = await (await siteFetch(t, s.host, "/docs/")).text();
    expect(html).toContain('<a href="../">Parent folder</a>');
    expect(html).toContain('<a href="notes.txt">notes.txt</a>');
    expect(html).toContain("<pre>plain &lt;b&gt;text&lt;/b&gt; readme</pre>");
  });

  test("the listing has an ETag and answers 304", async () => {
    const r = await siteFetch(t, s.host, "/");
    const etag = r.headers.get("etag")!;
    expect(etag).toMatch(/^W\/"ai-[0-9a-f]{40}"$/);
    expect((await siteFetch(t, s.host, "/", { headers: { "if-none-match": etag } })).status).toBe(304);
  });

  test("a template without {{files}} is refused; macros with inner whitespace work", async () => {
    expect(() => validateAutoIndexTemplate("<html>{{title}}</html>")).toThrow(ApiError);
    let err: unknown = null;
    try {
      setAutoIndexTemplate(t.pier.deps, s.user.accountId, "<p>{{ title }}</p>");
    } catch (e) {
      err = e;
    }
    expect((err as ApiError).code).toBe("VALIDATION_FAILED");
    expect((err as ApiError).details).toMatchObject({ missing_macro: "files" });
    expect(await (await siteFetch(t, s.host, "/")).text()).not.toContain("<p>Shared files</p>"); // nothing stored
    expect(validateAutoIndexTemplate("{{files}}")).toBe("{{files}}");
    expect(validateAutoIndexTemplate("{{  files  }}")).toBe("{{  files  }}");
  });

  test("an account template is used for that account's sites", async () => {
    const other = await publishSite(t, { title: "Custom <look>", files: [{ path: "a.txt", bytes: "a" }] });
    setAutoIndexTemplate(
      t.pier.deps,
      other.user.accountId,
      "<main data-custom>{{ title }}|{{account_name}}|{{ account_logo }}|{{theme_switch}}|{{description}}|{{  files }}</main>",
    );
    const html = await (await siteFetch(t, other.host, "/")).text();
    expect(html).toStartWith("<main data-custom>Custom &lt;look&gt;|");
    expect(html).toContain('<a href="a.txt">a.txt</a>');
    expect(html).toContain('id="pier-theme"');
    expect(html).toContain('class="pier-logo"');
    // Other accounts keep the default template.
    expect(await (await siteFetch(t, s.host, "/")).text()).not.toContain("data-custom");
  });
});

const r0 = (m: RegExpMatchArray | null) => (m ? m.length : 0);
