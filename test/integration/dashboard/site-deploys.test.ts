// The Site tab's Deploys list: each build listed with the live one marked, 20 a page, and its Rollback
// button switching the site through the rollback service (the site answers from the earlier
// deploy at once); a forged or foreign deploy id changes nothing. The live deploy's site rules
// summary; the site's expiry. A member opens the tab too.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { sessions } from "../../../src/db/schema";
import { addMember } from "../../../src/features/accounts/service";
import { createSession } from "../../../src/features/accounts/sessions";
import { Browser, unescapeHtml } from "../../helpers/browser";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { siteFetch } from "../../helpers/sites";
import { syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
const formCsrf = (html: string) => [...html.matchAll(/name="csrf" value="([^"]+)"/g)].map((m) => m[1]!).find((v) => v.includes("~"))!;
beforeAll(async () => {
  t = await startTestPier({ publishRateLimitPerMinute: 1000 });
});
afterAll(() => t?.stop());

test("the Deploys list marks the live deploy and its Rollback button serves an earlier one at once", async () => {
  const u = await t.user({ plan: "pro" });
  const bucket = await createBucket(t, u, { title: "Dashboard Rollback" });
  const publish = async (text: string) => {
    await syncFiles(t, u.key, bucket.id, [textFile("index.html", text, "text/html")]);
    const r = await t.api("POST", `/api/v1/buckets/${bucket.id}/publication`, { key: u.key, body: {} });
    await t.pier.runner.drain();
    return r.body.data.publication;
  };
  const pub = await publish("<p>first</p>");
  await publish("<p>second</p>");
  const deploys = (await t.api("GET", `/api/v1/publications/${pub.id}/deploys`, { key: u.key })).body.data.deploys;
  const host = `${pub.public_slug}.${t.pier.deps.urls.sitesDomain}`;

  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  const page = (await b.get(`/dashboard/buckets/${bucket.id}/site`)).text;
  expect(page).toContain('id="deploys-h"');
  expect(page).toContain(deploys[0].id);
  expect(page).toContain(deploys[1].id);
  // One Rollback button: on the earlier deploy, not on the live one.
  expect([...page.matchAll(/name="deploy_id" value="([^"]+)"/g)].map((m) => m[1])).toEqual([deploys[1].id]);

  const done = await b.post(`/dashboard/buckets/${bucket.id}/site/rollback`, { csrf: formCsrf(page), deploy_id: deploys[1].id });
  expect(done.status).toBe(303);
  expect(done.location).toContain("done=rollback");
  expect(await (await siteFetch(t, host, "/")).text()).toBe("<p>first</p>");
  const after = (await b.get(done.location!)).text;
  expect(after).toContain("Rolled back: the site serves that deploy now.");
  expect([...after.matchAll(/name="deploy_id" value="([^"]+)"/g)].map((m) => m[1])).toEqual([deploys[0].id]);

  // A deploy id of another site is refused on the page; the site keeps serving.
  const other = await createBucket(t, u, { title: "Dashboard Other" });
  await syncFiles(t, u.key, other.id, [textFile("index.html", "<p>other</p>", "text/html")]);
  const otherPub = (await t.api("POST", `/api/v1/buckets/${other.id}/publication`, { key: u.key, body: {} })).body.data.publication;
  await t.pier.runner.drain();
  const otherDeploy = (await t.api("GET", `/api/v1/publications/${otherPub.id}/deploys`, { key: u.key })).body.data.deploys[0].id;
  const refused = await b.post(`/dashboard/buckets/${bucket.id}/site/rollback`, { csrf: formCsrf(after), deploy_id: otherDeploy });
  expect(refused.status).toBe(404);
  expect(refused.text).toContain(otherDeploy);
  expect(await (await siteFetch(t, host, "/")).text()).toBe("<p>first</p>");
});

test("the Deploys list pages 20 at a time as the API's offset does; Rollback only where the API allows one", async () => {
  const u = await t.user();
  const bucket = await createBucket(t, u, { title: "Many deploys" });
  let pubId = "";
  for (let i = 1; i <= 22; i++) {
    await syncFiles(t, u.key, bucket.id, [textFile("index.html", `<p>${i}</p>`, "text/html")]);
    pubId = (await t.api("POST", `/api/v1/buckets/${bucket.id}/publication`, { key: u.key, body: {} })).body.data.publication.id;
    await t.pier.runner.drain();
  }
  const api = async (offset: number) =>
    (await t.api("GET", `/api/v1/publications/${pubId}/deploys?offset=${offset}`, { key: u.key })).body.data.deploys as {
      id: string;
      rollback_available: boolean;
      live: boolean;
    }[];
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  const listed = (page: string) => [...page.matchAll(/<td class="small wrap"><code>([^<]+)<\/code>/g)].map((m) => m[1]);
  const buttons = (page: string) => [...page.matchAll(/name="deploy_id" value="([^"]+)"/g)].map((m) => m[1]);
  const rollbackable = (ds: Awaited<ReturnType<typeof api>>) => ds.filter((d) => d.rollback_available && !d.live).map((d) => d.id);

  const first = (await b.get(`/dashboard/buckets/${bucket.id}/site`)).text;
  const newest = await api(0);
  expect(listed(first)).toEqual(newest.map((d) => d.id));
  expect(buttons(first)).toEqual(rollbackable(newest));
  expect(first).toContain("1-20 of 22, newest first");
  expect(first).not.toContain("← Newer");
  const older = /<a href="([^"]+)">Older →<\/a>/.exec(first)![1]!.replaceAll("&#61;", "=");
  expect(older).toBe(`/dashboard/buckets/${bucket.id}/site?deploys_offset=20#deploys`);

  // The two oldest are past the plan's deploy history (20): pruned, no Rollback button.
  const second = (await b.get(older.replace("#deploys", ""))).text;
  const oldest = await api(20);
  expect(listed(second)).toEqual(oldest.map((d) => d.id));
  expect(oldest.every((d) => !d.rollback_available)).toBe(true);
  expect(buttons(second)).toEqual([]);
  expect(second).toContain("21-22 of 22, newest first");
  expect(second).toContain("← Newer");
  expect(second).not.toContain("Older →");
}, 120_000);

test("the Site rules block shows the live deploy's site_rules as the publication gives them: counts, warnings with line numbers", async () => {
  const u = await t.user();
  const bucket = await createBucket(t, u, { title: "Rules" });
  await syncFiles(t, u.key, bucket.id, [textFile("index.html", "<p>hi</p>", "text/html")]);
  const pubId = (await t.api("POST", `/api/v1/buckets/${bucket.id}/publication`, { key: u.key, body: {} })).body.data.publication.id;
  await t.pier.runner.drain();
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  expect((await b.get(`/dashboard/buckets/${bucket.id}/site`)).text).toContain("The live deploy has no <code>_redirects</code> or <code>_headers</code> file.");

  await syncFiles(
    t,
    u.key,
    bucket.id,
    [textFile("_redirects", "/old /new 301\n/tea /pot 418\n/a/* /b/:splat\n"), textFile("_headers", "/*\n  X-Frame-Options: DENY\n")],
    { deleteMissing: false },
  );
  await t.api("POST", `/api/v1/buckets/${bucket.id}/publication`, { key: u.key, body: {} });
  await t.pier.runner.drain();
  const rules = (await t.api("GET", `/api/v1/publications/${pubId}`, { key: u.key })).body.data.publication.site_rules;
  expect(rules).toMatchObject({ redirects: 2, headers: 1 });
  expect(rules.warnings).toHaveLength(1);
  const page = unescapeHtml((await b.get(`/dashboard/buckets/${bucket.id}/site`)).text);
  const block = page.slice(page.indexOf('id="site-rules-h"'), page.indexOf('id="deploys-h"'));
  expect(block).toContain("<dd>2 rules from <code>_redirects</code></dd>");
  expect(block).toContain("<dd>1 block from <code>_headers</code></dd>");
  const w = rules.warnings[0];
  expect(block).toContain(`<tr><td><code>${w.file}</code></td><td>${w.line}</td><td class="wrap">${w.message}</td></tr>`);
  expect(w).toMatchObject({ file: "_redirects", line: 2 });
}, 60_000);

test("the Expiry form sets and removes expires_at through the publication PATCH; a past time and the visibility lock are refused as the API refuses them", async () => {
  const u = await t.user();
  const bucket = await createBucket(t, u, { title: "Expiring" });
  await syncFiles(t, u.key, bucket.id, [textFile("index.html", "<p>hi</p>", "text/html")]);
  const pubId = (await t.api("POST", `/api/v1/buckets/${bucket.id}/publication`, { key: u.key, body: {} })).body.data.publication.id;
  await t.pier.runner.drain();
  const expiresAt = async () => (await t.api("GET", `/api/v1/publications/${pubId}`, { key: u.key })).body.data.publication.expires_at;
  const site = `/dashboard/buckets/${bucket.id}/site`;
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  const post = async (form: Record<string, string>) => b.post(`${site}/expiry`, { csrf: formCsrf((await b.get(site)).text), ...form });

  const later = new Date(t.clock.now().getTime() + 7 * 86_400_000).toISOString();
  const set = await post({ expires_at: later });
  expect([set.status, set.location]).toEqual([303, `${site}?done=expiry#expiry`]);
  expect(await expiresAt()).toBe(later);

  const past = await post({ expires_at: "2001-01-01T00:00:00Z" });
  expect(past.status).toBe(422);
  expect(past.text).toContain('<span class="field-error" id="expiry-expires_at-error">Choose a time in the future, or remove the expiry.</span>');
  expect(past.text).toContain('value="2001-01-01T00:00:00Z" aria-invalid="true"');
  expect((await post({ expires_at: "next week" })).text).toContain('id="expiry-expires_at-error">Give a date and time in UTC');

  // D281: while the visibility lock is set, neither a new expiry nor its removal goes through.
  await t.api("POST", `/api/v1/buckets/${bucket.id}/visibility_change_lock`, { key: u.key, body: { reason: "launch" } });
  for (const form of [{ remove: "1" }, { expires_at: new Date(t.clock.now().getTime() + 86_400_000).toISOString() }] as Record<string, string>[]) {
    const locked = await post(form);
    expect(locked.status).toBe(423);
    expect(locked.text).toContain('class="alert error"');
  }
  expect(await expiresAt()).toBe(later);
  // Only a person signed in to the dashboard thaws it.
  const thaw = await b.post(`/dashboard/buckets/${bucket.id}/settings/visibility/unlock`, { csrf: formCsrf((await b.get(site)).text) });
  expect(thaw.status).toBe(303);
  const removed = await post({ remove: "1" });
  expect([removed.status, removed.location]).toEqual([303, `${site}?done=expiry-removed#expiry`]);
  expect(await expiresAt()).toBeNull();
}, 60_000);

test("a member of the account (bucket_write) opens a live protected site's tab, without its password, leads or links", async () => {
  const owner = await t.user({ plan: "pro" });
  const bucket = await createBucket(t, owner, { title: "Team Site" });
  await syncFiles(t, owner.key, bucket.id, [textFile("index.html", "<p>team</p>", "text/html")]);
  const pub = (
    await t.api("POST", `/api/v1/buckets/${bucket.id}/publication`, { key: owner.key, body: { access_mode: "password", password: "team-secret-1" } })
  ).body.data.publication;
  await t.pier.runner.drain();
  const member = await t.user();
  addMember(t.pier.deps, owner.accountId, member.userId, "member");
  // A browser session in the team account (as for a user whose default account it is).
  const { token, session } = createSession(t.pier.deps, member.userId, { remember: false });
  t.pier.deps.db.update(sessions).set({ accountId: owner.accountId }).where(eq(sessions.id, session.id)).run();
  const res = await fetch(`${t.url}/dashboard/buckets/${bucket.id}/site`, { headers: { cookie: `pier_session=${token}` }, redirect: "manual" });
  expect(res.status).toBe(200);
  const page = await res.text();
  expect(page).toContain(`${pub.public_slug}.${t.pier.deps.urls.sitesDomain}`);
  expect(page).toContain('id="deploys-h"');
  expect(page).not.toContain("team-secret-1");
  expect(page).not.toContain("Generate a new password");
});

test("the Site tab lists a require_email site's confirmed visitors a page at a time, with the count", async () => {
  const u = await t.user({ plan: "pro" });
  const bucket = await createBucket(t, u, { title: "Leads Site" });
  await syncFiles(t, u.key, bucket.id, [textFile("index.html", "<p>leads</p>", "text/html")]);
  const pub = (await t.api("POST", `/api/v1/buckets/${bucket.id}/publication`, { key: u.key, body: { access_mode: "require_email" } })).body.data.publication;
  await t.pier.runner.drain();
  const insert = t.pier.deps.sqlite.prepare(
    "INSERT INTO site_leads (publication_id, email, first_access_at, last_access_at, access_count) VALUES (?, ?, '2020-01-01T00:00:00.000Z', ?, 1)",
  );
  // lead000 is the oldest visit, lead149 the most recent.
  for (let i = 0; i < 150; i++) insert.run(pub.id, `lead${String(i).padStart(3, "0")}@example.com`, new Date(Date.UTC(2020, 0, 2, 0, 0, i)).toISOString());
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  const leadsOn = (html: string) => [...html.matchAll(/<td class="wrap">(lead\d+)@example\.com<\/td>/g)].map((m) => m[1]);
  const first = (await b.get(`/dashboard/buckets/${bucket.id}/site`)).text;
  expect(leadsOn(first)).toHaveLength(100);
  expect(leadsOn(first)[0]).toBe("lead149");
  expect(first).toContain("1-100 of 150, most recent first");
  const older = /<a href="([^"]+)">Older →/.exec(first)![1]!.replaceAll("&#61;", "=").replaceAll("&amp;", "&");
  expect(older).toContain("leads_offset=100");
  const second = (await b.get(older)).text;
  expect(leadsOn(second)).toEqual(Array.from({ length: 50 }, (_, i) => `lead${String(49 - i).padStart(3, "0")}`));
  expect(second).toContain("101-150 of 150, most recent first");
  expect(second).toContain("← Newer");
  expect(second).not.toContain("Older →");
});

test("the Site settings form changes title, description, clean addresses and tracking through the publication PATCH", async () => {
  const u = await t.user({ plan: "pro" });
  const bucket = await createBucket(t, u, { title: "Settings Site" });
  await syncFiles(t, u.key, bucket.id, [textFile("index.html", "<p>settings</p>", "text/html")]);
  const pub = (await t.api("POST", `/api/v1/buckets/${bucket.id}/publication`, { key: u.key, body: {} })).body.data.publication;
  await t.pier.runner.drain();
  const read = async () => (await t.api("GET", `/api/v1/publications/${pub.id}?include_manifest=false`, { key: u.key })).body.data.publication;
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  const site = `/dashboard/buckets/${bucket.id}/site`;
  const page = (await b.get(site)).text;
  expect(page).toContain('<h2 id="site-settings-h">Site settings</h2>');
  expect(page).toContain('<label for="settings-title">');
  expect(page).toContain('name="publication_analytics_enabled" checked');

  // Unticked boxes are sent as nothing by a browser: they turn the setting off.
  const done = await b.post(`${site}/settings`, {
    csrf: formCsrf(page),
    title: "My site",
    description: "What it is about",
    tracking_enabled: "on",
    publication_client_events_enabled: "on",
  });
  expect(done.status).toBe(303);
  expect(done.location).toContain("done=settings");
  const after = await read();
  expect(after).toMatchObject({
    title: "My site",
    description: "What it is about",
    clean_urls: false,
    tracking_enabled: true,
    publication_analytics_enabled: false,
    publication_client_events_enabled: true,
  });
  const shown = (await b.get(done.location!)).text;
  expect(shown).toContain("Site settings saved");
  expect(shown).toContain('value="My site"');
  expect(shown).toContain('name="publication_analytics_enabled">');
  expect(shown).toContain('name="tracking_enabled" checked');

  // The REST schema's limit is the form's: a refusal names the field, keeps the typing, changes nothing.
  const refused = await b.post(`${site}/settings`, { csrf: formCsrf(shown), title: "x".repeat(201), description: "kept text" });
  expect(refused.status).toBe(422);
  expect(refused.text).toContain('id="settings-title-error"');
  expect(refused.text).toContain("kept text");
  expect(await read()).toMatchObject({ title: "My site", clean_urls: false });
});

test("the preview form publishes a password preview on Free (paid settings may be tried in a preview) and shows its password", async () => {
  const u = await t.user();
  const bucket = await createBucket(t, u, { title: "Preview Access" });
  await syncFiles(t, u.key, bucket.id, [textFile("index.html", "<p>preview</p>", "text/html")]);
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  const site = `/dashboard/buckets/${bucket.id}/site`;
  const page = (await b.get(site)).text;
  expect(page).toContain('<label for="preview-access_mode">');
  expect(page).toContain('<option value="" selected>As the site: keep its protection</option>');
  expect(page).toContain('<label for="preview-password">');

  // A too-short password is refused next to the preview's own field.
  const short = await b.post(`${site}/preview`, { csrf: formCsrf(page), access_mode: "password", password: "abc", expires_in_minutes: "60" });
  expect(short.status).toBe(422);
  expect(short.text).toContain('id="preview-password-error"');
  expect(short.text).not.toContain('id="publish-password-error"');

  const done = await b.post(`${site}/preview`, {
    csrf: formCsrf(page),
    site_mode: "spa",
    access_mode: "password",
    password: "preview-secret-1",
    expires_in_minutes: "60",
  });
  expect(done.status).toBe(303);
  expect(done.location).toContain("done=preview");
  await t.pier.runner.drain();
  const pubs = (await t.api("GET", "/api/v1/publications?include_manifest=false", { key: u.key })).body.data.publications;
  const preview = pubs.find((p: { bucket_id: string; kind: string }) => p.bucket_id === bucket.id && p.kind === "preview");
  expect(preview).toMatchObject({ access_mode: "password", site_mode: "spa", publish_state: "ready" });
  expect(pubs.find((p: { bucket_id: string; kind: string }) => p.bucket_id === bucket.id && p.kind === "main")).toBeUndefined();
  const shown = (await b.get(site)).text;
  expect(shown).toContain('id="preview-site-password">preview-secret-1</code>');
  // The choice starts at "as the site" (no access_mode sent), so a preview keeps a protected site's gate (D254).
  expect(shown).toContain('id="preview-access_mode" name="access_mode"><option value="" selected>As the site');
});

test("the preview form's default choice keeps a password site's gate on the preview", async () => {
  const u = await t.user({ plan: "pro" });
  const bucket = await createBucket(t, u, { title: "Gated Preview" });
  await syncFiles(t, u.key, bucket.id, [textFile("index.html", "<p>gated</p>", "text/html")]);
  await t.api("POST", `/api/v1/buckets/${bucket.id}/publication`, { key: u.key, body: { access_mode: "password", password: "site-secret-1" } });
  await t.pier.runner.drain();
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  const site = `/dashboard/buckets/${bucket.id}/site`;
  const page = (await b.get(site)).text;
  // What a browser sends for the form as rendered: the access choice it shows selected.
  const select = /<select id="preview-access_mode" name="access_mode">([^]*?)<\/select>/.exec(page)![1]!;
  const chosen = /<option value="([^"]*)" selected>/.exec(select)?.[1] ?? /<option value="([^"]*)"/.exec(select)![1]!;
  const done = await b.post(`${site}/preview`, { csrf: formCsrf(page), site_mode: "static", access_mode: chosen, password: "", expires_in_minutes: "60" });
  expect(done.status).toBe(303);
  await t.pier.runner.drain();
  const pubs = (await t.api("GET", "/api/v1/publications?include_manifest=false", { key: u.key })).body.data.publications;
  const preview = pubs.find((p: { bucket_id: string; kind: string }) => p.bucket_id === bucket.id && p.kind === "preview");
  expect(preview).toMatchObject({ access_mode: "password", access_password: "site-secret-1" });
});

test("the publish form's folder to serve shows the live site's and keeps it on Publish again; empty serves the whole bucket", async () => {
  const u = await t.user();
  const bucket = await createBucket(t, u, { title: "Built Site" });
  await syncFiles(t, u.key, bucket.id, [textFile("index.html", "<p>source</p>", "text/html"), textFile("dist/index.html", "<p>built</p>", "text/html")]);
  const pub = (await t.api("POST", `/api/v1/buckets/${bucket.id}/publication`, { key: u.key, body: { publication_root_directory: "dist" } })).body.data
    .publication;
  await t.pier.runner.drain();
  const host = `${pub.public_slug}.${t.pier.deps.urls.sitesDomain}`;
  expect(await (await siteFetch(t, host, "/")).text()).toBe("<p>built</p>");

  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  const site = `/dashboard/buckets/${bucket.id}/site`;
  const page = (await b.get(site)).text;
  expect(page).toContain('<label for="publish-publication_root_directory">');
  expect(page).toMatch(/id="publish-publication_root_directory" name="publication_root_directory"[^>]*value="dist"/);
  // Publish again as the form is shown: the site keeps serving the folder an agent chose.
  const again = await b.post(`${site}/publish`, {
    csrf: formCsrf(page),
    site_mode: "static",
    access_mode: "public",
    password: "",
    publication_root_directory: "dist",
  });
  expect(again.status).toBe(303);
  await t.pier.runner.drain();
  expect(await (await siteFetch(t, host, "/")).text()).toBe("<p>built</p>");

  // A path the REST schema refuses (over 1,024 characters) is refused next to the field, nothing published.
  const long = `dist/${"x".repeat(1024)}`;
  const bad = await b.post(`${site}/publish`, { csrf: formCsrf((await b.get(site)).text), access_mode: "public", publication_root_directory: long });
  expect(bad.status).toBe(422);
  expect(bad.text).toContain('id="publish-publication_root_directory-error"');
  expect(bad.text).toContain(`value="${long}"`);

  const whole = await b.post(`${site}/publish`, { csrf: formCsrf((await b.get(site)).text), access_mode: "public", publication_root_directory: "" });
  expect(whole.status).toBe(303);
  await t.pier.runner.drain();
  expect(await (await siteFetch(t, host, "/")).text()).toBe("<p>source</p>");
  const read = (await t.api("GET", `/api/v1/publications/${pub.id}?include_manifest=false`, { key: u.key })).body.data.publication;
  expect(read.publication_root_directory).toBe("");
});
