// The guides every instance serves at /docs/guides: every guide in the repository is there, every
// link between them (and every /docs/guides link in Pier's source: error hints, pages, help)
// reaches an existing guide and heading, and the pages run no script.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { launchChromium } from "../../helpers/chromium";
import { dashboardUrl, expectAccessible, screenshot, signIn } from "../../helpers/dashboard";
import { startTestPier, type TestPier } from "../../helpers/pier";

const root = join(import.meta.dir, "../../..");
const guideFiles = readdirSync(join(root, "docs"))
  .filter((f) => f.endsWith(".md"))
  .map((f) => f.slice(0, -3));

const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });

let t: TestPier;
const pages = new Map<string, string>();
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t?.stop());

async function page(name: string): Promise<string> {
  let text = pages.get(name);
  if (text === undefined) {
    const res = await fetch(`${t.url}/docs/guides/${name}`);
    expect(res.status).toBe(200);
    text = await res.text();
    pages.set(name, text);
  }
  return text;
}

/** Every `/docs/guides/<name>#<id>` in `html` reaches a served guide that has that id. */
async function expectLinksResolve(html: string, where: string): Promise<number> {
  const links = [...html.matchAll(/\/docs\/guides\/([a-z0-9-]+)(?:#([\w-]+))?/g)];
  for (const [, name, id] of links) {
    const target = await page(name!).catch(() => "");
    expect({ where, name, found: target !== "" }).toEqual({ where, name, found: true });
    if (id) expect({ where, link: `${name}#${id}`, found: target.includes(` id="${id}"`) }).toEqual({ where, link: `${name}#${id}`, found: true });
  }
  return links.length;
}

describe("the guides at /docs/guides", () => {
  test("the index lists the README and every guide in docs/; each page renders with its title and runs no script", async () => {
    const res = await fetch(`${t.url}/docs/guides`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const index = await res.text();
    for (const name of ["readme", ...guideFiles]) expect(index).toContain(`href="/docs/guides/${name}"`);
    expect(index).toContain(">Files, uploads and version history</a>");

    const files = await fetch(`${t.url}/docs/guides/files`);
    expect(files.status).toBe(200);
    expect(files.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(files.headers.get("content-security-policy")).not.toContain("script-src");
    expect(files.headers.get("x-frame-options")).toBe("DENY");
    expect(files.headers.get("cache-control")).toBe("public, max-age=3600");
    const html = await files.text();
    expect(html).toContain("<title>Files, uploads and version history · Pier</title>");
    expect(html).toContain('<h2 id="forbidden-file-types">Forbidden file types</h2>');
    // The same guide by its file name, as links in a copy of the repository spell it.
    expect((await fetch(`${t.url}/docs/guides/files.md`)).status).toBe(200);

    for (const name of ["readme", ...guideFiles]) {
      const text = await page(name);
      // The guides' raw HTML (a <script> in an example) is text, never markup.
      expect({ name, script: /<script/i.test(text) }).toEqual({ name, script: false });
    }
  }, 60_000);

  test("every link between guides, and from the README, reaches a guide and its heading; other files are text", async () => {
    let checked = 0;
    for (const name of ["readme", ...guideFiles]) checked += await expectLinksResolve(await page(name), name);
    expect(checked).toBeGreaterThan(50);
    const readme = await page("readme");
    expect(readme).toContain('href="/docs/guides/deployment"');
    expect(readme).not.toContain('href="docs/');
    // deployment.md links the repository's Dockerfile, which an instance does not serve.
    const deployment = await page("deployment");
    expect(deployment).toContain("The Dockerfile builds the binary");
    expect(deployment).not.toContain("../Dockerfile");
  }, 60_000);

  test("every guide link Pier gives (error hints, dashboard pages, CLI and configuration help, MCP tools) resolves", async () => {
    const sources = [...walk(join(root, "src")), ...walk(join(root, "sites"))].filter((f) => /\.(ts|html|js)$/.test(f) && !f.endsWith(".gen.ts"));
    let checked = 0;
    for (const f of sources) checked += await expectLinksResolve(readFileSync(f, "utf8"), f.slice(root.length + 1));
    expect(checked).toBeGreaterThanOrEqual(20);
    // The README's configuration table is generated from the options' help (scripts/gen-docs.ts).
    expect(await page("readme")).toContain("/docs/guides/accounts#plans-file");
  }, 60_000);

  test("from the dashboard's Guides link to a guide in Chromium: accessible, readable at phone width", async () => {
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext()).newPage();
      await signIn(page, t, await t.user(), "/dashboard/buckets");
      await Promise.all([page.waitForURL(dashboardUrl(t, "/docs/guides")), page.click('nav[aria-label="Dashboard"] a[href="/docs/guides"]')]);
      await page.click('a[href="/docs/guides/site-rules"]');
      expect(new URL(page.url()).pathname).toBe("/docs/guides/site-rules");
      expect(await page.textContent("h1")).toBe("Site rules: _redirects, _headers and clean URLs");
      await expectAccessible(page);
      await screenshot(page, "guide-site-rules"); // asserts nothing scrolls sideways at 375 px
    } finally {
      await browser.close();
    }
  }, 60_000);

  test("an unknown guide is 404", async () => {
    const res = await fetch(`${t.url}/docs/guides/no-such-guide`);
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe("NOT_FOUND");
  });
});
