// The instance admin pages in real Chromium, clicked as the instance's admin would: users
// (sign-up mode, an invite shown once that then signs someone up, make admin, reset two-factor),
// plans (move an account), the outbox and one of its messages, health (failed job retried).
// A user who is not an admin sees no Admin entry and gets the not-found page. Each page is
// checked with axe and at phone width (PIER_TEST_SCREENSHOTS=1 saves screenshots of both widths).
import { beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { Browser } from "playwright-core";
import { accounts, jobs, mailOutbox, users } from "../../../src/db/schema";
import { dashboardUrl, expectAccessible, screenshot, signIn, submit, withDashboard } from "../../helpers/dashboard";
import type { TestPier, TestUser } from "../../helpers/pier";

let t: TestPier;
let browser: Browser;
let admin: TestUser;

withDashboard({ signupMode: "invite" }, (d) => ({ t, browser } = d));
beforeAll(async () => {
  admin = await t.user({ email: "instance-admin@example.com" }); // the first user administers the instance
});

const api = (path: string) => dashboardUrl(t, path);
const db = () => t.pier.deps.db;

describe("the instance admin pages in Chromium", () => {
  test("users, invites, plans, outbox and health", async () => {
    const member = await t.user({ email: "member-with-2fa@example.com" });
    db().update(users).set({ totpSealed: "sealed", totpEnabledAt: new Date().toISOString() }).where(eq(users.id, member.userId)).run();
    const now = new Date().toISOString();
    db()
      .insert(mailOutbox)
      .values({
        id: "out_browsertest1",
        toAddress: "agent@example.com",
        subject: "Your <b>code</b>",
        textBody: "Code: 123456",
        kind: "agent-login-code",
        createdAt: now,
      })
      .run();
    db()
      .insert(jobs)
      .values({
        id: "job_browserfailed1",
        kind: "noop",
        status: "failed",
        runAt: now,
        createdAt: now,
        updatedAt: now,
        finishedAt: now,
        lastError: "disk <full>",
        attempts: 5,
      })
      .run();

    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    try {
      await signIn(page, t, admin, "/dashboard/admin");
      expect(await page.textContent("main")).toContain("Invite only");
      await expectAccessible(page);
      await screenshot(page, "admin-users");

      // A bad address is refused next to the field and kept.
      await page.fill("#invite-email", "not an address");
      await page.evaluate(() => document.querySelector<HTMLInputElement>("#invite-email")!.setAttribute("type", "text"));
      await submit(page, "#create-invite button[type=submit]");
      expect(await page.textContent("#invite-email-error")).toContain("valid email");
      expect(await page.inputValue("#invite-email")).toBe("not an address");

      // An invite for one address: the link is shown once; it then signs that person up.
      await page.fill("#invite-email", "newcomer@example.com");
      await submit(page, "#create-invite button[type=submit]");
      const link = (await page.textContent("#invite-link"))!.trim();
      expect(link).toContain("/signup?invite=inv-");
      await page.reload();
      expect(await page.locator("#invite-link").count()).toBe(0);
      const signup = await browser.newContext();
      const other = await signup.newPage();
      await other.goto(link.replace(/^https?:\/\/[^/]+/, api("")));
      await other.fill("#email", "newcomer@example.com");
      await other.fill("#password", "a long enough password");
      await Promise.all([other.waitForURL(api("/dashboard")), other.click("button[type=submit]")]);
      await signup.close();
      await page.goto(api("/dashboard/admin?q=newcomer"));
      expect(await page.locator("#users tbody tr").count()).toBe(1);
      // Disable the newcomer: the badge shows, and the database says so; then enable again.
      await submit(page, "button[aria-label='Disable: newcomer@example.com']");
      expect(await page.textContent("[role=status]")).toContain("The user is disabled");
      expect(db().select().from(users).where(eq(users.email, "newcomer@example.com")).get()!.disabledAt).not.toBeNull();
      await page.goto(api("/dashboard/admin?q=newcomer"));
      expect(await page.textContent("#users tbody")).toContain("disabled");
      await submit(page, "button[aria-label='Enable: newcomer@example.com']");
      expect(db().select().from(users).where(eq(users.email, "newcomer@example.com")).get()!.disabledAt).toBeNull();

      // Make the member admin, then reset their two-factor.
      await page.goto(api("/dashboard/admin?q=member-with-2fa"));
      await submit(page, "button[aria-label='Make admin: member-with-2fa@example.com']");
      expect(await page.textContent("[role=status]")).toContain("now an instance admin");
      expect(db().select().from(users).where(eq(users.id, member.userId)).get()!.isInstanceAdmin).toBe(true);
      await page.goto(api("/dashboard/admin?q=member-with-2fa"));
      await submit(page, "button[aria-label='Reset two-factor: member-with-2fa@example.com']");
      expect(await page.textContent("[role=status]")).toContain("Two-factor authentication is off");
      expect(db().select().from(users).where(eq(users.id, member.userId)).get()!.totpSealed).toBeNull();

      // Plans: move the member's account to Pro; the API then allows named keys.
      await page.goto(api("/dashboard/admin/plans?q=member-with-2fa"));
      await expectAccessible(page);
      await screenshot(page, "admin-plans");
      await page.selectOption(`#plan-${member.accountId}`, "pro");
      await submit(page, `form[action='/dashboard/admin/plans/accounts/${member.accountId}'] button`);
      expect(await page.textContent("[role=status]")).toContain("new plan");
      expect(db().select().from(accounts).where(eq(accounts.id, member.accountId)).get()!.plan).toBe("pro");
      expect((await t.api("POST", "/api/v1/api_keys", { key: member.key, body: { label: "now allowed" } })).status).toBe(201);

      // Outbox: the message, its subject as text.
      await page.goto(api("/dashboard/admin/outbox"));
      expect(await page.textContent("tbody")).toContain("Your <b>code</b>");
      await expectAccessible(page);
      await screenshot(page, "admin-outbox");
      await submit(page, "a[href='/dashboard/admin/outbox/out_browsertest1']");
      expect(await page.textContent("pre")).toContain("Code: 123456");
      await expectAccessible(page);

      // Health: the failed job with its error, retried.
      await page.goto(api("/dashboard/admin/health"));
      expect(await page.textContent("#jobs")).toContain("disk <full>");
      expect(await page.textContent("#certificates")).toContain("Automatic HTTPS is off");
      await expectAccessible(page);
      await screenshot(page, "admin-health");
      await submit(page, "button[aria-label='Retry job job_browserfailed1']");
      expect(await page.textContent("[role=status]")).toContain("queued again");
      const job = db().select().from(jobs).where(eq(jobs.id, "job_browserfailed1")).get()!;
      expect(job.status).toBe("queued");
      expect(job.attempts).toBe(0);
    } finally {
      await ctx.close();
    }
  }, 60_000);

  test("a user who is not an admin sees no Admin entry and gets the not-found page", async () => {
    const u = await t.user({ email: "plain-user@example.com" });
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    try {
      await signIn(page, t, u, "/dashboard/buckets");
      expect(await page.locator("nav a[href='/dashboard/admin']").count()).toBe(0);
      const res = await page.goto(api("/dashboard/admin/health"));
      expect(res!.status()).toBe(404);
      expect(await page.textContent("h1")).toBe("Not found");
    } finally {
      await ctx.close();
    }
  }, 30_000);
});
