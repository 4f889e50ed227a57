// The dashboard's account pages in real Chromium, clicked as a person would: plan and limits,
// API keys (a refused create keeps what was typed; a key for selected buckets is shown once and
// a reload neither shows it again nor makes a second one; revoke), agent connections and the
// activity log, notifications, the password change and sign out everywhere. Each page is
// checked with axe and saved at desktop and phone width under test-results/screenshots/.
import { describe, expect, test } from "bun:test";
import { and, eq, isNull } from "drizzle-orm";
import type { Browser } from "playwright-core";
import { apiKeys } from "../../../src/db/schema";
import { dashboardUrl, expectAccessible, screenshot, signIn, submit, withDashboard } from "../../helpers/dashboard";
import type { TestPier } from "../../helpers/pier";
import { createBucket } from "../../helpers/buckets";

let t: TestPier;
let browser: Browser;

withDashboard({}, (d) => ({ t, browser } = d));

const api = (path: string) => dashboardUrl(t, path);
const liveKeys = (accountId: string, label: string) =>
  t.pier.deps.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, accountId), eq(apiKeys.label, label), isNull(apiKeys.revokedAt)))
    .all();

describe("the account pages in Chromium", () => {
  test("plan, API keys shown once for selected buckets, revoke, agents, notifications", async () => {
    const u = await t.user({ email: "acct-owner@example.com", plan: "pro" });
    const docs = await createBucket(t, u, { title: "Docs <i>site</i>" });
    await createBucket(t, u, { title: "Photos" });
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    try {
      await signIn(page, t, u, "/dashboard/account");
      expect(await page.textContent("main")).toContain("Pro");
      expect(await page.locator("tbody tr", { hasText: "Buckets" }).textContent()).toContain("2");
      await expectAccessible(page);
      await screenshot(page, "account-plan");

      // The old address leads here.
      await page.goto(api("/account/access"));
      expect(new URL(page.url()).pathname).toBe("/dashboard/account/keys");

      // Selected buckets with none ticked: refused next to the choice, the name kept.
      await page.fill("#label", "docs deployer");
      await page.selectOption("#scope", "bucket_write");
      await page.check("#access-selected");
      await submit(page, "#create-key button[type=submit]");
      expect(await page.textContent("#buckets-error")).toContain("Pick at least one bucket");
      expect(await page.inputValue("#label")).toBe("docs deployer");
      expect(await page.inputValue("#scope")).toBe("bucket_write");
      expect(liveKeys(u.accountId, "docs deployer")).toHaveLength(0);

      // Find the bucket, tick it, create: the key is shown once after the redirect.
      await page.fill("#bq", "docs");
      await submit(page, "form[role=search] button");
      expect(await page.locator(".choices li").count()).toBe(1);
      expect(await page.textContent(".choices")).toContain("Docs <i>site</i>");
      await page.fill("#label", "docs deployer");
      await page.selectOption("#scope", "bucket_write");
      await page.check("#access-selected");
      await page.check(`#b-${docs.id}`);
      await page.selectOption(`#p-${docs.id}`, "read"); // narrower than the key's bucket_write
      await submit(page, "#create-key button[type=submit]");
      expect(new URL(page.url()).searchParams.has("flash")).toBe(true);
      const key = (await page.textContent("#new-key"))!.trim();
      expect(key).toMatch(/^pier_[a-z0-9]{40}$/);
      expect(await page.textContent("main")).toContain("shown only once");
      await expectAccessible(page);
      await screenshot(page, "account-keys");
      // A reload neither shows the key again nor creates a second one.
      await page.reload();
      expect(await page.locator("#new-key").count()).toBe(0);
      expect(await page.textContent("main")).not.toContain(key);
      expect(liveKeys(u.accountId, "docs deployer")).toHaveLength(1);
      // What the API says about the key: it writes to the chosen bucket and sees no other.
      const listed = (await t.api("GET", "/api/v1/buckets", { key })).body.data.buckets.map((b: { id: string }) => b.id);
      expect(listed).toEqual([docs.id]);
      // The bucket's own permission, as the API lists it, and shown in the keys table.
      const keys = (await t.api("GET", "/api/v1/api_keys", { key: u.key })).body.data;
      const made = keys.api_keys.find((k: { label: string }) => k.label === "docs deployer");
      expect(made.bucket_permissions).toEqual({ [docs.id]: "read" });
      expect(await page.locator("tbody tr", { hasText: "docs deployer" }).textContent()).toContain(`${docs.id}: read`);
      const write = await t.api("POST", `/api/v1/buckets/${docs.id}/files/append_text`, { key, body: { path: "notes.txt", text: "hi", create: true } });
      expect(write.status).toBe(403);

      // Revoke: the key stops working.
      await submit(page, "button[aria-label='Revoke docs deployer']");
      expect(await page.textContent("[role=status]")).toContain("Key revoked");
      expect((await t.api("GET", "/api/v1/buckets", { key })).status).toBe(401);

      // Agents: the activity of the owner's key shows in the log.
      await t.api("GET", "/api/v1/buckets", { key: u.key, headers: { "x-pier-agent": "TestAgent", "x-pier-agent-project": "docs" } });
      await page.goto(api("/dashboard/account/agents"));
      expect(await page.textContent("#activity")).toContain("TestAgent");
      expect(await page.textContent("main")).toContain("No agent connections yet");
      await expectAccessible(page);
      await screenshot(page, "account-agents");

      await page.goto(api("/dashboard/account/notifications"));
      expect(await page.textContent("main")).toContain("No notifications yet");
      await expectAccessible(page);
      await screenshot(page, "account-notifications");
    } finally {
      await ctx.close();
    }
  }, 60_000);

  test("security: a wrong current password is refused next to the field; the change works; sign out everywhere", async () => {
    const u = await t.user({ email: "acct-security@example.com" });
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    try {
      await signIn(page, t, u, "/dashboard/account/security");
      await expectAccessible(page);
      await screenshot(page, "account-security");
      await page.fill("#current_password", "not my password");
      await page.fill("#new_password", "a much better password");
      await submit(page, "#change-password button[type=submit]");
      expect(await page.textContent("#current-error")).toContain("not your current password");
      expect(await page.getAttribute("#current_password", "aria-invalid")).toBe("true");

      await page.fill("#current_password", u.password);
      await page.fill("#new_password", "short");
      await page.evaluate(() => document.querySelector<HTMLInputElement>("#new_password")!.removeAttribute("minlength"));
      await submit(page, "#change-password button[type=submit]");
      expect(await page.textContent("#new-error")).toContain("at least 10 characters");

      await page.fill("#current_password", u.password);
      await page.fill("#new_password", "a much better password");
      await submit(page, "#change-password button[type=submit]");
      expect(await page.textContent("[role=status]")).toContain("Password changed");

      await submit(page, "#sign-out-everywhere button[type=submit]");
      expect(new URL(page.url()).pathname).toBe("/signin");
      await page.goto(api("/dashboard/account"));
      expect(new URL(page.url()).pathname).toBe("/signin");
      await page.fill("#email", u.email);
      // The old password no longer signs in; the new one does.
      await page.fill("#password", u.password);
      await submit(page, "button[type=submit]");
      expect(new URL(page.url()).pathname).toBe("/signin");
      await page.fill("#email", u.email);
      await page.fill("#password", "a much better password");
      await Promise.all([page.waitForURL(api("/dashboard/account")), page.click("button[type=submit]")]);
    } finally {
      await ctx.close();
    }
  }, 60_000);
});
