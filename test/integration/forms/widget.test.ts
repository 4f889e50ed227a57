// Hosted forms in a site's pages: inline at the macros, floating elsewhere at the configured
// positions; a plain (no-JS) post of the rendered form; in Chromium the floating widget sits at
// its corner on desktop and mobile widths and sends in place.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { launchChromium } from "../../helpers/chromium";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";

let t: TestPier;
let site: PublishedSite;
let browser: Browser;
const PAGE = "<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1></body></html>";
beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
  site = await publishSite(t, {
    files: [
      { path: "index.html", bytes: PAGE },
      { path: "contact.html", bytes: "<!doctype html><html><body><h1>Write to us</h1>{{PIER_FORM:contact}}</body></html>" },
      { path: "all.html", bytes: "<!doctype html><html><body>{{PIER_FORM}}</body></html>" },
      { path: "style.css", bytes: "h1{color:red}" },
      { path: "404.html", bytes: "<!doctype html><html><body><h1>Lost?</h1></body></html>" },
      { path: "_headers", bytes: "/*\n  Cache-Control: public, max-age=604800\n" },
    ],
  });
  const r = await t.api("PATCH", `/api/v1/buckets/${site.pub.bucketId}`, {
    key: site.user.key,
    body: {
      bucket: {
        metadata: {
          publication_forms: {
            forms: [
              { name: "contact", widget_position: { desktop: "top-left", mobile: "bottom-center" } },
              { name: "waitlist" },
              { name: "question", hosted: false },
            ],
          },
        },
      },
    },
  });
  expect(r.status).toBe(200);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

const html = async (path: string) => (await siteFetch(t, site.host, path)).text();

describe("forms in pages", () => {
  test("floating on ordinary pages at the configured positions; hosted: false renders nothing", async () => {
    const page = await html("/");
    expect(page).toContain('data-pier-widget="contact"');
    expect(page).toContain("pier-d-top-left pier-m-bottom-center");
    expect(page).toContain('data-pier-widget="waitlist"');
    expect(page).toContain("pier-d-bottom-right pier-m-bottom-right");
    expect(page).not.toContain('data-pier-form="question"');
    expect(page).toContain('<script src="/_pier/forms.js" defer></script><script type="module" src="/_pier/altcha.js"></script></body>');
    // The proof-of-work widget comes from the site host, never a CDN; no Turnstile unless asked for.
    expect(page).toContain('<altcha-widget challenge="/_pier/form/challenge"');
    expect(page).not.toContain("challenges.cloudflare.com");
    // Assets are untouched.
    expect(await html("/style.css")).toBe("h1{color:red}");
  });

  test("{{PIER_FORM:contact}} renders contact inline and suppresses its floating copy; {{PIER_FORM}} renders all hosted forms inline", async () => {
    const contact = await html("/contact");
    expect(contact).not.toContain("{{PIER_FORM");
    expect(contact).not.toContain('data-pier-widget="contact"');
    expect(contact).toContain('data-pier-form="contact"');
    expect(contact).toContain('data-pier-widget="waitlist"');
    const all = await html("/all");
    expect(all).not.toContain("data-pier-widget=");
    expect(all).toContain('data-pier-form="contact"');
    expect(all).toContain('data-pier-form="waitlist"');
  });

  test("the site's own 404 page is an HTML page like the others: it gets the floating forms, and stays a 404", async () => {
    const r = await siteFetch(t, site.host, "/no/such/page");
    expect(r.status).toBe(404);
    const body = await r.text();
    expect(body).toContain("<h1>Lost?</h1>");
    expect(body).toContain('data-pier-widget="contact"');
    expect(body).toContain('name="_pier_return" value="/no/such/page"');
  });

  test("a page carrying a form is never cached past its fill timer, whatever _headers asks; other files keep it", async () => {
    const page = await siteFetch(t, site.host, "/contact");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("_pier_started");
    expect(page.headers.get("cache-control")).toBe("public, no-cache");
    expect((await siteFetch(t, site.host, "/style.css")).headers.get("cache-control")).toBe("public, max-age=604800");
  });

  test("a site without forms keeps its bytes and its ETag / 304", async () => {
    const plain = await publishSite(t, { files: [{ path: "index.html", bytes: PAGE }] });
    const r = await siteFetch(t, plain.host, "/");
    expect(await r.text()).toBe(PAGE);
    const etag = r.headers.get("etag")!;
    expect(etag).toBeTruthy();
    expect((await siteFetch(t, plain.host, "/", { headers: { "if-none-match": etag } })).status).toBe(304);
  });

  test("without JavaScript: the rendered form posts (after a person's fill time) and redirects back", async () => {
    const page = await html("/contact");
    const started = page.match(/name="_pier_started" value="([^"]+)"/)![1]!;
    t.clock.advance(3_000);
    const r = await siteFetch(t, site.host, "/_pier/form/contact", {
      method: "POST",
      body: new URLSearchParams({
        email: "nojs@example.com",
        message: "plain post",
        _pier_started: started,
        _pier_website: "",
        _pier_return: "/contact",
      }).toString(),
      headers: { origin: `http://${site.host}`, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/contact?pier_form=sent");
  });

  test("Chromium: the widget sits top-left on desktop, bottom-center at phone width, and sends in place", async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    const page = await context.newPage();
    try {
      await page.goto(`http://${site.host}:${t.pier.httpPort}/`);
      const box = await page.locator('[data-pier-widget="contact"]').boundingBox();
      expect(box!.x).toBeLessThan(40);
      expect(box!.y).toBeLessThan(40);
      const wait = await page.locator('[data-pier-widget="waitlist"]').boundingBox();
      expect(wait!.x + wait!.width).toBeGreaterThan(1100);
      expect(wait!.y + wait!.height).toBeGreaterThan(700);

      await page.setViewportSize({ width: 390, height: 800 });
      const mobile = await page.locator('[data-pier-widget="contact"]').boundingBox();
      expect(Math.abs(mobile!.x + mobile!.width / 2 - 195)).toBeLessThan(10);
      expect(mobile!.y + mobile!.height).toBeGreaterThan(740);

      await page.setViewportSize({ width: 1200, height: 800 });
      await page.click('[data-pier-widget="contact"] summary');
      await page.fill("#pier-contact-email", "js@example.com");
      await page.fill("#pier-contact-message", "sent in place");
      // The altcha widget solves its challenge in the browser once a field has focus.
      await page.waitForFunction(() => (document.querySelector('[data-pier-widget="contact"] altcha-widget') as any)?.getState?.() === "verified", null, {
        timeout: 25_000,
      });
      t.clock.advance(3_000);
      await page.click('[data-pier-widget="contact"] button[type=submit]');
      await page.waitForSelector('[data-pier-widget="contact"] .pier-form-status');
      expect(await page.textContent('[data-pier-widget="contact"] .pier-form-status')).toContain("Thank you");
      expect(page.url()).toBe(`http://${site.host}:${t.pier.httpPort}/`);
      const list = await t.api("GET", `/api/v1/buckets/${site.pub.bucketId}/form_submissions`, { key: site.user.key });
      const sent = list.body.data.form_submissions.find((s: { fields: { email?: string } }) => s.fields.email === "js@example.com");
      expect(sent.context.document_path).toBe("/");
    } finally {
      await context.close();
    }
  });
});
