// Owner notifications: a burst of submissions becomes one mail per bucket per run, naming counts
// per form and where to read them, and never the visitor's text.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { listOutbox } from "../../../src/features/mail";
import { notifyNewSubmissions } from "../../../src/features/forms";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch } from "../../helpers/sites";
import { filledTimer } from "../../helpers/forms";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
});
afterAll(() => t?.stop());

test("six quick submissions give the owner one mail with counts and no visitor text; the next run sends nothing", async () => {
  const site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>Home</h1>" }], title: "Bakery" });
  await t.api("PATCH", `/api/v1/buckets/${site.pub.bucketId}`, {
    key: site.user.key,
    body: { bucket: { metadata: { publication_forms: { forms: [{ name: "contact" }, { name: "waitlist" }] } } } },
  });
  const send = (form: "contact" | "waitlist", body: string, i: number) =>
    siteFetch(t, site.host, `/_pier/form/${form}`, {
      method: "POST",
      body: `${body}&_pier_started=${encodeURIComponent(filledTimer(t, site.pub.id, form))}`,
      headers: { origin: `http://${site.host}`, "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": `192.0.2.${i}` },
    });
  for (let i = 0; i < 4; i++) expect((await send("contact", "email=a%40example.com&message=SECRET+WORDS", i + 1)).status).toBe(200);
  for (let i = 0; i < 2; i++) expect((await send("waitlist", "email=b%40example.com", i + 10)).status).toBe(200);

  expect(await notifyNewSubmissions(t.pier.deps)).toBe(1);
  const mails = listOutbox(t.pier.deps).filter((m) => m.kind === "form-submissions");
  expect(mails.length).toBe(1);
  expect(mails[0]!.to_address).toBe(site.user.email);
  expect(mails[0]!.subject).toBe('Pier: 6 new form submissions on "Bakery"');
  expect(mails[0]!.text_body).toContain("4 × Contact");
  expect(mails[0]!.text_body).toContain("2 × Join the Waitlist");
  expect(mails[0]!.text_body).toContain(`/api/v1/buckets/${site.pub.bucketId}/form_submissions`);
  expect(mails[0]!.text_body).not.toContain("SECRET");
  expect(mails[0]!.text_body).not.toContain("a@example.com");
  expect(await notifyNewSubmissions(t.pier.deps)).toBe(0);
});

test("the bucket title is quoted, without control, bidirectional or invisible characters, in the subject and the body", async () => {
  // A right-to-left override turns what follows around on screen; a zero-width space and a bell are invisible.
  const title = "Bak\u202Eyrev\u200B\u0007\u2066ery\u2028Shop\u00ADs";
  const site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>Home</h1>" }], storedTitle: title });
  await t.api("PATCH", `/api/v1/buckets/${site.pub.bucketId}`, {
    key: site.user.key,
    body: { bucket: { metadata: { publication_forms: { forms: [{ name: "contact" }] } } } },
  });
  const r = await siteFetch(t, site.host, "/_pier/form/contact", {
    method: "POST",
    body: `email=a%40example.com&message=hi&_pier_started=${encodeURIComponent(filledTimer(t, site.pub.id, "contact"))}`,
    headers: { origin: `http://${site.host}`, "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": "192.0.2.77" },
  });
  expect(r.status).toBe(200);
  expect(await notifyNewSubmissions(t.pier.deps)).toBe(1);
  const mail = listOutbox(t.pier.deps).find((m) => m.kind === "form-submissions" && m.to_address === site.user.email)!;
  expect(mail.subject).toBe('Pier: 1 new form submission on "Bak yrev ery Shop s"');
  expect(mail.text_body).toContain('New form submissions on your site "Bak yrev ery Shop s":');
  for (const text of [mail.subject, mail.text_body])
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f\u00ad\u200b-\u200f\u2028-\u202e\u2066-\u2069]/u);
});
