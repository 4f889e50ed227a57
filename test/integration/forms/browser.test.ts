// Built-in forms in real Chromium on published sites: a rectangle marked on an image and on the
// page, a submission with JavaScript turned off, an inline form sent in place (the real altcha
// widget solving its challenge), and the comments form of a password site seen by a second
// visitor together with the owner's public reply.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../../helpers/chromium";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, type PublishedSite } from "../../helpers/sites";

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><rect width="200" height="100" fill="#8ab"/></svg>';
const PAGE =
  '<!doctype html><html><head><title>Gallery</title><style>body{margin:0}</style></head><body><img id="pic" src="/pic.svg" width="400" height="200" alt="A picture" style="display:block;margin:100px 0 0 100px"></body></html>';

let t: TestPier;
let browser: Browser;
let site: PublishedSite;
let club: PublishedSite;
let strict: PublishedSite;
beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
  browser = await launchChromium();
  site = await publishSite(t, {
    files: [
      { path: "index.html", bytes: PAGE },
      { path: "pic.svg", bytes: SVG, contentType: "image/svg+xml" },
      { path: "ask.html", bytes: "<!doctype html><html><body><h1>Ask us</h1>{{PIER_FORM:question}}</body></html>" },
    ],
  });
  club = await publishSite(t, { access: "password", files: [{ path: "index.html", bytes: "<!doctype html><html><body><h1>Club</h1></body></html>" }] });
  strict = await publishSite(t, {
    files: [
      { path: "index.html", bytes: "<!doctype html><html><body><h1>Strict</h1></body></html>" },
      { path: "_headers", bytes: "/*\n  Content-Security-Policy: default-src 'none'; img-src 'self'\n" },
    ],
  });
  await configure(site, { forms: [{ name: "feedback" }, { name: "question" }] });
  await configure(strict, { forms: [{ name: "waitlist", widget_position: { desktop: "top-left", mobile: "top-left" } }] });
  await configure(club, { forms: [{ name: "comments", widget_position: { desktop: "top-right", mobile: "top-right" } }] });
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

async function configure(s: PublishedSite, forms: unknown) {
  const r = await t.api("PATCH", `/api/v1/buckets/${s.pub.bucketId}`, { key: s.user.key, body: { bucket: { metadata: { publication_forms: forms } } } });
  if (r.status !== 200) throw new Error(`configure: ${r.status}`);
}
const siteUrl = (s: PublishedSite, path: string) => `http://${s.host}:${t.pier.httpPort}${path}`;
const submissions = async (s: PublishedSite, form?: string) =>
  (await t.api("GET", `/api/v1/buckets/${s.pub.bucketId}/form_submissions${form ? `?form_name=${form}` : ""}`, { key: s.user.key })).body.data.form_submissions;

async function waitSolved(page: Page, scope: string) {
  await page.waitForFunction((sel) => (document.querySelector(`${sel} altcha-widget`) as any)?.getState?.() === "verified", scope, { timeout: 25_000 });
}

async function drag(page: Page, from: [number, number], to: [number, number]) {
  await page.mouse.move(from[0], from[1]);
  await page.mouse.down();
  await page.mouse.move(to[0], to[1], { steps: 6 });
  await page.mouse.up();
}

describe("forms in Chromium", () => {
  test("a rectangle marked on an image arrives in image pixels; one on the page in document ratios", async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    const page = await context.newPage();
    try {
      await page.goto(siteUrl(site, "/"));
      const widget = '[data-pier-widget="feedback"]';
      await page.click(`${widget} summary`);
      await page.click(`${widget} .pier-mark-start`);
      await page.waitForSelector(".pier-mark-layer");
      // The image is shown at twice its natural size (400 x 200 CSS px for 200 x 100 px) at 100,100.
      await drag(page, [140, 120], [340, 220]);
      expect(await page.textContent(`${widget} .pier-mark-note`)).toContain("on the image");
      expect(await page.locator(".pier-mark-layer").count()).toBe(0);
      await page.fill("#pier-feedback-message", "The corner looks off");
      await waitSolved(page, widget);
      t.clock.advance(3_000);
      await page.click(`${widget} button[type=submit]`);
      await page.waitForSelector(`${widget} .pier-form-status`);
      expect(await page.textContent(`${widget} .pier-form-status`)).toContain("Thank you");
      const [onImage] = await submissions(site, "feedback");
      expect(onImage.fields.message).toBe("The corner looks off");
      expect(onImage.context.document_selection).toEqual({
        version: 1,
        type: "rect",
        coordinates: [20, 10, 120, 60],
        coordinate_space: { width: 200, height: 100, unit: "image_pixel" },
        color: "#e11d48",
      });

      // Now on the page itself, away from the image.
      await page.click(`${widget} .pier-mark-start`);
      await drag(page, [700, 400], [900, 600]);
      expect(await page.textContent(`${widget} .pier-mark-note`)).toContain("on the page");
      await page.fill("#pier-feedback-message", "This empty area");
      await waitSolved(page, widget);
      t.clock.advance(3_000);
      await page.click(`${widget} button[type=submit]`);
      await page.waitForFunction(
        (sel) =>
          document.querySelector(`${sel} .pier-form-status`)?.textContent?.includes("Thank you") &&
          !document.querySelector(`${sel} button[type=submit]`)?.hasAttribute("disabled"),
        widget,
      );
      const onPage = (await submissions(site, "feedback")).find((s: { fields: { message: string } }) => s.fields.message === "This empty area");
      const sel = onPage.context.document_selection;
      expect(sel.coordinate_space).toEqual({ width: 1, height: 1, unit: "document_ratio" });
      const width = await page.evaluate(() => Math.max(document.documentElement.scrollWidth, document.documentElement.clientWidth));
      const height = await page.evaluate(() => Math.max(document.documentElement.scrollHeight, document.documentElement.clientHeight));
      expect(sel.coordinates[0]).toBeCloseTo(700 / width, 2);
      expect(sel.coordinates[1]).toBeCloseTo(400 / height, 2);
      expect(sel.coordinates[2]).toBeCloseTo(900 / width, 2);
      expect(sel.coordinates[3]).toBeCloseTo(600 / height, 2);
    } finally {
      await context.close();
    }
  });

  test("with JavaScript turned off the floating form posts normally and comes back to the page", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1200, height: 800 } });
    const page = await context.newPage();
    try {
      await page.goto(siteUrl(site, "/"));
      expect(await page.locator(".pier-sent").count()).toBe(0);
      // No script ran: the marking tool stays hidden, the panel is a plain <details>.
      expect(await page.isVisible('[data-pier-widget="feedback"] .pier-mark-start')).toBe(false);
      await page.click('[data-pier-widget="feedback"] summary');
      await page.fill("#pier-feedback-message", "sent without script");
      t.clock.advance(3_000);
      await Promise.all([page.waitForURL(/pier_form=sent/), page.click('[data-pier-widget="feedback"] button[type=submit]')]);
      expect(new URL(page.url()).pathname).toBe("/");
      // The page says it was sent, though no script runs to say so.
      expect(await page.getByRole("status").filter({ hasText: "Thank you: your message was sent." }).isVisible()).toBe(true);
      expect((await submissions(site, "feedback")).some((s: { fields: { message: string } }) => s.fields.message === "sent without script")).toBe(true);
    } finally {
      await context.close();
    }
  });

  test("an inline {{PIER_FORM:question}} form is sent in place", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
    const page = await context.newPage();
    try {
      await page.goto(siteUrl(site, "/ask"));
      expect(await page.locator('[data-pier-widget="question"]').count()).toBe(0);
      await page.fill("#pier-question-question", "Do you ship abroad?");
      await waitSolved(page, 'form[data-pier-form="question"]');
      t.clock.advance(3_000);
      await page.click('form[data-pier-form="question"] button[type=submit]');
      await page.waitForSelector('form[data-pier-form="question"] .pier-form-status');
      expect(await page.textContent('form[data-pier-form="question"] .pier-form-status')).toContain("Thank you");
      expect(page.url()).toBe(siteUrl(site, "/ask"));
      const [q] = await submissions(site, "question");
      expect(q.fields.question).toBe("Do you ship abroad?");
      expect(q.context.document_path).toBe("/ask");
    } finally {
      await context.close();
    }
  });

  test("a password site's comments: one visitor writes, the owner replies in public, a second visitor sees both", async () => {
    const signInTo = async (page: Page) => {
      await page.goto(siteUrl(club, "/"));
      await page.fill("#password", club.password!);
      await Promise.all([page.waitForSelector('[data-pier-widget="comments"]'), page.click("button[type=submit]")]);
    };
    const first = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    const second = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    try {
      const a = await first.newPage();
      await signInTo(a);
      await a.click('[data-pier-widget="comments"] summary');
      await a.fill("#pier-comments-name", "Ada");
      await a.fill("#pier-comments-message", "<img src=x onerror=alert(1)> Great club");
      await waitSolved(a, '[data-pier-widget="comments"]');
      t.clock.advance(3_000);
      await a.click('[data-pier-widget="comments"] button[type=submit]');
      await a.waitForSelector('[data-pier-widget="comments"] .pier-form-status');
      expect(await a.textContent('[data-pier-widget="comments"] .pier-form-status')).toContain("Thank you");

      const [comment] = await submissions(club, "comments");
      const reply = await t.api("POST", `/api/v1/buckets/${club.pub.bucketId}/form_submissions/${comment.id}/reply`, {
        key: club.user.key,
        body: { message: "Welcome, Ada", audience: "public" },
      });
      expect(reply.status).toBe(201);
      await t.api("POST", `/api/v1/buckets/${club.pub.bucketId}/form_submissions/${comment.id}/reply`, {
        key: club.user.key,
        body: { message: "team-only note", audience: "team" },
      });

      const b = await second.newPage();
      await signInTo(b);
      await b.click('[data-pier-widget="comments"] summary');
      await b.waitForSelector(".pier-comment");
      const shown = (await b.textContent(".pier-comments"))!;
      expect(shown).toContain("Ada");
      expect(shown).toContain("<img src=x onerror=alert(1)> Great club"); // as text, not markup
      expect(shown).toContain("Welcome, Ada");
      expect(shown).not.toContain("team-only note");
      expect(await b.locator(".pier-comments img").count()).toBe(0);
    } finally {
      await first.close();
      await second.close();
    }
  });

  test("a site's own strict CSP is widened just enough: the floating form is styled, solves its challenge and sends", async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    const page = await context.newPage();
    try {
      const res = await page.goto(siteUrl(strict, "/"));
      const csp = res!.headers()["content-security-policy"]!;
      expect(csp).toStartWith("default-src 'none'; img-src 'self'; script-src 'self'");
      expect(csp).not.toContain("cloudflare");
      const box = await page.locator('[data-pier-widget="waitlist"]').boundingBox();
      expect(box!.x).toBeLessThan(40); // the style block ran: fixed at top-left
      expect(box!.y).toBeLessThan(40);
      await page.click('[data-pier-widget="waitlist"] summary');
      expect((await page.locator('[data-pier-widget="waitlist"] input[name="_pier_website"]').boundingBox())!.x).toBeLessThan(-1000); // the honeypot stays off-screen
      await page.fill("#pier-waitlist-email", "strict@example.com");
      await waitSolved(page, '[data-pier-widget="waitlist"]');
      t.clock.advance(3_000);
      await page.click('[data-pier-widget="waitlist"] button[type=submit]');
      await page.waitForSelector('[data-pier-widget="waitlist"] .pier-form-status');
      expect(await page.textContent('[data-pier-widget="waitlist"] .pier-form-status')).toContain("Thank you");
      expect((await submissions(strict, "waitlist"))[0].fields.email).toBe("strict@example.com");
    } finally {
      await context.close();
    }
  });
});
