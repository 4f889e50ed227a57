// Attacks on the dashboard's Forms tab over HTTP: a cross-site post that would turn a site's forms
// on, another account's submission reached through one's own bucket or theirs, and visitor markup
// in a submission shown on the owner's pages. Each changes nothing and reveals nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Browser, csrfOf } from "../helpers/browser";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../helpers/sites";
import { filledTimer } from "../helpers/forms";

let t: TestPier;
let site: PublishedSite;
let submissionId: string;
beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
  site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>Home</h1>" }] });
  const r = await t.api("PATCH", `/api/v1/buckets/${site.pub.bucketId}`, {
    key: site.user.key,
    body: { bucket: { metadata: { publication_forms: { forms: [{ name: "contact" }] } } } },
  });
  if (r.status !== 200) throw new Error(`configure: ${r.status}`);
  const posted = await siteFetch(t, site.host, "/_pier/form/contact", {
    method: "POST",
    body: new URLSearchParams({
      email: "v@example.com",
      message: `<script>alert(1)</script><img src=x onerror=alert(2)>`,
      _pier_started: filledTimer(t, site.pub.id, "contact"),
    }).toString(),
    headers: { origin: `http://${site.host}`, "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": "192.0.2.9" },
  });
  if (posted.status !== 200) throw new Error(`post: ${posted.status}`);
  const list = await t.api("GET", `/api/v1/buckets/${site.pub.bucketId}/form_submissions`, { key: site.user.key });
  submissionId = list.body.data.form_submissions[0].id;
});
afterAll(async () => {
  await t?.stop();
});

async function signedIn(u: TestUser): Promise<Browser> {
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  return b;
}
const metadata = async () => (await t.api("GET", `/api/v1/buckets/${site.pub.bucketId}`, { key: site.user.key })).body.data.bucket.metadata;
const count = async () =>
  (await t.api("GET", `/api/v1/buckets/${site.pub.bucketId}/form_submissions`, { key: site.user.key })).body.data.pagination.total_count;

describe("dashboard Forms tab", () => {
  test("a cross-site post without the session's CSRF token changes no form setting", async () => {
    const before = await metadata();
    const b = await signedIn(site.user);
    for (const csrf of ["", "forged-token-forged-token-forged"]) {
      const res = await b.post(`/dashboard/buckets/${site.pub.bucketId}/forms/settings`, { csrf, enabled: "on", forms: "waitlist" });
      expect(res.status).toBe(403);
    }
    expect(await metadata()).toEqual(before);
  });

  test("another account reads, answers and deletes nothing: the normal not-found page", async () => {
    const stranger = await t.user();
    const b = await signedIn(stranger);
    for (const path of [`/dashboard/buckets/${site.pub.bucketId}/forms`, `/dashboard/buckets/${site.pub.bucketId}/forms/${submissionId}`]) {
      const page = await b.get(path);
      expect(page.status).toBe(404);
      expect(page.text).not.toContain("alert(");
    }
    const csrf = csrfOf((await b.get("/dashboard/buckets")).text);
    expect((await b.post(`/dashboard/buckets/${site.pub.bucketId}/forms/${submissionId}/delete`, { csrf })).status).toBe(404);
    expect((await b.post(`/dashboard/buckets/${site.pub.bucketId}/forms/${submissionId}/reply`, { csrf, message: "hi" })).status).toBe(404);
    // Their own bucket with the other account's submission id is not-found too.
    const own = await t.api("POST", "/api/v1/buckets", { key: stranger.key, body: { bucket: { title: "Mine" } } });
    const ownId = own.body.data.bucket.id;
    expect((await b.get(`/dashboard/buckets/${ownId}/forms/${submissionId}`)).status).toBe(404);
    expect((await b.post(`/dashboard/buckets/${ownId}/forms/${submissionId}/delete`, { csrf })).status).toBe(404);
    expect(await count()).toBe(1);
  });

  test("visitor markup in a submission is shown as text on the list and on its page", async () => {
    const b = await signedIn(site.user);
    for (const path of [`/dashboard/buckets/${site.pub.bucketId}/forms`, `/dashboard/buckets/${site.pub.bucketId}/forms/${submissionId}`]) {
      const page = await b.get(path);
      expect(page.status).toBe(200);
      expect(page.text).not.toContain("<script>alert(1)");
      expect(page.text).not.toContain("<img src=x");
    }
    const one = await b.get(`/dashboard/buckets/${site.pub.bucketId}/forms/${submissionId}`);
    expect(one.text).toContain("&#60;script&#62;alert(1)&#60;/script&#62;");
  });

  // Last: it deletes the file's one submission. Deleting cannot be undone (no version, no trash).
  test("deleting a submission needs its confirmation box: a bare click or post deletes nothing", async () => {
    const b = await signedIn(site.user);
    const path = `/dashboard/buckets/${site.pub.bucketId}/forms/${submissionId}`;
    const page = (await b.get(path)).text;
    // The page's own form token (the sign-out form in the navigation carries a plain one).
    const csrf = [...page.matchAll(/name="csrf" value="([^"]+)"/g)].map((m) => m[1]!).find((v) => v.includes("~"))!;
    const refused = await b.post(`${path}/delete`, { csrf });
    expect(await count()).toBe(1);
    expect(refused.status).toBe(422);
    expect(refused.text.includes("Tick the box to confirm")).toBe(true);
    // The box is on the page, and the browser will not send the form without it ticked.
    expect(/<input type="checkbox" name="confirm"[^>]* required/.test(page)).toBe(true);
    const done = await b.post(`${path}/delete`, { csrf, confirm: "on" });
    expect(done.status).toBe(303);
    expect(await count()).toBe(0);
  });
});
