// The Email tab in real Chromium: turn the bucket's address on, send real messages to it over
// SMTP (STARTTLS, nodemailer), see them newest first and unread, open one (headers, verdicts,
// text, the HTML body in its sandboxed frame) and find it read through the API too, download
// an attachment. A remote image in the HTML is never fetched (hits on a loopback HTTP server
// are counted) and a script in it never runs; message text is shown as text, never as markup.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import type { Browser } from "playwright-core";
import { dashboardUrl, expectAccessible, screenshot, signIn, submit, withDashboard } from "../../helpers/dashboard";
import type { TestPier, TestUser } from "../../helpers/pier";
import { createBucket } from "../../helpers/buckets";

let t: TestPier;
let browser: Browser;
// A loopback HTTP server standing for a mail tracker: every request to it is counted.
const hits: string[] = [];
let tracker: ReturnType<typeof Bun.serve>;

withDashboard({ smtpPort: 0, mailDomain: "mail.pier.test", smtpRateLimitPerIp: 10_000 }, (d) => ({ t, browser } = d));
beforeAll(() => {
  tracker = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      hits.push(new URL(req.url).pathname);
      return new Response("tracked", { headers: { "content-type": "image/png" } });
    },
  });
});
afterAll(() => {
  tracker?.stop(true);
});

type Mail = Parameters<ReturnType<typeof nodemailer.createTransport>["sendMail"]>[0];
const send = (mail: Mail) =>
  nodemailer
    .createTransport({
      host: "127.0.0.1",
      port: t.pier.smtp!.port,
      secure: false,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
    } as SMTPTransport.Options)
    .sendMail({ from: "Sender <someone@sender.test>", ...mail });
const messages = async (u: TestUser, id: string) =>
  (await t.api("GET", `/api/v1/buckets/${id}/inbound_email/messages`, { key: u.key })).body.data.messages as any[];

describe("the Email tab in Chromium", () => {
  test("address on, real mail listed newest first, opened (marked read), HTML sandboxed with nothing remote, attachment downloaded", async () => {
    const u = await t.user({ email: "mail-owner@example.com" });
    const b = await createBucket(t, u, { title: "Support inbox" });
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    try {
      await signIn(page, t, u, `/dashboard/buckets/${b.id}/email`);
      expect(await page.textContent("#messages")).toContain("No messages yet.");
      await submit(page, "form[action$='/email/address'] button");
      expect(await page.textContent("main")).toContain("The receiving address is on.");
      const address = (await page.textContent("#address"))!.trim();
      const viaApi = (await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email`, { key: u.key })).body.data;
      expect(viaApi).toMatchObject({ enabled: true, address });

      const csv = "id,amount\n1,42\n";
      await send({
        to: address,
        subject: "Invoice 7",
        text: "Invoice attached.\n<b>not bold</b>",
        attachments: [{ filename: "invoice.csv", content: csv, contentType: "text/csv" }],
      });
      const port = tracker.port;
      await send({
        to: address,
        subject: "Hello <b>{{apiCsrf}}</b>",
        text: "Plain version",
        html:
          `<p id="greeting">Hello there</p><img src="http://127.0.0.1:${port}/pixel.png" alt="">` +
          `<div style="background:url(http://127.0.0.1:${port}/bg.png)">styled</div>` +
          `<link rel="stylesheet" href="http://127.0.0.1:${port}/style.css">` +
          `<meta http-equiv="refresh" content="0;url=http://127.0.0.1:${port}/refresh">` +
          `<script>document.body.setAttribute("data-ran","yes");new Image().src="http://127.0.0.1:${port}/script.png";</script>`,
      });
      await page.reload();
      const rows = page.locator("#messages tbody tr");
      expect(await rows.count()).toBe(2);
      // Newest first, both unread, the subject shown as text (no markup, no placeholder filled in).
      expect(await rows.nth(0).textContent()).toContain("Hello <b>{{apiCsrf}}</b>");
      expect(await rows.nth(1).textContent()).toContain("Invoice 7");
      expect(await page.locator("#messages .badge", { hasText: "unread" }).count()).toBe(2);
      await expectAccessible(page);
      await screenshot(page, "email");

      // Open the HTML message.
      await submit(page, "#messages tbody tr:first-child a");
      expect(await page.textContent("h1")).toBe("Hello <b>{{apiCsrf}}</b>");
      const headers = await page.textContent("#headers");
      expect(headers).toContain("Sender <someone@sender.test>");
      expect(headers).toContain(address);
      // The page marks it read with a POST as it opens (showing it changed nothing); the other stays unread.
      await page.waitForSelector("#headers ~ [role=status]", { timeout: 20_000 });
      expect(await page.textContent("#headers ~ [role=status]")).toBe("Marked as read.");
      const opened = await messages(u, b.id);
      expect(opened.find((m) => m.subject.startsWith("Hello")).read).toBe(true);
      expect(opened.find((m) => m.subject === "Invoice 7").read).toBe(false);
      const [html] = (await messages(u, b.id)).filter((m) => m.subject.startsWith("Hello"));
      const json = JSON.parse(
        await (
          await fetch(
            (
              await t.api("GET", `/api/v1/buckets/${b.id}/files/by_path?path=${encodeURIComponent(html.message_json_path)}`, { key: u.key })
            ).headers.get("location")!,
          )
        ).text(),
      );
      const verdicts = await page.textContent("#authentication");
      expect(verdicts).toContain(`SPF${json.authentication.spf.result}`);
      expect(verdicts).toContain(`DMARC${json.authentication.dmarc.result}`);
      const frameEl = await page.waitForSelector("iframe.mail");
      expect(await frameEl.getAttribute("sandbox")).toBe("");
      const frame = (await frameEl.contentFrame())!;
      await frame.waitForSelector("#greeting");
      expect(await frame.textContent("#greeting")).toBe("Hello there");
      await page.waitForTimeout(500);
      expect(await frame.evaluate(() => document.body.getAttribute("data-ran"))).toBeNull();
      expect(hits).toEqual([]);
      // The sandboxed frame runs no script, so axe checks the page around it.
      await expectAccessible(page, { exclude: ["iframe.mail"] });
      await screenshot(page, "email-message");

      // Opening it marked it read for everyone (the API's shared read state); the other is unread.
      const after = await messages(u, b.id);
      expect(after.find((m) => m.subject.startsWith("Hello")).read).toBe(true);
      expect(after.find((m) => m.subject === "Invoice 7").read).toBe(false);

      // The HTML route's own policy, and only for the owner.
      const bodyUrl = await frameEl.getAttribute("src");
      const direct = await page.request.get(dashboardUrl(t, bodyUrl!));
      expect(direct.headers()["content-security-policy"]).toContain("default-src 'none'");
      expect(direct.headers()["content-security-policy"]).toContain("sandbox");
      expect(direct.headers()["content-security-policy"]).toContain("frame-ancestors 'self'");

      // The text message: text escaped, the attachment downloads through a signed URL.
      await page.goto(dashboardUrl(t, `/dashboard/buckets/${b.id}/email`));
      expect(await page.locator("#messages tbody tr:first-child .badge").count()).toBe(0);
      await submit(page, "#messages tbody tr:nth-child(2) a");
      expect(await page.textContent("#text-body")).toContain("<b>not bold</b>");
      expect(await page.locator("#text-body b").count()).toBe(0);
      const link = await page.getAttribute("#attachments a[href*='/attachments/0']", "href");
      const file = await page.request.get(dashboardUrl(t, link!));
      expect(file.status()).toBe(200);
      expect(await file.text()).toBe(csv);
      expect(hits).toEqual([]);

      // Another account: the message and its HTML are the normal not-found page.
      const other = await t.user({ email: "mail-intruder@example.com" });
      const ctx2 = await browser.newContext();
      const page2 = await ctx2.newPage();
      try {
        await signIn(page2, t, other, "/dashboard/buckets");
        expect((await page2.goto(dashboardUrl(t, bodyUrl!)))!.status()).toBe(404);
        expect(await page2.textContent("body")).not.toContain("Hello there");
        expect((await page2.goto(dashboardUrl(t, `/dashboard/buckets/${b.id}/email`)))!.status()).toBe(404);
      } finally {
        await ctx2.close();
      }

      // Turn the address off: the page and the API agree.
      await page.goto(dashboardUrl(t, `/dashboard/buckets/${b.id}/email`));
      await submit(page, "form[action$='/email/address'] button");
      expect(await page.textContent("main")).toContain("The receiving address is off");
      expect((await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email`, { key: u.key })).body.data.enabled).toBe(false);
    } finally {
      await ctx.close();
    }
  }, 60_000);
});
