// The visitor endpoint POST /_pier/form/<name> on a published site, over real HTTP: plain posts
// and fetch, required fields, context, and what is stored (sealed at rest).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formSubmissions } from "../../../src/db/schema";
import { eq } from "drizzle-orm";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";
import { filledTimer, solveFormChallenge } from "../../helpers/forms";
import type { FormName } from "../../../src/features/forms/definitions";

let t: TestPier;
let site: PublishedSite;
let ipCounter = 0;
beforeAll(async () => {
  const plansFile = join(mkdtempSync(join(tmpdir(), "pier-plans-")), "plans.json");
  writeFileSync(plansFile, JSON.stringify([{ id: "threeforms", extends: "free", entitlements: { form_submission_quota: 3 } }]));
  t = await startTestPier({ trustProxy: true, plansFile });
  site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>Home</h1>" }] });
  await configure(site, { enabled: true, forms: [{ name: "contact" }, { name: "waitlist", required_fields: ["name", "email"] }, { name: "comments" }] });
});
afterAll(() => t?.stop());

async function configure(s: PublishedSite, forms: unknown) {
  const r = await t.api("PATCH", `/api/v1/buckets/${s.pub.bucketId}`, { key: s.user.key, body: { bucket: { metadata: { publication_forms: forms } } } });
  expect(r.status).toBe(200);
}

/** A post as a browser on the site's page sends it: Origin of the site, a fresh client address (and, sent by script, a solved proof of work). */
async function post(s: PublishedSite, name: string, body: string | Record<string, unknown>, headers: Record<string, string> = {}) {
  // Every post carries a fill timer old enough, as Pier's own form markup does.
  const timer = filledTimer(t, s.pub.id, name as FormName);
  let sent: string;
  if (typeof body === "string") sent = `${body}&_pier_started=${encodeURIComponent(timer)}`;
  else sent = JSON.stringify({ _pier_started: timer, ...body, ...("altcha" in body ? {} : { altcha: await solveFormChallenge(t, s.host, headers.cookie) }) });
  const json = typeof body !== "string";
  return siteFetch(t, s.host, `/_pier/form/${name}`, {
    method: "POST",
    body: sent,
    headers: {
      origin: `http://${s.host}`,
      "content-type": json ? "application/json" : "application/x-www-form-urlencoded",
      "x-forwarded-for": `198.51.100.${++ipCounter % 250}`,
      ...(json ? { accept: "application/json" } : {}),
      ...headers,
    },
  });
}

const rows = (s: PublishedSite) => t.pier.deps.db.select().from(formSubmissions).where(eq(formSubmissions.bucketId, s.pub.bucketId)).all();

describe("POST /_pier/form/<name>", () => {
  test("a plain post is stored sealed and answered with a thank-you page linking back", async () => {
    const r = await post(site, "contact", "name=Ada&email=ada%40example.com&message=Hello+there", { referer: `http://${site.host}/pricing.html` });
    expect(r.status).toBe(200);
    const html = await r.text();
    expect(html).toContain("Thank you");
    expect(html).toContain('href="/pricing.html"');
    const stored = rows(site);
    expect(stored.length).toBe(1);
    // At rest only ciphertext: neither the message nor the address appear in the row.
    expect(stored[0]!.sealed).not.toContain("Hello");
    expect(JSON.stringify(stored[0])).not.toContain("ada@example.com");
    const opened = JSON.parse(t.pier.deps.secrets.open("form-submissions", stored[0]!.sealed, stored[0]!.id));
    expect(opened.fields).toEqual({ name: "Ada", email: "ada@example.com", message: "Hello there" });
    expect(opened.context.document_path).toBe("/pricing.html");
  });

  test("fetch gets JSON 201 with the submission id; _pier_return redirects a plain post back", async () => {
    const r = await post(site, "waitlist", { name: "Bo", email: "bo@example.com" });
    expect(r.status).toBe(201);
    const body = await r.json();
    expect(body.data.form_submission.id).toMatch(/^fsub_/);
    expect(body.data.form_submission.form_name).toBe("waitlist");
    const back = await post(site, "waitlist", "name=Cy&email=cy%40example.com&_pier_return=%2Fabout%3Fx%3D1");
    expect(back.status).toBe(303);
    expect(back.headers.get("location")).toBe("/about?x=1&pier_form=sent");
  });

  test("missing required fields: 422 naming each (JSON), or the form again with the input kept (HTML)", async () => {
    const before = rows(site).length;
    const j = await post(site, "waitlist", { email: "dee@example.com" });
    expect(j.status).toBe(422);
    const err = (await j.json()).error;
    expect(err.code).toBe("FORM_FIELDS_MISSING");
    expect(err.details.missing).toEqual(["name"]);
    const h = await post(site, "contact", "name=%3Cb%3EEve%3C%2Fb%3E&email=");
    expect(h.status).toBe(422);
    expect(h.headers.get("content-type")).toContain("text/html");
    const html = await h.text();
    expect(html).toContain("Please fill in: Email, Message.");
    // The visitor's input is shown again, escaped.
    expect(html).toContain('value="&lt;b&gt;Eve&lt;/b&gt;"');
    expect(html).not.toContain("<b>Eve</b>");
    expect(html).toContain('action="/_pier/form/contact"');
    expect(rows(site).length).toBe(before);
  });

  test("a rectangle selection and page number are kept as the immutable context", async () => {
    const selection = {
      version: 1,
      type: "rect",
      coordinates: [10, 20, 110, 70],
      coordinate_space: { width: 800, height: 600, unit: "image_pixel" },
      color: "#ff0000",
    };
    const r = await post(site, "contact", {
      email: "f@example.com",
      message: "This bit",
      _pier_path: "/docs/plan.pdf",
      _pier_page: 3,
      _pier_selection: selection,
    });
    expect(r.status).toBe(201);
    const id = (await r.json()).data.form_submission.id;
    const row = rows(site).find((x) => x.id === id)!;
    const opened = JSON.parse(t.pier.deps.secrets.open("form-submissions", row.sealed, row.id));
    expect(opened.context).toEqual({ document_path: "/docs/plan.pdf", document_page: 3, document_selection: selection });
    const bad = await post(site, "contact", { email: "f@example.com", message: "x", _pier_selection: { type: "circle" } });
    expect(bad.status).toBe(422);
  });

  test("a message at the form's limit is accepted in any script, plain or by script (CJK is 9 bytes a character urlencoded)", async () => {
    const message = "中".repeat(5000);
    const plain = await post(site, "contact", new URLSearchParams({ email: "cjk@example.com", message }).toString());
    expect(plain.status).toBe(200);
    const scripted = await post(site, "contact", { email: "cjk2@example.com", message: "я".repeat(5000) });
    expect(scripted.status).toBe(201);
    const stored = rows(site).map((r) => JSON.parse(t.pier.deps.secrets.open("form-submissions", r.sealed, r.id)).fields.message);
    expect(stored).toContain(message);
    expect(stored).toContain("я".repeat(5000));
  });

  test("unknown, unconfigured and (on a public site) comments forms are 404; a site without configuration has none", async () => {
    expect((await post(site, "newsletter", { email: "a@example.com" })).status).toBe(404);
    expect((await post(site, "quote", { email: "a@example.com", details: "x" })).status).toBe(404);
    expect((await post(site, "comments", { message: "hi" })).status).toBe(404);
    const bare = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>Bare</h1>" }] });
    const r = await post(bare, "contact", "email=a%40example.com&message=hi");
    expect(r.status).toBe(404);
    expect(await r.text()).toContain("This site has no such form.");
  });

  test("the plan's monthly quota is never exceeded (the fourth submission is refused and not stored)", async () => {
    const u = await t.user({ plan: "threeforms" });
    const s = await publishSite(t, { user: u, files: [{ path: "index.html", bytes: "<h1>Q</h1>" }] });
    await configure(s, { forms: [{ name: "contact" }] });
    const results = await Promise.all([1, 2, 3, 4, 5].map((i) => post(s, "contact", { email: `q${i}@example.com`, message: "hi" })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 403, 403]);
    const refused = await results.find((r) => r.status === 403)!.json();
    expect(refused.error.code).toBe("FORM_QUOTA_EXCEEDED");
    expect(rows(s).length).toBe(3);
  });

  test("a post refused for the quota does not spend its proof of work (a spent solution means a stored submission)", async () => {
    const u = await t.user({ plan: "threeforms" });
    const s = await publishSite(t, { user: u, files: [{ path: "index.html", bytes: "<h1>Q</h1>" }] });
    await configure(s, { forms: [{ name: "contact" }] });
    for (let i = 0; i < 3; i++) expect((await post(s, "contact", { email: `f${i}@example.com`, message: "hi" })).status).toBe(201);
    const altcha = await solveFormChallenge(t, s.host);
    for (let i = 0; i < 2; i++) {
      // Sent again, the same solution is refused for the quota again, not as already used.
      const r = await post(s, "contact", { email: "late@example.com", message: "hi", altcha });
      expect((await r.json()).error.code).toBe("FORM_QUOTA_EXCEEDED");
    }
  });
});
