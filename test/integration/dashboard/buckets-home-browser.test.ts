// The buckets home's tags, templates and bulk archive, and a background delete followed live,
// in real Chromium: each step checked on the page and through the REST API. The home page's
// query count does not grow with the number of buckets listed (no query per row).
import { describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { dashboardUrl, expectAccessible, screenshot, signIn, submit, withDashboard } from "../../helpers/dashboard";
import type { TestPier, TestUser } from "../../helpers/pier";
import { createBucket } from "../../helpers/buckets";
import { publishSite } from "../../helpers/sites";

let t: TestPier;
let browser: Browser;

// A tiny sync limit: a bucket with a few variables is deleted in the background.
withDashboard({ bucketDeleteSyncLimit: 3 }, (d) => ({ t, browser } = d));

const api = (path: string) => dashboardUrl(t, path);
const bucketOf = async (u: TestUser, id: string) => (await t.api("GET", `/api/v1/buckets/${id}`, { key: u.key })).body.data.bucket;

/** SQL statements prepared while `fn` runs (drizzle prepares one per query). */
async function countQueries(fn: () => Promise<unknown>): Promise<number> {
  const db = t.pier.deps.sqlite;
  const prepare = db.prepare.bind(db);
  let n = 0;
  db.prepare = ((sql: string, ...rest: unknown[]) => {
    n++;
    return (prepare as (...a: unknown[]) => ReturnType<typeof db.prepare>)(sql, ...rest);
  }) as typeof db.prepare;
  try {
    await fn();
  } finally {
    db.prepare = prepare;
  }
  return n;
}

describe("the buckets home in Chromium", () => {
  test("tags shown and filtered, create from a template, bulk archive with a summary", async () => {
    const u = await t.user({ email: "home-owner@example.com" });
    const site = await publishSite(t, { user: u, title: "Live site", files: [{ path: "index.html", bytes: "<h1>hi</h1>", contentType: "text/html" }] });
    const blog = await createBucket(t, u, { title: "Blog", tag_paths: ["website", "client/acme"] });
    const notes = await createBucket(t, u, { title: "Notes", tag_paths: ["internal"] });
    const scratch = await createBucket(t, u, { title: "Scratch" });
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    try {
      await signIn(page, t, u, "/dashboard/buckets");
      // Tags are shown on their rows; a tag links to the list filtered by it.
      const blogRow = page.locator("tbody tr", { hasText: "Blog" });
      expect(await blogRow.textContent()).toContain("client/acme");
      await submit(page, "tbody tr a.tag:text('website')");
      expect(new URL(page.url()).searchParams.get("tag")).toBe("website");
      expect(await page.locator("tbody tr").count()).toBe(1);
      expect(await page.inputValue("#tag")).toBe("website");
      // The tag select: another tag; the API's tag filter gives the same buckets.
      await page.selectOption("#tag", "internal");
      await submit(page, "form[role=search] button");
      expect(await page.locator("tbody tr").allTextContents()).toEqual([expect.stringContaining("Notes")]);
      const viaApi = await t.api("GET", "/api/v1/buckets?tag=internal", { key: u.key });
      expect(viaApi.body.data.buckets.map((b: { id: string }) => b.id)).toEqual([notes.id]);
      await page.selectOption("#tag", "");
      await submit(page, "form[role=search] button");
      expect(await page.locator("tbody tr").count()).toBe(4);

      // Bulk archive: one live site is refused (unpublish first), one archived meanwhile through
      // the API counts as already archived, one is archived now.
      await page.check(`#pick-${blog.id}`);
      await page.check(`#pick-${scratch.id}`);
      await page.check(`#pick-${site.pub.bucketId}`);
      await t.api("POST", `/api/v1/buckets/${scratch.id}/archive`, { key: u.key });
      await submit(page, "button[form=bulk]");
      const summary = await page.textContent("#bulk-summary");
      expect(summary).toContain("1 bucket(s) archived, 1 already archived, 1 refused");
      expect(summary).toContain("Live site: it has an active site: unpublish it first.");
      expect((await bucketOf(u, blog.id)).archived).toBe(true);
      expect((await bucketOf(u, site.pub.bucketId)).archived).toBe(false);
      // A reload shows the list again without the summary (shown once) and archives nothing more.
      await page.reload();
      expect(await page.locator("#bulk-summary").count()).toBe(0);
      // Nothing checked: refused at the button, nothing changes.
      await submit(page, "button[form=bulk]");
      expect(await page.textContent("#bulk-error")).toContain("Select at least one bucket.");
      // Bulk unarchive from the archived list.
      await page.goto(api("/dashboard/buckets?archived=1"));
      await page.check(`#pick-${blog.id}`);
      await submit(page, "button[form=bulk]");
      expect(await page.textContent("#bulk-summary")).toContain("1 bucket(s) unarchived");
      expect((await bucketOf(u, blog.id)).archived).toBe(false);

      // Create from a template: the title is optional (the template's own is used).
      await page.goto(api("/dashboard/buckets"));
      await page.selectOption("#template", "docs");
      await submit(page, "#create-bucket button[type=submit]");
      expect(await page.textContent("h1")).toBe("Documentation site");
      expect(await page.textContent("#files")).toContain("README.md");
      const created = new URL(page.url()).pathname.split("/").pop()!;
      const files = await t.api("GET", `/api/v1/buckets/${created}/files`, { key: u.key });
      expect(files.body.data.files.map((f: { path: string }) => f.path)).toContain("README.md");
      // With a title of one's own; a too-long title is refused with the choice kept.
      await page.goto(api("/dashboard/buckets"));
      await page.selectOption("#template", "landing");
      await page.fill("#title", "x".repeat(201));
      await page.evaluate(() => document.querySelector("#title")!.removeAttribute("maxlength"));
      await page.fill("#title", "x".repeat(201));
      await submit(page, "#create-bucket button[type=submit]");
      expect(await page.textContent("#title-error")).toContain("at most 200");
      expect(await page.inputValue("#template")).toBe("landing");
      await page.fill("#title", "Product launch");
      await submit(page, "#create-bucket button[type=submit]");
      expect(await page.textContent("h1")).toBe("Product launch");
      expect((await bucketOf(u, new URL(page.url()).pathname.split("/").pop()!)).metadata).toEqual({ template: "landing" });

      await page.goto(api("/dashboard/buckets"));
      await expectAccessible(page);
      await screenshot(page, "buckets-home-tags");
    } finally {
      await ctx.close();
    }
  }, 60_000);

  test("the home page makes as many queries for 30 buckets as for 2", async () => {
    const u = await t.user({ email: "home-queries@example.com" });
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    try {
      for (let i = 0; i < 2; i++) await createBucket(t, u, { title: `B${i}`, tag_paths: ["a"] });
      await signIn(page, t, u, "/dashboard/buckets");
      const few = await countQueries(() => page.reload());
      for (let i = 2; i < 30; i++) await createBucket(t, u, { title: `B${i}`, tag_paths: ["a"] });
      for (let i = 0; i < 3; i++) await publishSite(t, { user: u, title: `Site ${i}`, files: [{ path: "index.html", bytes: "x", contentType: "text/html" }] });
      const many = await countQueries(() => page.reload());
      expect(await page.locator("tbody tr").count()).toBe(25);
      expect(await page.locator("tbody .badge", { hasText: "published" }).count()).toBe(3);
      expect(few).toBeGreaterThan(3);
      expect(many).toBe(few);
    } finally {
      await ctx.close();
    }
  }, 30_000);

  test("a background delete shows its progress and follows it until the bucket is gone", async () => {
    const u = await t.user({ email: "home-delete@example.com" });
    const big = await createBucket(t, u, { title: "Big bucket" });
    await t.api("PATCH", `/api/v1/buckets/${big.id}/variables`, { key: u.key, body: { variables: { A: "1", B: "2", C: "3", D: "4" } } });
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    try {
      await signIn(page, t, u, `/dashboard/buckets/${big.id}`);
      await page.fill("#confirmation", `delete ${big.id}`);
      await submit(page, "form[action$='/delete'] button");
      // Started in the background: the bucket's page shows the progress, the API the lock.
      expect(new URL(page.url()).pathname).toBe(`/dashboard/buckets/${big.id}`);
      expect(await page.textContent("#delete-progress")).toContain("0 of 4 items removed");
      expect((await bucketOf(u, big.id)).lock).toMatchObject({ kind: "bucket_delete", total_items: 4 });
      // With script the reload link is hidden (the script follows the delete instead).
      expect(await page.isHidden("[data-progress-reload]")).toBe(true);
      await expectAccessible(page);
      await screenshot(page, "bucket-deleting");
      // The job runs; the page notices within a few seconds, without a reload.
      expect(await t.pier.runner.drain()).toBe(1);
      await page.locator("#delete-progress", { hasText: "The bucket was deleted." }).waitFor({ timeout: 8000 });
      expect((await t.api("GET", `/api/v1/buckets/${big.id}`, { key: u.key })).status).toBe(404);
      await submit(page, "#delete-progress a");
      expect(new URL(page.url()).pathname).toBe("/dashboard/buckets");
    } finally {
      await ctx.close();
    }
    // Without script the page still shows the progress and a reload link.
    const big2 = await createBucket(t, u, { title: "Big again" });
    await t.api("PATCH", `/api/v1/buckets/${big2.id}/variables`, { key: u.key, body: { variables: { A: "1", B: "2", C: "3", D: "4" } } });
    await t.api("DELETE", `/api/v1/buckets/${big2.id}`, { key: u.key, body: { confirmation: `delete ${big2.id}` } });
    const plain = await browser.newContext({ javaScriptEnabled: false });
    const p2 = await plain.newPage();
    try {
      await signIn(p2, t, u, `/dashboard/buckets/${big2.id}`);
      expect(await p2.textContent("#delete-progress")).toContain("0 of 4 items removed");
      expect(await p2.isVisible("[data-progress-reload] a")).toBe(true);
      await t.pier.runner.drain();
    } finally {
      await plain.close();
    }
  }, 45_000);
});
