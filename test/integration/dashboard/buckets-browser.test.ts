// The dashboard's buckets pages in real Chromium, clicked as a person would: sign in, see the
// buckets, create one, open it, see its files, turn the receiving address on, archive,
// unarchive, delete with the phrase; a reload after a form POST does not repeat it; another
// account's bucket is the normal not-found page. Each page is checked with axe and at 375 px
// (PIER_TEST_SCREENSHOTS=1 saves screenshots under test-results/screenshots/ for review).
import { describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { dashboardUrl, expectAccessible, screenshot, signIn, submit, withDashboard } from "../../helpers/dashboard";
import type { TestPier, TestUser } from "../../helpers/pier";
import { createBucket } from "../../helpers/buckets";
import { syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
let browser: Browser;

withDashboard({}, (d) => ({ t, browser } = d));

const api = (path: string) => dashboardUrl(t, path);
const bucketCount = async (u: TestUser) =>
  (await t.api("GET", "/api/v1/buckets?archived=true", { key: u.key })).body.data.buckets.length +
  (await t.api("GET", "/api/v1/buckets", { key: u.key })).body.data.buckets.length;

describe("the buckets pages in Chromium", () => {
  test("sign in, create, open, files, address on, archive, unarchive, delete with the phrase", async () => {
    const u = await t.user({ email: "dash-owner@example.com" });
    const existing = await createBucket(t, u, { title: "Existing <b>site</b>" });
    await syncFiles(t, u.key, existing.id, [textFile("index.html", "<h1>hi</h1>", "text/html"), textFile("docs/guide.md", "# Guide", "text/markdown")]);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    try {
      await signIn(page, t, u, "/dashboard/buckets");
      // Titles are shown as text, never as markup.
      expect(await page.locator("tbody tr").first().textContent()).toContain("Existing <b>site</b>");
      await expectAccessible(page);
      await screenshot(page, "buckets-home");

      // Search by title: nothing matches, then the bucket again.
      await page.fill("#q", "nothing like it");
      await submit(page, "form[role=search] button");
      expect(await page.textContent("main")).toContain("No bucket title contains");
      await page.fill("#q", "existing");
      await submit(page, "form[role=search] button");
      expect(await page.locator("tbody tr").count()).toBe(1);

      // An empty title is refused next to the field, and nothing is created.
      const before = await bucketCount(u);
      await page.fill("#title", "   ");
      await submit(page, "#create-bucket button[type=submit]");
      expect(await page.textContent("#title-error")).toContain("Give the bucket a title");
      expect(await page.getAttribute("#title", "aria-invalid")).toBe("true");
      expect(await bucketCount(u)).toBe(before);

      // Create: POST, then a redirect to the new bucket's page.
      await page.fill("#title", "Holiday photos");
      await submit(page, "#create-bucket button[type=submit]");
      expect(new URL(page.url()).pathname).toMatch(/^\/dashboard\/buckets\/bkt_/);
      expect(await page.textContent("h1")).toBe("Holiday photos");
      expect(await page.textContent("[role=status]")).toContain("Bucket created.");
      // A reload shows the page again and does not create a second bucket.
      await page.reload();
      expect(await bucketCount(u)).toBe(before + 1);

      // The files of the bucket with content: listed, and the folder part filters.
      await page.goto(api(`/dashboard/buckets/${existing.id}`));
      const files = await page.textContent("#files");
      expect(files).toContain("index.html");
      expect(files).toContain("guide.md");
      await submit(page, "#files a[href*='path=docs']");
      expect(await page.locator("#files tbody tr").count()).toBe(1);
      await expectAccessible(page);
      await screenshot(page, "bucket");

      // The receiving address: on, shown to copy; the API reports the same state.
      await submit(page, "#inbound button[type=submit]");
      const address = (await page.textContent("#address"))!.trim();
      expect(address).toMatch(/^existing-b-site-b-[a-z0-9]{10}@/);
      const viaApi = (await t.api("GET", `/api/v1/buckets/${existing.id}`, { key: u.key })).body.data.bucket.inbound_email;
      expect(viaApi.enabled).toBe(true);
      expect(viaApi.address).toBe(address);
      // The copy button (shown only when the script runs) puts the address on the clipboard.
      await ctx.grantPermissions(["clipboard-read", "clipboard-write"]);
      await page.click("button[data-copy=address]");
      await page.locator("button[data-copy=address]", { hasText: "Copied" }).waitFor({ timeout: 5000 });
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(address);

      // Archive; a reload of the result does not archive twice (it says "archived" once, as a GET).
      await submit(page, "form[action$='/archive'] button");
      expect(await page.textContent("main")).toContain("Bucket archived");
      expect((await t.api("GET", `/api/v1/buckets/${existing.id}`, { key: u.key })).body.data.bucket.archived).toBe(true);
      const archivedAt = (await t.api("GET", `/api/v1/buckets/${existing.id}`, { key: u.key })).body.data.bucket.archived_at;
      await page.reload();
      expect((await t.api("GET", `/api/v1/buckets/${existing.id}`, { key: u.key })).body.data.bucket.archived_at).toBe(archivedAt);
      // The archived filter on the home page lists it.
      await page.goto(api("/dashboard/buckets?archived=1"));
      expect(await page.textContent("tbody")).toContain("Existing <b>site</b>");
      await page.goto(api(`/dashboard/buckets/${existing.id}`));
      await submit(page, "form[action$='/unarchive'] button");
      expect(await page.textContent("main")).toContain("Bucket unarchived");

      // Delete: a wrong phrase is refused next to the field and kept; the right one deletes.
      await page.fill("#confirmation", "delete it");
      await submit(page, "form[action$='/delete'] button");
      expect(await page.textContent("#confirmation-error")).toContain("Type the phrase exactly");
      expect(await page.inputValue("#confirmation")).toBe("delete it");
      expect((await t.api("GET", `/api/v1/buckets/${existing.id}`, { key: u.key })).status).toBe(200);
      await page.fill("#confirmation", `delete ${existing.id}`);
      await submit(page, "form[action$='/delete'] button");
      expect(new URL(page.url()).pathname).toBe("/dashboard/buckets");
      expect(await page.textContent("[role=status]")).toContain("The bucket was deleted.");
      expect((await t.api("GET", `/api/v1/buckets/${existing.id}`, { key: u.key })).status).toBe(404);
      // The deleted bucket's page says so.
      const gone = await page.goto(api(`/dashboard/buckets/${existing.id}`));
      expect(gone!.status()).toBe(404);
      expect(await page.textContent("main")).toContain("was permanently deleted");
    } finally {
      await ctx.close();
    }
  }, 90_000);

  test("another account's bucket is the normal not-found page, and its forms change nothing", async () => {
    const owner = await t.user({ email: "dash-victim@example.com" });
    const theirs = await createBucket(t, owner, { title: "Private plans" });
    const intruder = await t.user({ email: "dash-intruder@example.com" });
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    try {
      await signIn(page, t, intruder, "/dashboard/buckets");
      const res = await page.goto(api(`/dashboard/buckets/${theirs.id}`));
      expect(res!.status()).toBe(404);
      expect(await page.textContent("h1")).toBe("Not found");
      expect(await page.textContent("main")).not.toContain("Private plans");
      // Same not-found page as an id that never existed.
      const none = await page.goto(api("/dashboard/buckets/bkt_doesnotexist"));
      expect(none!.status()).toBe(404);
      // Posting the archive form with the intruder's own valid CSRF token still finds nothing.
      const csrf = await page.getAttribute("input[name=csrf]", "value");
      const post = await page.request.post(api(`/dashboard/buckets/${theirs.id}/archive`), { form: { csrf: csrf! }, maxRedirects: 0 });
      expect(post.status()).toBe(404);
      expect((await t.api("GET", `/api/v1/buckets/${theirs.id}`, { key: owner.key })).body.data.bucket.archived).toBe(false);
    } finally {
      await ctx.close();
    }
  }, 60_000);
});
