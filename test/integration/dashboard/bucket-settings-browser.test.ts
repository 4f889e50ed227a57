// The bucket settings tab in real Chromium, used as a person would: edit the title and
// description, add and remove tags, add/replace/delete variables and secrets (a secret's value
// never reaches any page), take and remove the bucket lock, and lift the visibility lock an
// agent set through the API (the one thing only the dashboard can do). Each step is checked
// on the page and through the REST API; axe and screenshots as for every dashboard page.
import { describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { dashboardUrl, expectAccessible, screenshot, signIn, submit, withDashboard } from "../../helpers/dashboard";
import type { TestPier } from "../../helpers/pier";
import { createBucket } from "../../helpers/buckets";

let t: TestPier;
let browser: Browser;

withDashboard({}, (d) => ({ t, browser } = d));

const SECRET = "sk_live_Zq9-never-shown-7731";
const REPLACED = "sk_live_Replaced-never-shown-4410";

describe("the bucket settings tab in Chromium", () => {
  test("details, tags, variables, secrets, bucket lock and visibility lock; secret values never on a page", async () => {
    const u = await t.user({ email: "settings-owner@example.com" });
    const b = await createBucket(t, u, { title: "Launch site", tag_paths: ["website"] });
    const read = async () => (await t.api("GET", `/api/v1/buckets/${b.id}`, { key: u.key })).body.data.bucket;
    const vars = async () => (await t.api("GET", `/api/v1/buckets/${b.id}/variables`, { key: u.key })).body.data;
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    // Every HTML answer the browser gets in this test, to check no secret value ever leaks.
    const pages: string[] = [];
    page.on("response", async (res) => {
      if ((res.headers()["content-type"] ?? "").includes("text/html")) pages.push(await res.text().catch(() => ""));
    });
    const settings = `/dashboard/buckets/${b.id}/settings`;
    try {
      await signIn(page, t, u, `/dashboard/buckets/${b.id}`);
      // The Settings tab is on the bucket's tab bar.
      await submit(page, "nav.tabs a[href$='/settings']");
      expect(new URL(page.url()).pathname).toBe(settings);
      expect(await page.getAttribute("nav.tabs a[aria-current=page]", "href")).toEndWith("/settings");

      // Details: an empty title is refused next to the field with the typed description kept.
      await page.fill("#title", " ");
      await page.fill("#description", "Typed <i>text</i>");
      await submit(page, "#details button[type=submit]");
      expect(await page.textContent("#title-error")).toContain("Give the bucket a title");
      expect(await page.inputValue("#description")).toBe("Typed <i>text</i>");
      expect((await read()).title).toBe("Launch site");
      await page.fill("#title", "Launch site v2");
      await submit(page, "#details button[type=submit]");
      expect(await page.textContent("[role=status]")).toContain("Title and description saved.");
      expect(await page.textContent("h1")).toBe("Launch site v2");
      expect(await read()).toMatchObject({ title: "Launch site v2", description: "Typed <i>text</i>" });

      // Tags: a malformed one is refused at the field; a good one is added; one is removed.
      await page.fill("#tag", "-bad");
      await submit(page, "#tags form.row button[type=submit]");
      expect(await page.textContent("#tag-error")).toContain("A tag starts with a letter or digit");
      expect(await page.inputValue("#tag")).toBe("-bad");
      await page.fill("#tag", "client/acme");
      await submit(page, "#tags form.row button[type=submit]");
      expect(await page.textContent("#tags")).toContain("client/acme");
      expect((await read()).tag_paths).toEqual(["website", "client/acme"]);
      await submit(page, "#tags button[aria-label='Remove the tag website']");
      expect((await read()).tag_paths).toEqual(["client/acme"]);
      expect(await page.textContent("#tags ul.chips")).not.toContain("website");

      // Variables: a bad name is refused next to the name with what was typed kept.
      await page.fill("#new-name", "lower_case");
      await page.fill("#new-value", "https://api.example.com");
      await submit(page, "#variables button:text('Add')");
      expect(await page.textContent("#new-name-error")).toContain("not a valid variable name");
      expect(await page.inputValue("#new-value")).toBe("https://api.example.com");
      await page.fill("#new-name", "API_BASE");
      await submit(page, "#variables button:text('Add')");
      expect((await vars()).variables).toEqual({ API_BASE: "https://api.example.com" });
      // Edit it in its row.
      await page.fill("#var-0", "https://api2.example.com");
      await submit(page, "#variables-table button:text('Save')");
      expect((await vars()).variables).toEqual({ API_BASE: "https://api2.example.com" });

      // A secret: shown as "set", never with its value; a refused one keeps the name, not the value.
      await page.fill("#new-name", "PIER_TOKEN");
      await page.fill("#new-value", SECRET);
      await page.check("input[name=kind][value=secret]");
      await submit(page, "#variables button:text('Add')");
      expect(await page.textContent("#new-name-error")).toContain("reserved");
      expect(await page.inputValue("#new-name")).toBe("PIER_TOKEN");
      expect(await page.inputValue("#new-value")).toBe("");
      await page.fill("#new-name", "STRIPE_KEY");
      await page.fill("#new-value", SECRET);
      await page.check("input[name=kind][value=secret]");
      await submit(page, "#variables button:text('Add')");
      expect(await page.textContent("[role=status]")).toContain("Secret saved");
      expect(await page.textContent("#variables-table")).toContain("secret · set");
      expect((await vars()).secrets.map((s: { name: string }) => s.name)).toEqual(["STRIPE_KEY"]);
      await expectAccessible(page);
      await screenshot(page, "bucket-settings");
      // Replace it in its row: the input starts empty.
      expect(await page.inputValue("#secret-0")).toBe("");
      await page.fill("#secret-0", REPLACED);
      await submit(page, "#variables-table button:text('Replace')");
      expect(await page.textContent("[role=status]")).toContain("Secret saved");
      // The secret still works as a secret: the API lists its name only.
      expect(JSON.stringify(await vars())).not.toContain("never-shown");
      // Delete the public variable, then the secret.
      await submit(page, "#variables-table button[aria-label='Delete API_BASE']");
      expect((await vars()).variables).toEqual({});
      // A secret's Delete needs its box ticked (D297): the browser refuses the form before.
      await page.check("#variables-table form:has(button[aria-label='Delete STRIPE_KEY']) input[name=confirm]");
      await submit(page, "#variables-table button[aria-label='Delete STRIPE_KEY']");
      expect((await vars()).secrets).toEqual([]);
      expect(await page.textContent("#variables")).toContain("No variables or secrets yet.");

      // Bucket lock: take it with a message; another credential is then refused; remove it.
      await page.fill("#lock-message", "Editing copy");
      await page.selectOption("#lock-duration", "1800");
      await submit(page, "#lock button[type=submit]");
      expect(await page.textContent("#lock-state")).toContain("Editing copy");
      expect(await page.textContent("#lock-state")).toContain("held by you");
      expect((await read()).lock).toMatchObject({ kind: "bucket_lock", message: "Editing copy" });
      const blocked = await t.api("PATCH", `/api/v1/buckets/${b.id}`, { key: u.key, body: { bucket: { title: "agent" } } });
      expect([blocked.status, blocked.body.error.code]).toEqual([423, "BUCKET_LOCKED"]);
      await submit(page, "#lock button:text('Remove the lock')");
      expect(await page.textContent("#lock-state")).toContain("Not locked.");
      expect((await read()).lock).toBeUndefined();

      // Visibility lock taken by an agent through the API; lifted here, where the API cannot.
      const frozen = await t.api("POST", `/api/v1/buckets/${b.id}/visibility_change_lock`, { key: u.key, body: { reason: "Launch <freeze>" } });
      expect(frozen.body.data.visibility_change_lock.unlock_url).toEndWith(settings);
      await page.goto(frozen.body.data.visibility_change_lock.unlock_url.replace(/^https?:\/\/[^/]+/, dashboardUrl(t, "")));
      expect(await page.textContent("#visibility-state")).toContain("“Launch <freeze>”");
      await expectAccessible(page);
      await submit(page, "#visibility button:text('Unlock visibility')");
      expect(await page.textContent("[role=status]")).toContain("Visibility unlocked.");
      expect((await read()).visibility_change_lock).toEqual({ locked: false });
      // And frozen again from here, with a reason.
      await page.fill("#visibility-reason", "Until Monday");
      await submit(page, "#visibility button[type=submit]");
      expect((await read()).visibility_change_lock).toMatchObject({ locked: true, reason: "Until Monday" });

      // No HTML page this session received ever carried either secret value.
      expect(pages.length).toBeGreaterThan(15);
      for (const body of pages) {
        expect(body).not.toContain(SECRET);
        expect(body).not.toContain(REPLACED);
      }
    } finally {
      await ctx.close();
    }
  }, 60_000);

  test("a stale settings page on an archived or deleted bucket says so; another account's gets not-found", async () => {
    const u = await t.user({ email: "settings-stale@example.com" });
    const b = await createBucket(t, u, { title: "Stale" });
    const ctx = await browser.newContext();
    const page: Page = await ctx.newPage();
    try {
      await signIn(page, t, u, `/dashboard/buckets/${b.id}/settings`);
      // Archived meanwhile through the API: the save is refused and the page says why.
      await t.api("POST", `/api/v1/buckets/${b.id}/archive`, { key: u.key });
      await page.fill("#tag", "late");
      await submit(page, "#tags form.row button[type=submit]");
      expect(await page.textContent("[role=alert]")).toContain("archived and read-only");
      expect((await t.api("GET", `/api/v1/buckets/${b.id}`, { key: u.key })).body.data.bucket.tag_paths).toEqual([]);
      // Deleted meanwhile: the next post lands on the not-found page saying so.
      await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation: `delete ${b.id}` } });
      await page.fill("#tag", "later");
      await submit(page, "#tags form.row button[type=submit]");
      expect(await page.textContent("main")).toContain("was permanently deleted");

      // Another account's bucket: the same not-found page, and its forms change nothing.
      const other = await t.user({ email: "settings-victim@example.com" });
      const theirs = await createBucket(t, other, { title: "Theirs" });
      await t.api("POST", `/api/v1/buckets/${theirs.id}/visibility_change_lock`, { key: other.key, body: {} });
      const res = await page.goto(dashboardUrl(t, `/dashboard/buckets/${theirs.id}/settings`));
      expect(res!.status()).toBe(404);
      await page.goto(dashboardUrl(t, "/dashboard/buckets"));
      const csrf = await page.getAttribute("input[name=csrf]", "value");
      const post = await page.request.post(dashboardUrl(t, `/dashboard/buckets/${theirs.id}/settings/visibility/unlock`), {
        form: { csrf: csrf! },
        maxRedirects: 0,
      });
      expect(post.status()).toBe(404);
      expect((await t.api("GET", `/api/v1/buckets/${theirs.id}`, { key: other.key })).body.data.bucket.visibility_change_lock.locked).toBe(true);
    } finally {
      await ctx.close();
    }
  }, 45_000);

  test("metadata: edited as JSON, refused at the field when it is not an object, and a change made meanwhile is never overwritten unseen", async () => {
    const u = await t.user({ email: "metadata-owner@example.com" });
    const b = await createBucket(t, u, { title: "Context", metadata: { project: "launch" } });
    const stored = async () => (await t.api("GET", `/api/v1/buckets/${b.id}`, { key: u.key })).body.data.bucket.metadata;
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    try {
      await signIn(page, t, u, `/dashboard/buckets/${b.id}/settings`);
      expect(JSON.parse(await page.inputValue("#metadata-text"))).toEqual({ project: "launch" });

      // Not JSON, then JSON that is not an object: refused next to the field, the text kept.
      await page.fill("#metadata-text", '{"project": launch}');
      await submit(page, "#metadata-form button[type=submit]");
      expect(await page.textContent("#metadata-error")).toContain("must be a JSON object");
      expect(await page.inputValue("#metadata-text")).toBe('{"project": launch}');
      await page.fill("#metadata-text", "[1, 2]");
      await submit(page, "#metadata-form button[type=submit]");
      expect(await page.textContent("#metadata-error")).toContain("not a list");
      // A well-known key is checked as over the API (forms own publication_forms).
      await page.fill("#metadata-text", '{"publication_forms": {"enabled": "yes"}}');
      await submit(page, "#metadata-form button[type=submit]");
      expect(await page.locator("#metadata-error").count()).toBe(1);
      expect(await stored()).toEqual({ project: "launch" });

      // A good object replaces the metadata, as PATCH does.
      await page.fill("#metadata-text", '{"project": "launch", "task": {"id": 42, "source": "issue tracker"}}');
      await submit(page, "#metadata-form button[type=submit]");
      expect(await page.textContent("[role=status]")).toContain("Metadata saved.");
      expect(await stored()).toEqual({ project: "launch", task: { id: 42, source: "issue tracker" } });
      await expectAccessible(page);

      // An agent changes the metadata while the page is open: the save is refused, shows what is
      // stored now beside the edit, and a second save is the person's informed choice.
      await t.api("PATCH", `/api/v1/buckets/${b.id}`, { key: u.key, body: { bucket: { metadata: { project: "agent's" } } } });
      await page.fill("#metadata-text", '{"project": "mine"}');
      await submit(page, "#metadata-form button[type=submit]");
      expect(await page.textContent("#metadata-error")).toContain("changed since this page was opened");
      expect(await page.textContent("#metadata details")).toContain("agent's");
      expect(await stored()).toEqual({ project: "agent's" });
      expect(await page.inputValue("#metadata-text")).toBe('{"project": "mine"}');
      await expectAccessible(page);
      await screenshot(page, "bucket-settings-metadata");
      await submit(page, "#metadata-form button[type=submit]");
      expect(await page.textContent("[role=status]")).toContain("Metadata saved.");
      expect(await stored()).toEqual({ project: "mine" });
    } finally {
      await ctx.close();
    }
  }, 45_000);
});
