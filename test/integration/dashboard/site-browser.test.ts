// The Site tab in real Chromium, clicked as a person would: publish a bucket and watch the build
// state change by itself, fetch the live site, switch to single-page mode, rename the slug,
// protect it with a password (refused, generated, copied, regenerated), make recipient links,
// unpublish; on the Free plan a password site is refused with the plan's choices as buttons,
// and the preview choice works. Each step is checked in the page AND through the REST API.
import { describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { dashboardUrl, expectAccessible, screenshot, signIn, submit, withDashboard } from "../../helpers/dashboard";
import type { TestPier, TestUser } from "../../helpers/pier";
import { createBucket } from "../../helpers/buckets";
import { siteFetch } from "../../helpers/sites";
import { syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
let browser: Browser;

withDashboard({}, (d) => ({ t, browser } = d));

const publication = async (u: TestUser, bucketId: string) => {
  const b = (await t.api("GET", `/api/v1/buckets/${bucketId}`, { key: u.key })).body.data.bucket;
  const list = (await t.api("GET", "/api/v1/publications?include_manifest=false", { key: u.key })).body.data.publications as any[];
  return {
    bucket: b,
    main: list.find((p) => p.bucket_id === bucketId && p.kind === "main"),
    preview: list.find((p) => p.bucket_id === bucketId && p.kind === "preview"),
  };
};
const hostOf = (url: string) => new URL(url).host.replace(/:\d+$/, "");

/** Let the build run, then wait for the page's own script to notice and show the settled state. */
async function buildAndWait(page: Page, text: string) {
  await t.pier.runner.drain();
  await page.waitForFunction((want) => document.querySelector("#main-status")?.textContent?.includes(want), text, { timeout: 15_000 });
  await page.waitForLoadState("load");
}

describe("the Site tab in Chromium", () => {
  test("publish with a live build state, fetch the site, mode, slug, password, recipient links, unpublish", async () => {
    const u = await t.user({ email: "site-owner@example.com", plan: "pro" });
    const b = await createBucket(t, u, { title: "Launch page" });
    await syncFiles(t, u.key, b.id, [textFile("index.html", "<h1>Launch</h1>", "text/html"), textFile("about/team.html", "<p>Team</p>", "text/html")]);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await ctx.grantPermissions(["clipboard-read", "clipboard-write"]);
    const page = await ctx.newPage();
    try {
      await signIn(page, t, u, `/dashboard/buckets/${b.id}/site`);
      expect(await page.textContent("main")).toContain("not published yet");
      expect(await page.getAttribute("nav.tabs a[aria-current=page]", "href")).toBe(`/dashboard/buckets/${b.id}/site`);
      await expectAccessible(page);

      // Publish: the page says it is building, then updates by itself once the build ran.
      await submit(page, "#publish button[type=submit]");
      expect(await page.textContent("main")).toContain("Publish accepted");
      expect(await page.textContent("#main-status")).toContain("Building");
      expect(await page.getAttribute("#main-status", "aria-live")).toBe("polite");
      await buildAndWait(page, "Published.");
      expect(new URL(page.url()).search).toBe("");
      const { main } = await publication(u, b.id);
      expect(main).toMatchObject({ status: "published", publish_state: "ready", access_mode: "public", site_mode: "static" });
      expect(await page.textContent("#site-url")).toBe(main.public_url);
      const home = await siteFetch(t, hostOf(main.public_url), "/");
      expect(home.status).toBe(200);
      expect(await home.text()).toContain("<h1>Launch</h1>");
      // The manifest lists the published files.
      const manifest = await page.textContent("#manifest");
      expect(manifest).toContain("index.html");
      expect(manifest).toContain("about/team.html");
      await expectAccessible(page);
      await screenshot(page, "site");

      // Single-page mode: a deep link now answers with the index page.
      expect((await siteFetch(t, hostOf(main.public_url), "/deep/link")).status).toBe(404);
      await page.selectOption("#mode-site_mode", "spa");
      await submit(page, "form[action$='/site/mode'] button");
      expect(await page.textContent("main")).toContain("Site mode saved");
      expect((await publication(u, b.id)).main.site_mode).toBe("spa");
      expect((await siteFetch(t, hostOf(main.public_url), "/deep/link")).status).toBe(200);

      // Slug: a bad one is refused next to the field and kept; a good one moves the site.
      await page.fill("#slug-public_slug", "No Spaces!");
      await submit(page, "form[action$='/site/slug'] button");
      expect(await page.textContent("#slug-public_slug-error")).toContain("lowercase");
      expect(await page.inputValue("#slug-public_slug")).toBe("No Spaces!");
      await page.fill("#slug-public_slug", "launch-page-renamed");
      await submit(page, "form[action$='/site/slug'] button");
      const renamed = (await publication(u, b.id)).main;
      expect(renamed.public_slug).toBe("launch-page-renamed");
      expect(await page.textContent("#site-url")).toBe(renamed.public_url);
      expect((await siteFetch(t, hostOf(renamed.public_url), "/")).status).toBe(200);
      expect(await page.textContent("main")).toContain("Address changed");
      // The same address again moves nothing, and says so.
      await submit(page, "form[action$='/site/slug'] button");
      expect(await page.textContent("main")).toContain("That is already the site's address");

      // Password: too short is refused next to the field; empty has one generated.
      await page.selectOption("#access-access_mode", "password");
      await page.fill("#access-password", "abc");
      await submit(page, "form[action$='/site/access'] button");
      expect(await page.textContent("#access-password-error")).toContain("at least 6");
      expect((await publication(u, b.id)).main.access_mode).toBe("public");
      await page.selectOption("#access-access_mode", "password");
      await submit(page, "form[action$='/site/access'] button");
      expect(await page.textContent("main")).toContain("Access saved");
      const access = (await t.api("GET", `/api/v1/publications/${main.id}/access`, { key: u.key })).body.data.access;
      expect(access.access_mode).toBe("password");
      const password = (await page.textContent("#site-password"))!.trim();
      expect(password).toBe(access.access_password);
      expect(await page.textContent("#share-text")).toContain(`Password: ${password}`);
      await page.click("button[data-copy=site-password]");
      await page.locator("button[data-copy=site-password]", { hasText: "Copied" }).waitFor({ timeout: 5000 });
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(password);
      const gated = await siteFetch(t, hostOf(renamed.public_url), "/");
      expect(await gated.text()).not.toContain("<h1>Launch</h1>");
      // Regenerate: a new password, shown and reported by the API.
      await submit(page, "form[action$='/site/password'] button");
      const fresh = (await page.textContent("#site-password"))!.trim();
      expect(fresh).not.toBe(password);
      expect((await t.api("GET", `/api/v1/publications/${main.id}/access`, { key: u.key })).body.data.access.access_password).toBe(fresh);
      await expectAccessible(page);

      // Recipients: require_email, then signed links for named people.
      await page.selectOption("#access-access_mode", "require_email");
      await submit(page, "form[action$='/site/access'] button");
      expect((await publication(u, b.id)).main.access_mode).toBe("require_email");
      await page.fill("#recipient-links-emails", "not-an-address");
      await submit(page, "#recipient-links button[type=submit]");
      expect(await page.textContent("#recipient-links-emails-error")).toContain("not an email address");
      expect(await page.inputValue("#recipient-links-emails")).toBe("not-an-address");
      await page.fill("#recipient-links-emails", "ada@example.com\nbob@example.com");
      await submit(page, "#recipient-links button[type=submit]");
      const links = await page.locator("ul.links code").allTextContents();
      expect(links.length).toBe(2);
      expect(links[0]).toStartWith(`${renamed.public_url}_pier/gate/recipient?token=`);
      const through = await siteFetch(t, hostOf(renamed.public_url), new URL(links[0]!).pathname + new URL(links[0]!).search);
      expect([302, 303]).toContain(through.status);
      // The links were shown once: a reload of the page does not show them again.
      await page.reload();
      expect(await page.locator("ul.links").count()).toBe(0);
      await screenshot(page, "site-recipients");

      // A preview with an expiry chosen from the list: the API reports that expiry.
      await page.selectOption("#preview-expires_in_minutes", "10080");
      await submit(page, "#preview button[type=submit]");
      expect(await page.textContent("main")).toContain("Preview accepted");
      const { preview } = await publication(u, b.id);
      const left = Date.parse(preview.expires_at) - t.clock.now().getTime();
      expect(Math.abs(left - 7 * 24 * 3600_000)).toBeLessThan(60_000);
      await t.pier.runner.drain();

      // Unpublish: the state says so, then settles by itself.
      await submit(page, "form[action$='/site/unpublish'] button");
      expect(await page.textContent("main")).toContain("Unpublishing");
      await buildAndWait(page, "Not published.");
      expect((await publication(u, b.id)).main.status).toBe("unpublished");
      expect((await siteFetch(t, hostOf(renamed.public_url), "/")).status).toBe(404);
    } finally {
      await ctx.close();
    }
  }, 60_000);

  test("on the Free plan a password site shows the plan's choices; the preview choice publishes a preview with what was typed", async () => {
    const u = await t.user({ email: "site-free@example.com", plan: "free" });
    const b = await createBucket(t, u, { title: "Free site" });
    await syncFiles(t, u.key, b.id, [textFile("dist/index.html", "<h1>Free</h1>", "text/html")]);
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const typedPassword = "typed for the preview 1";
    try {
      await signIn(page, t, u, `/dashboard/buckets/${b.id}/site`);
      await page.selectOption("#publish-access_mode", "password");
      await page.fill("#publish-password", typedPassword);
      await page.fill("#publish-publication_root_directory", "dist");
      await submit(page, "#publish button[type=submit]");
      // The typed password is kept on the server for the preview choice, never written into the page.
      expect(await page.content()).not.toContain(typedPassword);
      const choices = await page.textContent("#choices");
      expect(choices).toContain("Publish a temporary, noindex preview");
      expect(choices).toContain("Publish publicly instead");
      expect(choices).not.toContain("{"); // readable, not JSON
      expect((await publication(u, b.id)).main).toBeUndefined();
      await expectAccessible(page);
      await screenshot(page, "site-upgrade-choices");
      await submit(page, "#choices form[action$='/site/preview'] button");
      expect(await page.textContent("main")).toContain("Preview accepted");
      await t.pier.runner.drain();
      const { preview } = await publication(u, b.id);
      expect(preview).toMatchObject({ kind: "preview", access_mode: "password", publish_state: "ready" });
      expect(preview.expires_at).not.toBeNull();
      // The password and the folder typed before the refusal, not a generated password and the whole bucket.
      expect((await t.api("GET", `/api/v1/publications/${preview.id}/access`, { key: u.key })).body.data.access.access_password).toBe(typedPassword);
      expect(preview.publication_root_directory).toBe("dist");
    } finally {
      await ctx.close();
    }
  }, 30_000);

  test("a failed build shows its error; after fixing the files, Retry builds again", async () => {
    const u = await t.user({ email: "site-retry@example.com", plan: "pro" });
    const b = await createBucket(t, u, { title: "Empty for now" });
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    try {
      await signIn(page, t, u, `/dashboard/buckets/${b.id}/site`);
      await submit(page, "#publish button[type=submit]");
      await buildAndWait(page, "The last build failed: Nothing to publish");
      expect((await publication(u, b.id)).main.publish_state).toBe("failed");
      const lastPublished = page.locator("dt:text-is('Last published') + dd");
      expect(await lastPublished.textContent()).toBe("never"); // a failed build published nothing
      await syncFiles(t, u.key, b.id, [textFile("index.html", "<h1>Now</h1>", "text/html")]);
      await submit(page, "form[action$='/site/retry'] button");
      expect(await page.textContent("main")).toContain("The build runs again.");
      await buildAndWait(page, "Published.");
      const { main } = await publication(u, b.id);
      expect(main.publish_state).toBe("ready");
      expect(await lastPublished.textContent()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/);
      expect(await (await siteFetch(t, hostOf(main.public_url), "/")).text()).toContain("<h1>Now</h1>");
    } finally {
      await ctx.close();
    }
  }, 30_000);

  test("a failed preview shows its error and its own Retry, which builds the preview again", async () => {
    const u = await t.user({ email: "site-preview-retry@example.com", plan: "pro" });
    const b = await createBucket(t, u, { title: "Preview empty for now" });
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    try {
      await signIn(page, t, u, `/dashboard/buckets/${b.id}/site`);
      await submit(page, "#preview button[type=submit]");
      await t.pier.runner.drain();
      await page.reload();
      expect(await page.textContent("#preview-status")).toContain("The last build failed: Nothing to publish");
      expect((await publication(u, b.id)).preview.publish_state).toBe("failed");
      await syncFiles(t, u.key, b.id, [textFile("index.html", "<h1>Preview now</h1>", "text/html")]);
      await submit(page, "#preview form[action$='/site/retry'] button");
      expect(await page.textContent("main")).toContain("The preview's build runs again.");
      await t.pier.runner.drain();
      const { preview, main } = await publication(u, b.id);
      expect(main).toBeUndefined();
      expect(preview.publish_state).toBe("ready");
      expect(await (await siteFetch(t, hostOf(preview.public_url), "/")).text()).toContain("<h1>Preview now</h1>");
      await page.reload();
      expect(await page.locator("#preview form[action$='/site/retry']").count()).toBe(0);
      await expectAccessible(page);
    } finally {
      await ctx.close();
    }
  }, 30_000);

  test("a stale page acting on a bucket archived or deleted meanwhile says so", async () => {
    const u = await t.user({ email: "site-stale@example.com", plan: "pro" });
    const b = await createBucket(t, u, { title: "Stale" });
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    try {
      await signIn(page, t, u, `/dashboard/buckets/${b.id}/site`);
      expect((await t.api("POST", `/api/v1/buckets/${b.id}/archive`, { key: u.key })).status).toBe(200);
      await submit(page, "#publish button[type=submit]");
      expect(await page.textContent("[role=alert], .alert.error")).toMatch(/archived/i);
      expect((await publication(u, b.id)).main).toBeUndefined();
      await page.goBack();
      expect((await t.api("POST", `/api/v1/buckets/${b.id}/unarchive`, { key: u.key })).status).toBe(200);
      expect((await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation: `delete ${b.id}` } })).status).toBeLessThan(300);
      await submit(page, "#publish button[type=submit]");
      expect(await page.textContent("main")).toContain("permanently deleted");
    } finally {
      await ctx.close();
    }
  }, 30_000);

  test("another account's bucket gives the not-found page and its forms publish nothing", async () => {
    const owner = await t.user({ email: "site-victim@example.com", plan: "pro" });
    const theirs = await createBucket(t, owner, { title: "Secret site" });
    const intruder = await t.user({ email: "site-intruder@example.com" });
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    try {
      await signIn(page, t, intruder, "/dashboard/buckets");
      const res = await page.goto(dashboardUrl(t, `/dashboard/buckets/${theirs.id}/site`));
      expect(res!.status()).toBe(404);
      expect(await page.textContent("main")).not.toContain("Secret site");
      // A forged publish with the intruder's own valid token: not found, nothing published.
      const csrf = await page.getAttribute("nav form input[name=csrf]", "value");
      const posted = await page.evaluate(
        async ([url, token]) => (await fetch(url!, { method: "POST", body: new URLSearchParams({ csrf: token! }), redirect: "manual" })).status,
        [dashboardUrl(t, `/dashboard/buckets/${theirs.id}/site/publish`), csrf],
      );
      expect(posted).toBe(404);
      expect((await publication(owner, theirs.id)).main).toBeUndefined();
    } finally {
      await ctx.close();
    }
  }, 30_000);
});
