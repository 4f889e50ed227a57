// The owner API over real HTTP: submissions posted by a visitor on a published site are listed
// decrypted, read, corrected (existing fields only), replied to and deleted.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";
import { filledTimer, solveFormChallenge } from "../../helpers/forms";
import type { FormName } from "../../../src/features/forms/definitions";

let t: TestPier;
let site: PublishedSite;
let ip = 0;
beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
  site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>Home</h1>" }], access: "password", password: "open sesame 1" });
  const r = await t.api("PATCH", `/api/v1/buckets/${site.pub.bucketId}`, {
    key: site.user.key,
    body: { bucket: { metadata: { publication_forms: { forms: [{ name: "contact" }, { name: "comments" }] } } } },
  });
  expect(r.status).toBe(200);
});
afterAll(() => t?.stop());

/** Sign in through the site's password gate and keep its cookie. */
async function visitorCookie(): Promise<string> {
  const r = await siteFetch(t, site.host, "/_pier/gate/password", {
    method: "POST",
    body: new URLSearchParams({ password: site.password!, next: "/" }).toString(),
    headers: { origin: `http://${site.host}`, "content-type": "application/x-www-form-urlencoded" },
  });
  const cookie = r.headers.get("set-cookie");
  if (!cookie) throw new Error(`gate: ${r.status} ${await r.text()}`);
  return cookie.split(";")[0]!;
}

async function submit(cookie: string, form: FormName, body: Record<string, unknown>) {
  const altcha = await solveFormChallenge(t, site.host, cookie);
  const r = await siteFetch(t, site.host, `/_pier/form/${form}`, {
    method: "POST",
    body: JSON.stringify({ ...body, altcha, _pier_started: filledTimer(t, site.pub.id, form) }),
    headers: { origin: `http://${site.host}`, "content-type": "application/json", accept: "application/json", cookie, "x-forwarded-for": `192.0.2.${++ip}` },
  });
  return { status: r.status, body: await r.json() };
}

const base = () => `/api/v1/buckets/${site.pub.bucketId}/form_submissions`;

describe("owner API for form submissions", () => {
  let contactId: string;
  let commentId: string;

  test("a gated site's form needs the gate's cookie", async () => {
    const r = await siteFetch(t, site.host, "/_pier/form/contact", {
      method: "POST",
      body: "email=a%40example.com&message=hi",
      headers: { origin: `http://${site.host}`, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(r.status).toBe(403);
  });

  test("list: decrypted, newest first, filtered by form_name, paged, with the quota", async () => {
    const cookie = await visitorCookie();
    const a = await submit(cookie, "contact", { name: "Ann", email: "ann@example.com", message: "<script>alert(1)</script>" });
    expect(a.status).toBe(201);
    contactId = a.body.data.form_submission.id;
    t.clock.advance(1000);
    const c = await submit(cookie, "comments", { name: "Ben", message: "Nice page" });
    expect(c.status).toBe(201);
    commentId = c.body.data.form_submission.id;

    const all = await t.api("GET", base(), { key: site.user.key });
    expect(all.status).toBe(200);
    expect(all.body.data.form_submissions.map((s: { id: string }) => s.id)).toEqual([commentId, contactId]);
    const contact = all.body.data.form_submissions[1];
    expect(contact.fields).toEqual({ name: "Ann", email: "ann@example.com", message: "<script>alert(1)</script>" });
    expect(contact.form_name).toBe("contact");
    expect(all.body.data.quota).toMatchObject({ form_submission_quota: 100, used_this_month: 2, remaining_this_month: 98 });
    const only = await t.api("GET", `${base()}?form_name=comments&limit=1`, { key: site.user.key });
    expect(only.body.data.form_submissions.length).toBe(1);
    expect(only.body.data.pagination.total_count).toBe(1);
    expect((await t.api("GET", `${base()}?form_name=chat`, { key: site.user.key })).status).toBe(422);
  });

  test("read needs bucket write access: a read-only key is refused", async () => {
    const readKey = t.key(site.user, { scope: "bucket_read" });
    expect((await t.api("GET", base(), { key: readKey })).status).toBe(403);
    expect((await t.api("GET", `${base()}/${contactId}`, { key: readKey })).status).toBe(403);
  });

  test("PATCH corrects an existing field; a new field name is refused and nothing changes", async () => {
    const ok = await t.api("PATCH", `${base()}/${contactId}`, { key: site.user.key, body: { fields: { name: "Anna" } } });
    expect(ok.status).toBe(200);
    expect(ok.body.data.form_submission.fields.name).toBe("Anna");
    const bad = await t.api("PATCH", `${base()}/${commentId}`, { key: site.user.key, body: { fields: { email: "x@example.com" } } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.unknown_fields).toEqual(["email"]);
    const after = await t.api("GET", `${base()}/${commentId}`, { key: site.user.key });
    expect(after.body.data.form_submission.fields).toEqual({ name: "Ben", message: "Nice page" });
  });

  test("PATCH refuses names every object inherits (constructor, toString, __proto__) as new fields", async () => {
    for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      const bad = await t.api("PATCH", `${base()}/${commentId}`, { key: site.user.key, body: { fields: { [name]: "x" } } });
      expect(bad.status).toBe(422);
      expect(bad.body.error.details.unknown_fields).toEqual([name]);
    }
    const after = await t.api("GET", `${base()}/${commentId}`, { key: site.user.key });
    expect(after.body.data.form_submission.fields).toEqual({ name: "Ben", message: "Nice page" });
  });

  test("reply: team anywhere, public only on comments", async () => {
    const team = await t.api("POST", `${base()}/${contactId}/reply`, { key: site.user.key, body: { message: "We'll call you", audience: "team" } });
    expect(team.status).toBe(201);
    expect(team.body.data.form_submission.replies.map((r: { message: string }) => r.message)).toEqual(["We'll call you"]);
    const pubOnContact = await t.api("POST", `${base()}/${contactId}/reply`, { key: site.user.key, body: { message: "Hi all", audience: "public" } });
    expect(pubOnContact.status).toBe(422);
    expect(pubOnContact.body.error.details.field).toBe("audience");
    const pub = await t.api("POST", `${base()}/${commentId}/reply`, { key: site.user.key, body: { message: "Thank you!", audience: "public" } });
    expect(pub.status).toBe(201);
    expect(pub.body.data.reply.audience).toBe("public");
  });

  test("a second signed-in visitor sees the comment and its public reply, not team replies; without the gate nothing", async () => {
    await t.api("POST", `${base()}/${commentId}/reply`, { key: site.user.key, body: { message: "internal note", audience: "team" } });
    const second = await visitorCookie();
    const r = await siteFetch(t, site.host, "/_pier/form/comments", { headers: { cookie: second } });
    expect(r.status).toBe(200);
    const comments = (await r.json()).data.comments;
    expect(comments.map((c: { message: string }) => c.message)).toEqual(["Nice page"]);
    expect(comments[0].replies.map((x: { message: string }) => x.message)).toEqual(["Thank you!"]);
    expect(JSON.stringify(comments)).not.toContain("internal note");
    expect(JSON.stringify(comments)).not.toContain("ann@example.com");
    expect((await siteFetch(t, site.host, "/_pier/form/comments")).status).toBe(404);
  });

  test("delete: a reply alone, then a root with its replies; gone afterwards", async () => {
    const root = await t.api("GET", `${base()}/${contactId}`, { key: site.user.key });
    const replyId = root.body.data.form_submission.replies[0].id;
    const d1 = await t.api("DELETE", `${base()}/${replyId}`, { key: site.user.key });
    expect(d1.status).toBe(200);
    expect((await t.api("GET", `${base()}/${contactId}`, { key: site.user.key })).body.data.form_submission.replies).toEqual([]);
    await t.api("POST", `${base()}/${commentId}/reply`, { key: site.user.key, body: { message: "second" } });
    const d2 = await t.api("DELETE", `${base()}/${commentId}`, { key: site.user.key });
    expect(d2.body.data.deleted).toEqual({ id: commentId, replies_deleted: 3 });
    const gone = await t.api("GET", `${base()}/${commentId}`, { key: site.user.key });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe("FORM_SUBMISSION_NOT_FOUND");
  });

  test("another account's key sees no submissions of this bucket", async () => {
    const other = await t.user();
    const r = await t.api("GET", base(), { key: other.key });
    expect(r.status).toBe(404);
    expect((await t.api("GET", `${base()}/${contactId}`, { key: other.key })).status).toBe(404);
  });
});
