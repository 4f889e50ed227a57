// The Site tab's Preview card beyond publishing one: the folder it serves (prefilled with the
// site's, as the API's `publication_root_directory`), and "End the preview now", which takes
// the preview alone off its address (410, as `pier unpublish --preview` does) while the main
// site stays up. Another account's session ends nothing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { formTokenOf, signedIn, unescapeHtml } from "../../helpers/browser";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { siteFetch } from "../../helpers/sites";
import { syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
const previewRoot = (html: string) => /id="preview-publication_root_directory"[^>]*value="([^"]*)"/.exec(html)?.[1];
beforeAll(async () => {
  t = await startTestPier({ publishRateLimitPerMinute: 1000 });
});
afterAll(() => t?.stop());

test("a preview serves the folder chosen on its form, and End the preview now takes it alone off its address", async () => {
  const u = await t.user({ plan: "pro" });
  const bucket = await createBucket(t, u, { title: "Preview card" });
  await syncFiles(t, u.key, bucket.id, [
    textFile("index.html", "<p>the whole bucket</p>", "text/html"),
    textFile("dist/index.html", "<p>the build</p>", "text/html"),
  ]);
  const main = (await t.api("POST", `/api/v1/buckets/${bucket.id}/publication`, { key: u.key, body: { publication_root_directory: "dist" } })).body.data
    .publication;
  await t.pier.runner.drain();
  const mainHost = `${main.public_slug}.${t.pier.deps.urls.sitesDomain}`;
  const previewHost = `preview-${mainHost}`;

  const b = await signedIn(t.url, u);
  const page = (await b.get(`/dashboard/buckets/${bucket.id}/site`)).text;
  // The preview form starts from the folder the site serves.
  expect(previewRoot(page)).toBe("dist");
  expect(page).not.toContain("End the preview now");
  const made = await b.post(`/dashboard/buckets/${bucket.id}/site/preview`, {
    csrf: formTokenOf(page),
    site_mode: "static",
    access_mode: "",
    publication_root_directory: "dist",
    expires_in_minutes: "60",
  });
  expect([made.status, made.location]).toEqual([303, expect.stringContaining("done=preview")]);
  await t.pier.runner.drain();
  expect(await (await siteFetch(t, previewHost, "/")).text()).toBe("<p>the build</p>");
  const preview = (await t.api("GET", `/api/v1/publications?include_manifest=false`, { key: u.key })).body.data.publications.find(
    (p: { kind: string }) => p.kind === "preview",
  );
  expect(preview.publication_root_directory).toBe("dist");

  // Another account's session ends nothing: the bucket is not found for it.
  const stranger = await signedIn(t.url, await t.user({ plan: "pro" }));
  const strangerPage = (await stranger.get("/dashboard/buckets")).text;
  const refused = await stranger.post(`/dashboard/buckets/${bucket.id}/site/preview-end`, { csrf: formTokenOf(strangerPage) });
  expect(refused.status).toBe(404);
  expect((await siteFetch(t, previewHost, "/")).status).toBe(200);

  const withPreview = (await b.get(`/dashboard/buckets/${bucket.id}/site`)).text;
  expect(withPreview).toContain("End the preview now");
  const ended = await b.post(`/dashboard/buckets/${bucket.id}/site/preview-end`, { csrf: formTokenOf(withPreview) });
  expect([ended.status, ended.location]).toEqual([303, expect.stringContaining("done=preview-ended")]);
  expect((await siteFetch(t, previewHost, "/")).status).toBe(410);
  expect(await (await siteFetch(t, mainHost, "/")).text()).toBe("<p>the build</p>");
  const after = (await b.get(ended.location!)).text;
  expect(after).toContain("Preview ended: its address answers 410 Gone from now on.");
  expect(after).not.toContain("End the preview now");
  // Asked again (a second tab): nothing left to end, said plainly.
  const again = await b.post(`/dashboard/buckets/${bucket.id}/site/preview-end`, { csrf: formTokenOf(after) });
  expect(again.location).toContain("done=preview-gone");
  expect((await b.get(again.location!)).text).toContain("There was no live preview to end.");
});

test("a bucket with only a preview can end it from the dashboard", async () => {
  const u = await t.user({ plan: "pro" });
  const bucket = await createBucket(t, u, { title: "Only a preview" });
  await syncFiles(t, u.key, bucket.id, [textFile("index.html", "<p>draft</p>", "text/html")]);
  const preview = (await t.api("POST", `/api/v1/buckets/${bucket.id}/publication/preview`, { key: u.key, body: { expires_in_minutes: 60 } })).body.data
    .publication;
  await t.pier.runner.drain();
  const host = new URL(preview.public_url).hostname;
  expect((await siteFetch(t, host, "/")).status).toBe(200);

  const b = await signedIn(t.url, u);
  const page = (await b.get(`/dashboard/buckets/${bucket.id}/site`)).text;
  expect(page).toContain("End the preview now");
  // While the bucket's visibility is locked, the preview stays up, as an expiry set by the API would be refused.
  expect((await t.api("POST", `/api/v1/buckets/${bucket.id}/visibility_change_lock`, { key: u.key, body: { reason: "launch" } })).status).toBe(200);
  const frozen = await b.post(`/dashboard/buckets/${bucket.id}/site/preview-end`, { csrf: formTokenOf(page) });
  expect(frozen.status).toBe(423);
  expect((await siteFetch(t, host, "/")).status).toBe(200);
  // Lifted as a person lifts it in Settings (that form's own tests are elsewhere; it asks for the password).
  t.pier.deps.sqlite
    .query("UPDATE buckets SET visibility_locked_at = NULL, visibility_locked_by = NULL, visibility_lock_reason = NULL WHERE id = ?")
    .run(bucket.id);
  const ended = await b.post(`/dashboard/buckets/${bucket.id}/site/preview-end`, {
    csrf: formTokenOf((await b.get(`/dashboard/buckets/${bucket.id}/site`)).text),
  });
  expect(ended.location).toContain("done=preview-ended");
  expect((await siteFetch(t, host, "/")).status).toBe(410);
});

test("the first publish names the site's address; a name taken gets a number; an unusable one is refused next to the field", async () => {
  const u = await t.user({ plan: "pro" });
  const b = await signedIn(t.url, u);
  const publishNamed = async (title: string, name: string) => {
    const bucket = await createBucket(t, u, { title });
    await syncFiles(t, u.key, bucket.id, [textFile("index.html", `<p>${title}</p>`, "text/html")]);
    const page = (await b.get(`/dashboard/buckets/${bucket.id}/site`)).text;
    expect(page).toContain('id="publish-slug_suggestions"');
    const r = await b.post(`/dashboard/buckets/${bucket.id}/site/publish`, {
      csrf: formTokenOf(page),
      site_mode: "static",
      access_mode: "public",
      publication_root_directory: "",
      slug_suggestions: name,
    });
    await t.pier.runner.drain();
    return { bucket, r };
  };
  const slugOf = async (bucketId: string) =>
    (
      (await t.api("GET", `/api/v1/publications?include_manifest=false`, { key: u.key })).body.data.publications as {
        bucket_id: string;
        kind: string;
        public_slug: string;
      }[]
    ).find((p) => p.bucket_id === bucketId && p.kind === "main")?.public_slug;

  const name = `team-notes-${Date.now().toString(36)}`;
  const first = await publishNamed("Notes", name);
  expect(first.r.status).toBe(303);
  expect(await slugOf(first.bucket.id)).toBe(name);
  const second = await publishNamed("Notes again", name);
  expect(await slugOf(second.bucket.id)).toBe(`${name}-2`);
  // Once published, the address is renamed in its own form: the publish form no longer offers it.
  expect((await b.get(`/dashboard/buckets/${first.bucket.id}/site`)).text).not.toContain('id="publish-slug_suggestions"');

  const refused = await publishNamed("Reserved", "www");
  expect(refused.r.status).toBe(422);
  expect(refused.r.text).toContain('id="publish-slug_suggestions-error"');
  expect(refused.r.text).toContain('value="www"');
});

test("the Analytics tab shows the site's figures or, switched, its preview's; the window form keeps the choice", async () => {
  const u = await t.user({ plan: "pro" });
  const bucket = await createBucket(t, u, { title: "Counted preview" });
  await syncFiles(t, u.key, bucket.id, [textFile("index.html", "<p>counted</p>", "text/html")]);
  const main = (await t.api("POST", `/api/v1/buckets/${bucket.id}/publication`, { key: u.key, body: {} })).body.data.publication;
  await t.pier.runner.drain();
  const b = await signedIn(t.url, u);
  expect((await b.get(`/dashboard/buckets/${bucket.id}/analytics`)).text).not.toContain('id="analytics-which"'); // no preview yet
  const preview = (await t.api("POST", `/api/v1/buckets/${bucket.id}/publication/preview`, { key: u.key, body: { expires_in_minutes: 60 } })).body.data
    .publication;
  await t.pier.runner.drain();
  const browser = { "user-agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0" };
  await (await siteFetch(t, new URL(main.public_url).hostname, "/", { headers: browser })).arrayBuffer();
  for (let i = 0; i < 3; i++) await (await siteFetch(t, new URL(preview.public_url).hostname, "/", { headers: browser })).arrayBuffer();
  t.pier.deps.analytics.flush();

  const allTime = (html: string) => /<th scope="row">All time<\/th><td>(\d+)<\/td>/.exec(html)?.[1];
  const site = (await b.get(`/dashboard/buckets/${bucket.id}/analytics?range=24h`)).text;
  expect(site).toContain('id="analytics-which"');
  expect(allTime(site)).toBe("1");
  const previewPage = (await b.get(`/dashboard/buckets/${bucket.id}/analytics?site=preview&range=24h`)).text;
  expect(allTime(previewPage)).toBe("3");
  expect(previewPage).toContain('<input type="hidden" name="site" value="preview">');
  // The account's page tells the two apart (they share the bucket's title), each linking its own tab.
  const account = unescapeHtml((await b.get("/dashboard/analytics?range=24h")).text);
  expect(account).toContain(`<a href="/dashboard/buckets/${bucket.id}/analytics?range=24h">Counted preview</a>`);
  expect(account).toContain(`<a href="/dashboard/buckets/${bucket.id}/analytics?range=24h&site=preview">Counted preview (preview)</a>`);
});

test("a require_email preview says who may open it and, without a mail relay, how visitors get in", async () => {
  const u = await t.user({ plan: "pro" });
  const bucket = await createBucket(t, u, { title: "Email preview" });
  await syncFiles(t, u.key, bucket.id, [textFile("index.html", "<p>members</p>", "text/html")]);
  const b = await signedIn(t.url, u);
  const made = await b.post(`/dashboard/buckets/${bucket.id}/site/preview`, {
    csrf: formTokenOf((await b.get(`/dashboard/buckets/${bucket.id}/site`)).text),
    site_mode: "static",
    access_mode: "require_email",
    expires_in_minutes: "60",
  });
  expect(made.status).toBe(303);
  await t.pier.runner.drain();
  const page = (await b.get(`/dashboard/buckets/${bucket.id}/site`)).text;
  expect(page).toContain('<p class="small" id="preview-access">Who may open it: Visitors confirm their email address</p>');
  // This test server has no relay: codes wait in the outbox, and the owner is told what to do.
  expect(page).toContain("personal link");
  expect(page).toContain("pier admin mail outbox");
});
