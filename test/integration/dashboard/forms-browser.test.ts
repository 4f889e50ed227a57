// The Forms tab in real Chromium: turn forms on (which, hosted, required fields, positions), see
// the site's page follow, list submissions newest first with paging and the form filter, open
// one with its context, reply in public on a comment (seen by the site's visitors), delete the
// reply and then the submission; axe on both pages.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { Browser as HttpBrowser, signedIn } from "../../helpers/browser";
import { launchChromium } from "../../helpers/chromium";
import { expectAccessible, screenshot, signIn, submit } from "../../helpers/dashboard";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";
import { filledTimer } from "../../helpers/forms";
import type { FormName } from "../../../src/features/forms/definitions";

let t: TestPier;
let browser: Browser;
let site: PublishedSite;
let ip = 0;
beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
  site = await publishSite(t, { access: "password", files: [{ path: "index.html", bytes: "<!doctype html><html><body><h1>Club</h1></body></html>" }] });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

async function visitorCookie(): Promise<string> {
  const r = await siteFetch(t, site.host, "/_pier/gate/password", {
    method: "POST",
    body: new URLSearchParams({ password: site.password!, next: "/" }).toString(),
    headers: { origin: `http://${site.host}`, "content-type": "application/x-www-form-urlencoded" },
  });
  const cookie = r.headers.get("set-cookie");
  if (!cookie) throw new Error(`gate: ${r.status}`);
  return cookie.split(";")[0]!;
}

async function visitorPost(cookie: string, form: FormName, fields: Record<string, string>) {
  const r = await siteFetch(t, site.host, `/_pier/form/${form}`, {
    method: "POST",
    body: new URLSearchParams({ ...fields, _pier_started: filledTimer(t, site.pub.id, form) }).toString(),
    headers: { origin: `http://${site.host}`, "content-type": "application/x-www-form-urlencoded", cookie, "x-forwarded-for": `198.51.100.${++ip}` },
  });
  if (r.status !== 200) throw new Error(`post: ${r.status} ${await r.text()}`);
}

test("configure forms, read, reply in public, delete", async () => {
  const base = `/dashboard/buckets/${site.pub.bucketId}`;
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await signIn(page, t, site.user, `${base}/forms`);
  expect(await page.textContent("main")).toContain("No submissions yet");
  await expectAccessible(page);

  await page.check("input[name=forms][value=contact]");
  await page.check("input[name=forms][value=comments]");
  await page.check("input[name=required_contact][value=name]");
  await page.selectOption("#desktop-contact", "top-left");
  await page.selectOption("#mobile-contact", "bottom-center");
  await page.uncheck("input[name=hosted_comments]");
  await submit(page, 'form[action$="/forms/settings"] button[type=submit]');
  expect(await page.textContent("main")).toContain("The form settings are saved");
  expect(await page.isChecked("input[name=forms][value=contact]")).toBe(true);

  const bucket = await t.api("GET", `/api/v1/buckets/${site.pub.bucketId}`, { key: site.user.key });
  const forms = bucket.body.data.bucket.metadata.publication_forms;
  expect(forms.enabled).toBe(true);
  expect(forms.forms).toEqual([
    { name: "contact", hosted: true, required_fields: ["name", "email", "message"], widget_position: { desktop: "top-left", mobile: "bottom-center" } },
    { name: "comments", hosted: false, required_fields: ["message"], widget_position: { desktop: "bottom-right", mobile: "bottom-right" } },
  ]);

  const cookie = await visitorCookie();
  for (let i = 1; i <= 26; i++) await visitorPost(cookie, "contact", { name: `Ada ${i}`, email: `a${i}@example.com`, message: `message number ${i}` });
  t.clock.advance(1_000);
  await visitorPost(cookie, "comments", { name: "Bo", message: "<b>A public comment</b>", _pier_path: "/club" });

  await page.goto(`http://localhost:${t.pier.httpPort}${base}/forms`);
  const rows = page.locator("#submissions tbody tr");
  expect(await rows.count()).toBe(25);
  expect(await rows.first().textContent()).toContain("Bo");
  expect(await page.textContent("#submissions")).toContain("27 submission(s)");
  await submit(page, "text=Older →");
  expect(await rows.count()).toBe(2);
  await page.selectOption("#form-filter", "comments");
  await submit(page, "#submissions button[type=submit]");
  expect(await rows.count()).toBe(1);
  await screenshot(page, "dashboard-forms");

  await submit(page, "#submissions tbody a");
  const main = (await page.textContent("main"))!;
  expect(main).toContain("<b>A public comment</b>"); // shown as text, never as markup
  expect(main).toContain("/club");
  await expectAccessible(page);
  // Only spaces: refused next to the box, said once (not also at the top), the box kept.
  await page.fill("#message", "   ");
  await submit(page, "#replies button[type=submit]");
  expect(await page.textContent("#message-error")).toContain("must not be empty");
  expect((await page.textContent("main"))!.split("must not be empty").length - 1).toBe(1);
  await page.fill("#message", "Thanks, Bo!");
  await page.check("input[name=audience][value=public]");
  await submit(page, "#replies button[type=submit]");
  expect(await page.textContent("main")).toContain("Your reply is saved");
  await screenshot(page, "dashboard-form-submission");

  // The API and the site's other visitors see the public reply.
  const list = await t.api("GET", `/api/v1/buckets/${site.pub.bucketId}/form_submissions?form_name=comments`, { key: site.user.key });
  const comment = list.body.data.form_submissions[0];
  expect(comment.replies.map((r: { message: string; audience: string }) => [r.message, r.audience])).toEqual([["Thanks, Bo!", "public"]]);
  const shared = await (await siteFetch(t, site.host, "/_pier/form/comments", { headers: { cookie: await visitorCookie() } })).json();
  expect(JSON.stringify(shared.data.comments)).toContain("Thanks, Bo!");

  await submit(page, "text=Delete this reply");
  expect(await page.textContent("main")).toContain("The reply is deleted");
  // Deleting the submission needs its box ticked (D273): the browser refuses the form before.
  await page.check("input[name=confirm]");
  await submit(page, "text=Delete the submission and its replies");
  expect(await page.textContent("main")).toContain("The submission and its replies are deleted");
  const after = await t.api("GET", `/api/v1/buckets/${site.pub.bucketId}/form_submissions`, { key: site.user.key });
  expect(after.body.data.pagination.total_count).toBe(26);
  expect(after.body.data.form_submissions.some((s: { id: string }) => s.id === comment.id)).toBe(false);

  // Another account's bucket is the normal not-found page.
  const stranger = await t.user();
  const other = await (await browser.newContext()).newPage();
  await signIn(other, t, stranger, "/dashboard");
  const r = await other.goto(`http://localhost:${t.pier.httpPort}${base}/forms/${comment.id}`);
  expect(r!.status()).toBe(404);
}, 60_000);

test("a submission's stored values are corrected from its page (HTTP), as the API's PATCH does: no new field, the limits kept", async () => {
  const base = `/dashboard/buckets/${site.pub.bucketId}`;
  const config = { enabled: true, forms: [{ name: "contact" }] };
  expect(
    (await t.api("PATCH", `/api/v1/buckets/${site.pub.bucketId}`, { key: site.user.key, body: { bucket: { metadata: { publication_forms: config } } } }))
      .status,
  ).toBe(200);
  await visitorPost(await visitorCookie(), "contact", { name: "Cy", email: "cy@exmaple.com", message: "call me" });
  const read = async () =>
    (await t.api("GET", `/api/v1/buckets/${site.pub.bucketId}/form_submissions?form_name=contact&limit=1`, { key: site.user.key })).body.data
      .form_submissions[0];
  const sub = await read();
  expect(sub.fields.email).toBe("cy@exmaple.com");

  const http = new HttpBrowser(`http://localhost:${t.pier.httpPort}`);
  expect((await http.submit("/signin", "/signin", { email: site.user.email, password: site.user.password })).status).toBe(303);
  const pagePath = `${base}/forms/${sub.id}`;
  const formCsrf = (html: string) => [...html.matchAll(/name="csrf" value="([^"]+)"/g)].map((m) => m[1]!).find((v) => v.includes("~"))!;
  const page = (await http.get(pagePath)).text;
  expect(page).toContain('<h2 id="correct-h">Correct the values</h2>');
  expect(page).toMatch(/<label for="fix-\d">Email<\/label>\s*<textarea id="fix-\d" name="field:email"[^>]*>cy@exmaple\.com<\/textarea>/);

  const done = await http.post(`${pagePath}/fields`, { csrf: formCsrf(page), "field:name": "Cy", "field:email": "cy@example.com", "field:message": "call me" });
  expect(done.status).toBe(303);
  expect(done.location).toContain("done=corrected");
  expect((await read()).fields).toMatchObject({ name: "Cy", email: "cy@example.com", message: "call me" });

  // A field the submission does not have is refused (the API's rule), and nothing changes.
  const unknown = await http.post(`${pagePath}/fields`, {
    csrf: formCsrf((await http.get(pagePath)).text),
    "field:email": "x@example.com",
    "field:phone": "1",
  });
  expect(unknown.status).toBe(422);
  expect(unknown.text).toContain("Only stored fields can be updated");
  // Over the field's limit: the message is next to that box, with the typing kept.
  const long = "n".repeat(201);
  const tooLong = await http.post(`${pagePath}/fields`, { csrf: formCsrf((await http.get(pagePath)).text), "field:name": long });
  expect(tooLong.status).toBe(422);
  expect(tooLong.text).toMatch(/<span class="field-error" id="fix-\d-error">fields\.name must be a string of at most 200 characters/);
  expect(tooLong.text).toContain(`>${long}</textarea>`);
  expect((await read()).fields.email).toBe("cy@example.com");
});

test("the month's quota: a number of a plan's limit, and in words on a plan without one (not 1,000,000,000)", async () => {
  const quotaOf = async (user: { email: string; password: string }, bucketId: string) => {
    const text = (await (await signedIn(`http://localhost:${t.pier.httpPort}`, user)).get(`/dashboard/buckets/${bucketId}/forms`)).text;
    return /<p class="small muted">([^<]*) Newest first\.<\/p>/.exec(text)?.[1];
  };
  const owner = await t.user({ plan: "owner" });
  const unlimited = await publishSite(t, { user: owner, files: [{ path: "index.html", bytes: "<h1>Owner</h1>" }] });
  const line = await quotaOf(owner, unlimited.pub.bucketId);
  expect(line).toMatch(/^0 submissions this month \(no limit; since \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\)\.$/);
  const pro = await t.user({ plan: "pro" });
  const limited = await publishSite(t, { user: pro, files: [{ path: "index.html", bytes: "<h1>Pro</h1>" }] });
  expect(await quotaOf(pro, limited.pub.bucketId)).toMatch(/^0 of 10,000 submissions used this month \(since /);
});
