// Attacks through received mail shown in the dashboard: a message whose HTML would load remote
// content or run script, another account reading a message's HTML, a crafted message key
// reaching other files of the bucket, and a subject written as a template placeholder. Each is
// reproduced over real SMTP and HTTP (the Chromium test shows the frame loads nothing remote).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { Browser } from "../helpers/browser";
import { createBucket } from "../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { syncFiles, textFile } from "../helpers/uploads";

let t: TestPier;
let owner: TestUser;
let bucketId: string;
let messagePath: string;

const signedIn = async (u: TestUser) => {
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  return b;
};

beforeAll(async () => {
  t = await startTestPier({ smtpPort: 0, mailDomain: "mail.pier.test", smtpRateLimitPerIp: 10_000 });
  owner = await t.user();
  const b = await createBucket(t, owner, { title: "Inbox", inbound_email: { enabled: true } });
  bucketId = b.id;
  await syncFiles(t, owner.key, bucketId, [textFile("private/notes.txt", "owner's notes")]);
  await nodemailer
    .createTransport({
      host: "127.0.0.1",
      port: t.pier.smtp!.port,
      secure: false,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
    } as SMTPTransport.Options)
    .sendMail({
      from: "attacker@sender.test",
      to: b.inbound_email.address,
      subject: "{{apiCsrf}} {{csrf}}",
      text: "plain",
      html: '<img src="https://tracker.example/pixel.png"><script>alert(1)</script><p>hi</p>',
    });
  const list = (await t.api("GET", `/api/v1/buckets/${bucketId}/inbound_email/messages`, { key: owner.key })).body.data.messages;
  messagePath = `/dashboard/buckets/${bucketId}/email/${list[0].folder.replace(/\/$/, "").split("/").pop()}`;
});
afterAll(async () => {
  await t?.stop();
});

describe("received mail in the dashboard", () => {
  test("the HTML body is served under a policy that loads nothing remote and runs nothing, framable only by Pier", async () => {
    const b = await signedIn(owner);
    const res = await b.get(`${messagePath}/body`);
    expect(res.status).toBe(200);
    expect(res.text).toContain("tracker.example"); // served as sent: the policy, not rewriting, blocks it
    const csp = res.headers.get("content-security-policy")!;
    const directives = Object.fromEntries(
      csp
        .split(";")
        .map((d) => d.trim().split(/\s+/))
        .map(([k, ...v]) => [k, v.join(" ")]),
    );
    expect(directives["default-src"]).toBe("'none'");
    expect(directives["img-src"]).toBe("data:");
    expect(directives["script-src"]).toBeUndefined(); // falls back to default-src 'none'
    expect("sandbox" in directives).toBe(true);
    expect(directives["frame-ancestors"]).toBe("'self'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    // The message page frames it sandboxed; the dashboard's own policy allows only Pier's frames.
    const page = await b.get(messagePath);
    expect(page.text).toContain(`<iframe class="mail" sandbox="" src="${messagePath}/body"`);
    expect(page.headers.get("content-security-policy")).toContain("frame-src 'self'");
  });

  test("another account, or nobody, cannot read a message or its HTML", async () => {
    const intruder = await signedIn(await t.user());
    for (const path of [messagePath, `${messagePath}/body`, `${messagePath}/attachments/0`, `${messagePath}/original`]) {
      const res = await intruder.get(path);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain("tracker.example");
    }
    const nobody = await new Browser(t.url).get(`${messagePath}/body`);
    expect(nobody.status).toBe(303);
    expect(nobody.location).toStartWith("/signin");
  });

  test("a crafted message key cannot reach other files of the bucket", async () => {
    const b = await signedIn(owner);
    for (const key of ["..%2F..%2Fprivate%2Fnotes.txt", "private%2Fnotes.txt", "private", "20261124T000000000Z-..%2Fx"]) {
      for (const suffix of ["", "/body", "/original"]) {
        const res = await b.get(`/dashboard/buckets/${bucketId}/email/${key}${suffix}`);
        expect(res.status).toBe(404);
        expect(res.text).not.toContain("owner's notes");
      }
    }
  });

  test("a subject written as a template placeholder is shown as text, not filled in", async () => {
    const b = await signedIn(owner);
    for (const path of [`/dashboard/buckets/${bucketId}/email`, messagePath]) {
      const res = await b.get(path);
      expect(res.text).toContain("{{apiCsrf}} {{csrf}}");
    }
  });
});
