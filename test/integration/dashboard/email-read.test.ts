// Showing a received message in the dashboard changes nothing: a link scanner or a prefetch that
// GETs the message page leaves it unread in the inbox and over the API. The page marks it read
// with a POST (its "Mark as read" form, which the dashboard script sends as the page opens); the
// inbox and the API's unread list follow, and a later GET shows it read without counting again.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { Browser } from "../../helpers/browser";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier({ smtpPort: 0, mailDomain: "mail.pier.test", smtpRateLimitPerIp: 10_000 });
});
afterAll(() => t?.stop());

const send = (to: string, subject: string) =>
  nodemailer
    .createTransport({ host: "127.0.0.1", port: t.pier.smtp!.port, secure: false, tls: { rejectUnauthorized: false } } as SMTPTransport.Options)
    .sendMail({ from: "someone@sender.test", to, subject, text: `About ${subject}` });

/** The token of the page's own forms (the sign-out form in the navigation carries a plain one). */
const formCsrf = (html: string) => [...html.matchAll(/name="csrf" value="([^"]+)"/g)].map((m) => m[1]!).find((v) => v.includes("~"))!;

describe("reading a message in the dashboard", () => {
  test("GET shows it and leaves it unread; the page's POST marks it read and the inbox's unread state follows", async () => {
    const u = await t.user();
    const b = await createBucket(t, u, { title: "Reads", inbound_email: { enabled: true } });
    await send(b.inbound_email.address, "First");
    await send(b.inbound_email.address, "Second");
    const list = async (unread = false) =>
      (await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email/messages${unread ? "?unread=true" : ""}`, { key: u.key })).body.data.messages as {
        subject: string;
        folder: string;
        read: boolean;
        read_count: number;
      }[];
    expect((await list(true)).map((m) => m.subject)).toEqual(["First", "Second"]);

    const browser = new Browser(t.url);
    expect((await browser.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
    const inbox = `/dashboard/buckets/${b.id}/email`;
    const first = (await list()).find((m) => m.subject === "First")!;
    const messagePath = `${inbox}/${first.folder.replace(/\/$/, "").split("/").pop()}`;

    // Shown twice (a person, then a link scanner): still unread everywhere, and the page offers the read.
    for (let i = 0; i < 2; i++) {
      const page = await browser.get(messagePath);
      expect(page.status).toBe(200);
      expect(page.text).toContain("About First");
      expect(page.text).toContain(`action="${messagePath}/read"`);
      expect(page.text).toContain("Mark as read");
    }
    expect((await list(true)).map((m) => m.subject)).toEqual(["First", "Second"]);
    expect((await browser.get(inbox)).text.match(/class="badge">unread</g)).toHaveLength(2);

    // The page's form: a POST marks it read (once) and leads back to the message.
    const csrf = formCsrf((await browser.get(messagePath)).text);
    const marked = await browser.post(`${messagePath}/read`, { csrf });
    expect(marked.status).toBe(303);
    expect(marked.location).toBe(messagePath);
    expect((await list(true)).map((m) => m.subject)).toEqual(["Second"]);
    expect((await list()).find((m) => m.subject === "First")).toMatchObject({ read: true, read_count: 1 });
    expect((await browser.get(inbox)).text.match(/class="badge">unread</g)).toHaveLength(1);

    // Shown again: it says read, offers nothing, and counts no further read.
    const again = await browser.get(messagePath);
    expect(again.text).toContain('id="read-state"');
    expect(again.text).not.toContain(`action="${messagePath}/read"`);
    expect((await list()).find((m) => m.subject === "First")!.read_count).toBe(1);

    // Without a valid token, or for a message that is not there, nothing is recorded.
    expect(
      (
        await browser.post(
          `${inbox}/${(
            await list()
          )
            .find((m) => m.subject === "Second")!
            .folder.replace(/\/$/, "")
            .split("/")
            .pop()}/read`,
          { csrf: "x~y" },
        )
      ).status,
    ).toBe(403);
    expect((await list(true)).map((m) => m.subject)).toEqual(["Second"]);
    const missing = await browser.post(`${inbox}/20200101T000000000Z-aaaaaaaa/read`, { csrf: formCsrf((await browser.get(inbox)).text) });
    expect(missing.status).toBe(404);

    // The inbox's "Unread only" view is the API's unread=true list: the read one is left out.
    const subjects = (page: string) => [...page.matchAll(/<a href="[^"]+\/email\/[^"]+">(?:<strong>)?([^<]+)</g)].map((m) => m[1]);
    const all = (await browser.get(inbox)).text;
    expect(all).toContain('aria-current="page">All messages</a>');
    expect(subjects(all).sort()).toEqual(["First", "Second"]);
    const unreadHref = /<a href="([^"]+)">Unread only<\/a>/.exec(all)![1]!.replaceAll("&#61;", "=").replaceAll("&amp;", "&");
    const unreadOnly = (await browser.get(unreadHref)).text;
    expect(unreadOnly).toContain('aria-current="page">Unread only</a>');
    expect(subjects(unreadOnly)).toEqual(["Second"]);
    expect(unreadOnly).toContain("1 unread message(s)");
  });
});
