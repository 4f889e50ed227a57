// Publications over real HTTP: the state machine (queued -> processing -> ready | failed,
// unpublishing -> unpublished), retry, settings-only reuse, bucket integration, slugs, access
// secrets, previews and the plan policy. Background work runs when the test drains the runner.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts, jobs, notifications, publications } from "../../../src/db/schema";
import { listOutbox } from "../../../src/features/mail/outbound";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { siteFetch } from "../../helpers/sites";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t.stop());

const host = (slug: string, preview = false) => `${preview ? "preview-" : ""}${slug}.${t.pier.deps.urls.sitesDomain}`;
const drain = () => t.pier.runner.drain();

async function bucketWith(u: TestUser, title: string, files: Record<string, string>): Promise<string> {
  const id = await newBucket(t, u.key, title);
  for (const [path, text] of Object.entries(files)) {
    const ct = path.endsWith(".html") ? "text/html; charset=utf-8" : path.endsWith(".json") ? "application/json" : "text/plain; charset=utf-8";
    const r = await directUpload(t, u.key, id, textFile(path, text, ct));
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${r.text}`);
  }
  return id;
}

const publish = (key: string, id: string, body: unknown = {}) => t.api("POST", `/api/v1/buckets/${id}/publication`, { key, body });
const readPub = async (key: string, id: string, q = "") => (await t.api("GET", `/api/v1/publications/${id}${q}`, { key })).body.data.publication;

describe("publish, build, serve, unpublish", () => {
  test("the state machine end to end, with exclusions, bucket fields and UNPUBLISH_FIRST", async () => {
    const u = await t.user({ plan: "pro" });
    const id = await bucketWith(u, "Walkthrough Site", { "index.html": "<h1>home</h1>", "about.html": "<p>about</p>", "package-lock.json": "{}" });
    const r = await publish(u.key, id, { slug_suggestions: ["Walk Through!"], site_type: "website", analytics_enabled: false });
    expect(r.status).toBe(202);
    const p = r.body.data.publication;
    expect(p).toMatchObject({
      status: "publishing",
      publish_state: "queued",
      publish_pending: true,
      public_slug: "walk-through",
      site_mode: "static",
      site_type: "website",
      publication_analytics_enabled: false,
      publication_client_events_enabled: true,
    });
    expect(p.access_password).toBeUndefined();
    // Queued on a first publish: the site does not exist yet.
    expect((await siteFetch(t, host(p.public_slug), "/")).status).toBe(404);
    expect((await t.api("GET", `/api/v1/buckets/${id}`, { key: u.key })).body.data.bucket.publication_lifecycle_active).toBe(true);

    await drain();
    const ready = await readPub(u.key, p.id);
    expect(ready).toMatchObject({ status: "published", publish_state: "ready", publish_pending: false, published_files_count: 2 });
    expect(ready.manifest.map((f: { path: string }) => f.path)).toEqual(["about.html", "index.html"]);
    expect(ready.publish_started_at).toBeTruthy();
    expect(ready.publish_completed_at).toBeTruthy();
    expect(await (await siteFetch(t, host("walk-through"), "/")).text()).toBe("<h1>home</h1>");
    expect((await siteFetch(t, host("walk-through"), "/package-lock.json")).status).toBe(404);

    const polled = await readPub(u.key, p.id, "?include_manifest=false");
    expect(polled.manifest).toBeUndefined();
    const list = (await t.api("GET", "/api/v1/publications", { key: u.key })).body.data.publications;
    expect(list[0].manifest.length).toBe(2);
    expect((await t.api("GET", "/api/v1/publications?include_manifest=false", { key: u.key })).body.data.publications[0].manifest).toBeUndefined();
    expect((await t.api("GET", `/api/v1/publications/${p.id}/manifest`, { key: u.key })).body.data.manifest.length).toBe(2);

    const b = (await t.api("GET", `/api/v1/buckets/${id}`, { key: u.key })).body.data.bucket;
    expect(b).toMatchObject({
      published: true,
      public_url: ready.public_url,
      publication_lifecycle_active: true,
      website: { published: true, status: "published", lifecycle_active: true },
    });
    expect(b.archive).toMatchObject({ allowed: false, required_action: "unpublish_first" });
    const archive = await t.api("POST", `/api/v1/buckets/${id}/archive`, { key: u.key });
    expect([archive.status, archive.body.error.code]).toEqual([409, "UNPUBLISH_FIRST"]);
    const del = await t.api("DELETE", `/api/v1/buckets/${id}`, { key: u.key, body: { confirmation: b.delete.confirmation } });
    expect(del.body.error.code).toBe("UNPUBLISH_FIRST");

    // Settings-only republish reuses the live deploy; a changed file makes a new one.
    const deploysBefore = t.pier.deps.sqlite.query("SELECT count(*) AS n FROM deploys WHERE publication_id = ?").get(p.id) as { n: number };
    expect((await publish(u.key, id, { site_mode: "spa" })).status).toBe(202);
    expect(await (await siteFetch(t, host("walk-through"), "/")).text()).toBe("<h1>home</h1>"); // old deploy live while queued
    await drain();
    expect((t.pier.deps.sqlite.query("SELECT count(*) AS n FROM deploys WHERE publication_id = ?").get(p.id) as { n: number }).n).toBe(deploysBefore.n);
    expect((await readPub(u.key, p.id)).site_mode).toBe("spa");
    await directUpload(t, u.key, id, textFile("index.html", "<h1>v2</h1>", "text/html; charset=utf-8"));
    await publish(u.key, id);
    await drain();
    expect(await (await siteFetch(t, host("walk-through"), "/")).text()).toBe("<h1>v2</h1>");

    // Two requests before the worker runs: only the newest builds (one new deploy).
    const deploysNow = (t.pier.deps.sqlite.query("SELECT count(*) AS n FROM deploys WHERE publication_id = ?").get(p.id) as { n: number }).n;
    await directUpload(t, u.key, id, textFile("index.html", "<h1>v3</h1>", "text/html; charset=utf-8"));
    await publish(u.key, id);
    await publish(u.key, id, { title: "newest" });
    await drain();
    expect((t.pier.deps.sqlite.query("SELECT count(*) AS n FROM deploys WHERE publication_id = ?").get(p.id) as { n: number }).n).toBe(deploysNow + 1);
    expect(await (await siteFetch(t, host("walk-through"), "/")).text()).toBe("<h1>v3</h1>");
    expect((await readPub(u.key, p.id)).title).toBe("newest");

    // A live preview is unpublished with the main site.
    const pv = (await t.api("POST", `/api/v1/buckets/${id}/publication/preview`, { key: u.key, body: { expires_in_minutes: 600 } })).body.data.publication;
    await drain();
    expect((await siteFetch(t, host(pv.public_slug, true), "/")).status).toBe(200);
    const un = await t.api("DELETE", `/api/v1/buckets/${id}/publication`, { key: u.key });
    expect(un.status).toBe(202);
    expect(un.body.data.publication).toMatchObject({ status: "unpublishing", publish_state: "unpublishing" });
    expect((await siteFetch(t, host("walk-through"), "/")).status).toBe(404);
    expect((await siteFetch(t, host(pv.public_slug, true), "/")).status).toBe(404);
    await drain();
    expect(await readPub(u.key, p.id)).toMatchObject({ status: "unpublished", published_files_count: 0 });
    expect((await t.api("GET", `/api/v1/buckets/${id}`, { key: u.key })).body.data.bucket).toMatchObject({
      published: false,
      publication_lifecycle_active: false,
    });
    expect((await t.api("POST", `/api/v1/buckets/${id}/archive`, { key: u.key })).status).toBe(200);
    // Archived: publishing is refused, nothing changes.
    const again = await publish(u.key, id);
    expect([again.status, again.body.error.code]).toEqual([409, "BUCKET_ARCHIVED"]);
    expect((await readPub(u.key, p.id)).status).toBe("unpublished");
  });

  test("a failed build records publish_error, notifies the owner (row + mail) and retry re-runs the saved request", async () => {
    const u = await t.user({ plan: "pro" });
    const id = await bucketWith(u, "Failing Site", { "docs/readme.txt": "hi" });
    const r = await publish(u.key, id, { publication_root_directory: "site", site_mode: "spa" });
    await drain();
    const failed = await readPub(u.key, r.body.data.publication.id);
    expect(failed.publish_state).toBe("failed");
    expect(failed.publish_error).toContain("site");
    expect(failed.status).toBe("unpublished");
    const n = t.pier.deps.db.select().from(notifications).where(eq(notifications.accountId, u.accountId)).all();
    expect(n.map((x) => x.kind)).toContain("publish_failed");
    expect(listOutbox(t.pier.deps).some((m) => m.to_address === u.email && m.kind === "publish-failed")).toBe(true);
    const early = await t.api("POST", `/api/v1/buckets/${id}/publication/retry`, { key: u.key });
    expect(early.status).toBe(202); // failed: retry allowed
    await drain();
    await directUpload(t, u.key, id, textFile("site/index.html", "<p>root</p>", "text/html; charset=utf-8"));
    const retry = await t.api("POST", `/api/v1/buckets/${id}/publication/retry`, { key: u.key });
    expect(retry.status).toBe(202);
    expect(retry.body.data.publication.publish_state).toBe("queued");
    await drain();
    const ok = await readPub(u.key, failed.id);
    expect(ok).toMatchObject({ publish_state: "ready", status: "published", site_mode: "spa", publication_root_directory: "site" });
    expect(await (await siteFetch(t, host(ok.public_slug), "/deep/link", { headers: { accept: "text/html" } })).text()).toBe("<p>root</p>");
    const none = await t.api("POST", `/api/v1/buckets/${id}/publication/retry`, { key: u.key });
    expect([none.status, none.body.error.code]).toEqual([409, "NOTHING_TO_RETRY"]);
  });

  test("a publication left without a job is recovered by the sweeper", async () => {
    const u = await t.user({ plan: "pro" });
    const id = await bucketWith(u, "Lost Job Site", { "index.html": "x" });
    const p = (await publish(u.key, id)).body.data.publication;
    t.pier.deps.db.delete(jobs).where(eq(jobs.kind, "publish.build")).run(); // the job vanished
    t.pier.deps.jobs.enqueue("publish.sweep");
    await drain();
    expect((await readPub(u.key, p.id)).publish_state).toBe("ready");

    // A build whose worker died on its only attempt: the runner marks the job failed and the
    // publication is left in processing; the sweeper queues it again.
    await directUpload(t, u.key, id, textFile("index.html", "<p>after crash</p>", "text/html; charset=utf-8"));
    await publish(u.key, id);
    t.pier.deps.db.update(jobs).set({ status: "failed", lastError: "its worker stopped during the last attempt" }).where(eq(jobs.kind, "publish.build")).run();
    t.pier.deps.db.update(publications).set({ publishState: "processing" }).where(eq(publications.id, p.id)).run();
    expect((await readPub(u.key, p.id)).publish_state).toBe("processing");
    t.pier.deps.jobs.enqueue("publish.sweep");
    await drain();
    expect((await readPub(u.key, p.id)).publish_state).toBe("ready");
    expect(await (await siteFetch(t, host(p.public_slug), "/")).text()).toBe("<p>after crash</p>");
  });
});

describe("unpublish while a build runs", () => {
  test("a republish build interrupted by a crash while an unpublish waits does not bring the site back", async () => {
    const u = await t.user({ plan: "pro" });
    const id = await bucketWith(u, "Unpublish During Build", { "index.html": "<p>v1</p>" });
    const p = (await publish(u.key, id)).body.data.publication;
    await drain();
    await directUpload(t, u.key, id, textFile("index.html", "<p>v2</p>", "text/html; charset=utf-8"));
    expect((await publish(u.key, id)).status).toBe(202);
    // The build's worker took the job and died mid-build (lease far ahead: only a restart's sweep frees it).
    t.pier.deps.sqlite.run(
      "UPDATE jobs SET status = 'running', worker_id = 'w_dead', attempts = 1, lease_until = '2999-01-01' WHERE kind = 'publish.build' AND status = 'queued'",
    );
    t.pier.deps.db.update(publications).set({ publishState: "processing" }).where(eq(publications.id, p.id)).run();
    expect((await t.api("DELETE", `/api/v1/buckets/${id}/publication`, { key: u.key })).status).toBe(202);
    t.pier.runner.sweep(true); // the restart: the interrupted build fails
    // The failure does not overwrite the unpublish under way (the sweeper finds it by its
    // publish_state), and a retry cannot queue a build the unpublish would silently drop.
    const during = await readPub(u.key, p.id);
    expect([during.status, during.publish_state]).toEqual(["unpublishing", "unpublishing"]);
    const retry = await t.api("POST", `/api/v1/buckets/${id}/publication/retry`, { key: u.key });
    expect([retry.status, retry.body.error?.code]).toEqual([409, "NOTHING_TO_RETRY"]);
    await drain();
    const after = await readPub(u.key, p.id);
    expect([after.status, after.publish_state]).toEqual(["unpublished", "ready"]);
    expect((await siteFetch(t, host(p.public_slug), "/")).status).toBe(404);
  });
});

describe("two first publishes at once", () => {
  test("both are accepted as one publication; the one committed last wins, and its password opens the gate", async () => {
    const u = await t.user({ plan: "pro" });
    const id = await bucketWith(u, "Twice At Once Site", { "index.html": "<p>gated</p>" });
    // A password is hashed between the request's checks and its commit: both pass the checks
    // before either commits, so the second commit finds the row the first one wrote.
    const answers = await Promise.all(["first-secret-1", "second-secret-2"].map((password) => publish(u.key, id, { access_mode: "password", password })));
    expect(answers.map((r) => [r.status, r.body.error?.code])).toEqual([
      [202, undefined],
      [202, undefined],
    ]);
    expect(answers[0]!.body.data.publication.id).toBe(answers[1]!.body.data.publication.id);
    await drain();
    const pub = await readPub(u.key, answers[0]!.body.data.publication.id);
    expect(pub).toMatchObject({ status: "published", publish_state: "ready", access_mode: "password" });
    expect(["first-secret-1", "second-secret-2"]).toContain(pub.access_password);
    const gate = await siteFetch(t, host(pub.public_slug), "/_pier/gate/password", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ password: pub.access_password, next: "/" }).toString(),
    });
    expect(gate.status).toBe(303);
  });
});

describe("retry is a publish", () => {
  test("retrying a failed first build keeps the plan's limits: no second live site on Free, no protected site after a downgrade", async () => {
    const u = await t.user({ plan: "free" });
    const a = await bucketWith(u, "Retry Limit A", { "index.html": "<p>A</p>" });
    const b = await bucketWith(u, "Retry Limit B", { "notes/readme.txt": "x" });
    const retry = () => t.api("POST", `/api/v1/buckets/${b}/publication/retry`, { key: u.key });
    // B's first build fails (its root folder is empty), so it is unpublished and does not count.
    const pb = (await publish(u.key, b, { publication_root_directory: "site" })).body.data.publication;
    await drain();
    expect((await readPub(u.key, pb.id)).publish_state).toBe("failed");
    expect((await publish(u.key, a)).status).toBe(202); // A takes Free's one live site
    await drain();
    await directUpload(t, u.key, b, textFile("site/index.html", "<p>B</p>", "text/html; charset=utf-8"));
    const refused = await retry();
    expect([refused.status, refused.body.error.details?.max_live_sites]).toEqual([403, 1]);
    await drain();
    expect((await readPub(u.key, pb.id)).status).toBe("unpublished");

    // A protected site whose build failed on Pro is not retried into a permanent one on Free.
    const pro = await t.user({ plan: "pro" });
    const c = await bucketWith(pro, "Retry Protected", { "notes/readme.txt": "x" });
    const pc = (await publish(pro.key, c, { publication_root_directory: "site", access_mode: "password", password: "secret-pass" })).body.data.publication;
    await drain();
    t.pier.deps.db.update(accounts).set({ plan: "free" }).where(eq(accounts.id, pro.accountId)).run();
    await directUpload(t, pro.key, c, textFile("site/index.html", "<p>C</p>", "text/html; charset=utf-8"));
    const downgraded = await t.api("POST", `/api/v1/buckets/${c}/publication/retry`, { key: pro.key });
    expect([downgraded.status, downgraded.body.error.code]).toEqual([402, "PUBLICATION_UPGRADE_REQUIRED"]);
    await drain();
    expect((await readPub(pro.key, pc.id)).status).toBe("unpublished");
  });
});

describe("a failed preview is retried", () => {
  test("retry re-runs the preview's build (the main site's first when both failed), the failure names that call, and the preview lives its time again", async () => {
    const u = await t.user({ plan: "pro" });
    const id = await bucketWith(u, "Preview Retry", { "index.html": "<p>main</p>" });
    const main = (await publish(u.key, id)).body.data.publication;
    await drain();
    const previewOf = (body: unknown) => t.api("POST", `/api/v1/buckets/${id}/publication/preview`, { key: u.key, body });
    const retry = (q = "") => t.api("POST", `/api/v1/buckets/${id}/publication/retry${q}`, { key: u.key });

    // The preview's root folder is empty: its build fails; the main site stays as it was.
    const pv = (await previewOf({ publication_root_directory: "site", expires_in_minutes: 5 })).body.data.publication;
    await drain();
    expect(await readPub(u.key, pv.id)).toMatchObject({ publish_state: "failed", status: "unpublished" });
    const told = t.pier.deps.db
      .select()
      .from(notifications)
      .where(eq(notifications.accountId, u.accountId))
      .all()
      .filter((n) => n.kind === "publish_failed");
    expect(told.at(-1)!.body).toContain(`POST /api/v1/buckets/${id}/publication/retry?kind=preview`);
    const mail = listOutbox(t.pier.deps).filter((m) => m.to_address === u.email && m.kind === "publish-failed");
    expect(mail.length).toBe(1);
    expect(mail[0]!.subject).toContain("the preview of");
    expect(mail[0]!.text_body).toContain(`pier preview again, or POST /api/v1/buckets/${id}/publication/retry?kind=preview`);

    // Fixed, and retried after the preview's five minutes ran out: it gets five minutes again.
    await directUpload(t, u.key, id, textFile("site/index.html", "<p>preview</p>", "text/html; charset=utf-8"));
    t.clock.advance(10 * 60_000);
    const r = await retry();
    expect(r.status).toBe(202);
    expect(r.body.data.publication).toMatchObject({ id: pv.id, kind: "preview", publish_state: "queued" });
    const left = Date.parse(r.body.data.publication.expires_at) - t.clock.now().getTime();
    expect(left).toBeGreaterThan(4 * 60_000);
    expect(left).toBeLessThanOrEqual(5 * 60_000);
    await drain();
    expect(await readPub(u.key, pv.id)).toMatchObject({ publish_state: "ready", status: "published", expired: false });
    expect(await (await siteFetch(t, host(pv.public_slug, true), "/")).text()).toBe("<p>preview</p>");
    expect(await readPub(u.key, main.id)).toMatchObject({ publish_state: "ready", status: "published" });
    expect((await retry()).body.error).toMatchObject({ code: "NOTHING_TO_RETRY", details: { kind: "main" } });
    expect((await retry("?kind=preview")).body.error).toMatchObject({ code: "NOTHING_TO_RETRY", details: { kind: "preview" } });
    expect((await retry("?kind=draft")).status).toBe(422);

    // Both builds failed: a bare retry takes the main site's; ?kind=preview the preview's.
    expect((await previewOf({ publication_root_directory: "empty" })).status).toBe(202);
    expect((await publish(u.key, id, { publication_root_directory: "empty" })).status).toBe(202);
    await drain();
    const preview = await retry("?kind=preview");
    expect([preview.status, preview.body.data.publication.id]).toEqual([202, pv.id]);
    const bare = await retry();
    expect([bare.status, bare.body.data.publication.id]).toEqual([202, main.id]);
  });
});

describe("one slug, two addresses", () => {
  test("another account's preview cannot take a slug whose main site is someone else's; a rename moves the bucket's preview along", async () => {
    const owner = await t.user({ plan: "pro" });
    const mine = await bucketWith(owner, "Acme Official", { "index.html": "<p>official</p>" });
    const main = (await publish(owner.key, mine, { slug_suggestions: ["acme-official-site"] })).body.data.publication;
    await drain();
    expect(main.public_slug).toBe("acme-official-site");

    const stranger = await t.user();
    const fake = await bucketWith(stranger, "Fake", { "index.html": "<p>fake login</p>" });
    const pv = await t.api("POST", `/api/v1/buckets/${fake}/publication/preview`, { key: stranger.key, body: { slug_suggestions: ["acme-official-site"] } });
    expect(pv.status).toBe(202);
    expect(pv.body.data.publication.public_slug).not.toBe("acme-official-site");
    await drain();

    // The owner's own preview lives at preview-<its slug>, serving the owner's files.
    const own = (await t.api("POST", `/api/v1/buckets/${mine}/publication/preview`, { key: owner.key, body: {} })).body.data.publication;
    expect(own.public_slug).toBe("acme-official-site");
    await drain();
    expect(await (await t.primaryFetch(host("acme-official-site", true), "/")).text()).toBe("<p>official</p>");

    // A rename takes the preview with it (the old name stays the owner's for a while: slug-holds.test.ts).
    const renamed = await t.api("PATCH", `/api/v1/buckets/${mine}/custom_domains/public_slug`, { key: owner.key, body: { public_slug: "acme-renamed-site" } });
    expect(renamed.status).toBe(200);
    expect((await readPub(owner.key, own.id)).public_slug).toBe("acme-renamed-site");
    expect(await (await t.primaryFetch(host("acme-renamed-site", true), "/")).text()).toBe("<p>official</p>");
    expect((await t.primaryFetch(host("acme-official-site", true), "/")).status).toBe(404);
    // The slug is the owner bucket's for both addresses: not another bucket's main site, nor its rename.
    const grab = await publish(stranger.key, fake, { slug_suggestions: ["acme-renamed-site"] });
    expect(grab.body.data.publication.public_slug).not.toBe("acme-renamed-site");
    const taken = await t.api("PATCH", `/api/v1/buckets/${fake}/custom_domains/public_slug`, { key: stranger.key, body: { public_slug: "acme-renamed-site" } });
    expect([taken.status, taken.body.error.code]).toEqual([409, "SLUG_TAKEN"]);
  });
});

describe("slugs shared across kinds before this release", () => {
  // Slugs were unique per kind: a bucket's preview could hold the slug of another bucket's main site.
  test("publishing next to such a pair picks a free slug instead of failing", async () => {
    const owner = await t.user({ plan: "pro" });
    const mine = await bucketWith(owner, "Legacy Owner", { "index.html": "<p>owner</p>" });
    const main = (await publish(owner.key, mine, { slug_suggestions: ["legacy-shared-site"] })).body.data.publication;
    await drain();
    const other = await t.user({ plan: "pro" });
    const theirs = await bucketWith(other, "Legacy Other", { "index.html": "<p>other</p>" });
    const pv = (await t.api("POST", `/api/v1/buckets/${theirs}/publication/preview`, { key: other.key, body: { slug_suggestions: ["legacy-other-site"] } }))
      .body.data.publication;
    await drain();
    t.pier.deps.db.update(publications).set({ publicSlug: main.public_slug }).where(eq(publications.id, pv.id)).run(); // the old state

    const ownPreview = await t.api("POST", `/api/v1/buckets/${mine}/publication/preview`, { key: owner.key, body: {} });
    expect(ownPreview.status).toBe(202);
    expect(ownPreview.body.data.publication.public_slug).not.toBe(main.public_slug);
    const theirMain = await publish(other.key, theirs);
    expect(theirMain.status).toBe(202);
    expect(theirMain.body.data.publication.public_slug).not.toBe(main.public_slug);
    await drain();
  });
});

describe("secrets, slugs and settings", () => {
  test("password and share text reach only account-owner keys, only on read after ready", async () => {
    const u = await t.user({ plan: "pro" });
    const id = await bucketWith(u, "Secret Site Here", { "index.html": "secret" });
    const r = await publish(u.key, id, { access_mode: "password" });
    expect(r.status).toBe(202);
    expect(r.body.data.publication.access_password).toBeUndefined();
    expect(r.body.data.publication.password_configured).toBe(true);
    const early = await readPub(u.key, r.body.data.publication.id);
    expect(early.access_password).toBeUndefined();
    await drain();
    const owner = await readPub(u.key, early.id);
    expect(owner.access_password).toMatch(/^\S{8,}$/);
    expect(owner.generated_password).toBe(owner.access_password);
    expect(owner.share_text).toContain(owner.access_password);
    expect(owner.share_text).toContain(owner.public_url);
    const named = t.key(u, { scope: "bucket_read" }); // not an account-owner publish key
    const other = await readPub(named, early.id);
    expect(other.access_password).toBeUndefined();
    expect(other.share_text).toBeUndefined();
    expect((await siteFetch(t, host(owner.public_slug), "/")).status).toBe(401);
    const acc = await t.api("GET", `/api/v1/publications/${early.id}/access`, { key: u.key });
    expect(acc.body.data.access).toMatchObject({ access_mode: "password", password_configured: true, access_password: owner.access_password });
    const set = await t.api("PATCH", `/api/v1/publications/${early.id}/access`, { key: u.key, body: { access_mode: "password", password: "hunter22-long" } });
    expect(set.body.data.access.access_password).toBe("hunter22-long");
    expect((await readPub(u.key, early.id)).generated_password).toBeUndefined();
    const pub = await t.api("PATCH", `/api/v1/publications/${early.id}/access`, { key: u.key, body: { access_mode: "public" } });
    expect(pub.body.data.access.access_mode).toBe("public");
    expect(await (await siteFetch(t, host(owner.public_slug), "/")).text()).toBe("secret");
  });

  test("slugs: sanitized suggestions, numeric suffix, title default, reserved and short refused, rename", async () => {
    const u = await t.user({ plan: "pro" });
    const a = await bucketWith(u, "Slug Owner A", { "index.html": "a" });
    const b = await bucketWith(u, "Slug Owner B", { "index.html": "b" });
    const c = await bucketWith(u, "Blog", { "index.html": "c" });
    const d = await bucketWith(u, "Slug Owner D", { "index.html": "d" });
    expect((await publish(u.key, a, { slug_suggestions: ["Été Café Menu"] })).body.data.publication.public_slug).toBe("ete-cafe-menu");
    expect((await publish(u.key, b, { slug_suggestions: ["ete cafe menu"] })).body.data.publication.public_slug).toBe("ete-cafe-menu-2");
    expect((await publish(u.key, c)).body.data.publication.public_slug).toBe("blog-site");
    for (const bad of [["dashboard"], ["short"], ["preview-something"]]) {
      const r = await publish(u.key, d, { slug_suggestions: bad });
      expect([r.status, r.body.error.code]).toEqual([422, "VALIDATION_FAILED"]);
    }
    expect((await t.api("GET", `/api/v1/buckets/${d}`, { key: u.key })).body.data.bucket.website).toBeNull();
    await drain();
    const rename = await t.api("PATCH", `/api/v1/buckets/${a}/custom_domains/public_slug`, { key: u.key, body: { public_slug: "renamed-site" } });
    expect(rename.status).toBe(200);
    expect(rename.body.data.publication.public_url).toContain("renamed-site.");
    expect(await (await siteFetch(t, host("renamed-site"), "/")).text()).toBe("a");
    expect((await siteFetch(t, host("ete-cafe-menu"), "/")).status).toBe(404);
    const taken = await t.api("PATCH", `/api/v1/buckets/${a}/custom_domains/public_slug`, { key: u.key, body: { public_slug: "ete-cafe-menu-2" } });
    expect([taken.status, taken.body.error.code]).toEqual([409, "SLUG_TAKEN"]);
    const short = await t.api("PATCH", `/api/v1/buckets/${a}/custom_domains/public_slug`, { key: u.key, body: { public_slug: "tiny" } });
    expect(short.body.error.code).toBe("VALIDATION_FAILED");
  });

  test("PATCH changes title, routing and tracking without a rebuild; visibility lock refuses visibility changes", async () => {
    const u = await t.user({ plan: "pro" });
    const id = await bucketWith(u, "Patch Me Site", { "index.html": "<p>i</p>" });
    const p = (await publish(u.key, id)).body.data.publication;
    await drain();
    const r = await t.api("PATCH", `/api/v1/publications/${p.id}`, {
      key: u.key,
      body: { title: "New title", site_mode: "spa", client_events_enabled: false },
    });
    expect(r.body.data.publication).toMatchObject({ title: "New title", site_mode: "spa", publication_client_events_enabled: false, publish_state: "ready" });
    expect(await (await siteFetch(t, host(p.public_slug), "/x/y")).text()).toBe("<p>i</p>");
    await t.api("POST", `/api/v1/buckets/${id}/visibility_change_lock`, { key: u.key, body: { reason: "launch" } });
    for (const [m, path, body] of [
      ["POST", `/api/v1/buckets/${id}/publication`, {}],
      ["DELETE", `/api/v1/buckets/${id}/publication`, undefined],
      ["PATCH", `/api/v1/publications/${p.id}/access`, { access_mode: "require_email" }],
      // An expiry takes the site down (410; `pier unpublish --preview` ends a preview this way),
      // and clearing a past one brings it back: both change who can see the site (D281).
      ["PATCH", `/api/v1/publications/${p.id}`, { expires_at: new Date(t.clock.now().getTime() + 2_000).toISOString() }],
      ["PATCH", `/api/v1/publications/${p.id}`, { title: "Not with an expiry", expires_at: new Date(t.clock.now().getTime() + 86_400_000).toISOString() }],
    ] as const) {
      const res = await t.api(m, path, { key: u.key, body });
      expect([res.status, res.body.error?.code]).toEqual([423, "VISIBILITY_LOCKED"]);
    }
    expect((await readPub(u.key, p.id)).expires_at).toBeNull();
    // Settings that do not change who sees the site stay editable, and so does an unchanged expiry.
    const titled = await t.api("PATCH", `/api/v1/publications/${p.id}`, { key: u.key, body: { title: "Frozen but titled", expires_at: null } });
    expect([titled.status, titled.body.data.publication.title]).toEqual([200, "Frozen but titled"]);
  });
});

describe("root folder and expiry", () => {
  test('publication_root_directory comes from bucket metadata unless given; "" publishes the whole bucket; expires_at ends a main site with 410', async () => {
    const u = await t.user({ plan: "pro" });
    const id = await bucketWith(u, "Rooted Site Bucket", { "public/index.html": "<p>inner</p>", "index.html": "<p>outer</p>" });
    await t.api("PATCH", `/api/v1/buckets/${id}`, { key: u.key, body: { bucket: { metadata: { publication_root_directory: "/public/" } } } });
    const p = (await publish(u.key, id)).body.data.publication;
    await drain();
    expect(await (await siteFetch(t, host(p.public_slug), "/")).text()).toBe("<p>inner</p>");
    expect((await readPub(u.key, p.id)).publication_root_directory).toBe("public");
    await publish(u.key, id, { publication_root_directory: "" });
    await drain();
    expect(await (await siteFetch(t, host(p.public_slug), "/")).text()).toBe("<p>outer</p>");
    expect(await (await siteFetch(t, host(p.public_slug), "/public/")).text()).toBe("<p>inner</p>");
    const bad = await publish(u.key, id, { publication_root_directory: "../up" });
    expect(bad.status).toBe(422);
    const past = await publish(u.key, id, { expires_at: new Date(t.clock.now().getTime() - 1000).toISOString() });
    expect(past.status).toBe(422);
    const soon = new Date(t.clock.now().getTime() + 3600_000).toISOString();
    expect((await publish(u.key, id, { expires_at: soon })).status).toBe(202);
    await drain();
    expect((await readPub(u.key, p.id)).expires_at).toBe(soon);
    t.clock.advance(3601_000);
    // The test's clock is the primary's: serving workers (PIER_TEST_WORKERS) run on the real one.
    expect((await t.primaryFetch(host(p.public_slug), "/")).status).toBe(410);
    // Expired: no longer live, so the bucket can be archived.
    expect((await t.api("GET", `/api/v1/buckets/${id}`, { key: u.key })).body.data.bucket.publication_lifecycle_active).toBe(false);
  });
});

describe("recipient links", () => {
  test("a signed link lets its recipient through the require_email gate, records the lead, dies when access changes", async () => {
    const u = await t.user({ plan: "pro" });
    const id = await bucketWith(u, "Recipient Link Site", { "index.html": "<p>members</p>" });
    const p = (await publish(u.key, id, { access_mode: "require_email" })).body.data.publication;
    await drain();
    const pub = await t.api("POST", `/api/v1/buckets/${id}/publication`, { key: u.key, body: {} });
    expect(pub.status).toBe(202);
    await drain();
    const r = await t.api("POST", `/api/v1/publications/${p.id}/recipient_links`, { key: u.key, body: { emails: ["Ann@Example.com"] } });
    expect(r.status).toBe(200);
    const link = new URL(r.body.data.recipient_links[0].url);
    expect(r.body.data.recipient_links[0].email).toBe("ann@example.com");
    expect(link.hostname).toBe(host(p.public_slug));
    expect((await siteFetch(t, host(p.public_slug), "/")).status).toBe(401);
    const open = await siteFetch(t, host(p.public_slug), link.pathname + link.search);
    expect(open.status).toBe(303);
    const cookie = open.headers.get("set-cookie")!.split(";")[0]!;
    expect(await (await siteFetch(t, host(p.public_slug), "/", { headers: { cookie } })).text()).toBe("<p>members</p>");
    const acc = await t.api("GET", `/api/v1/publications/${p.id}/access`, { key: u.key });
    expect(acc.body.data.access.leads.map((l: { email: string }) => l.email)).toEqual(["ann@example.com"]);
    // Leads come a page at a time (a busy or flooded site gathers thousands), most recent first.
    const insert = t.pier.deps.sqlite.prepare(
      "INSERT INTO site_leads (publication_id, email, first_access_at, last_access_at, access_count) VALUES (?, ?, ?, ?, 1)",
    );
    for (let i = 0; i < 150; i++)
      insert.run(
        p.id,
        `lead${i}@example.com`,
        "2020-01-01T00:00:00.000Z",
        `2020-01-01T00:00:${String(i % 60).padStart(2, "0")}.${String(i).padStart(3, "0")}Z`,
      );
    const first = (await t.api("GET", `/api/v1/publications/${p.id}/access`, { key: u.key })).body.data.access;
    expect([first.leads.length, first.leads[0].email, first.leads_pagination.total_count, first.leads_pagination.next_offset]).toEqual([
      100,
      "ann@example.com",
      151,
      100,
    ]);
    const rest = (await t.api("GET", `/api/v1/publications/${p.id}/access?limit=100&offset=100`, { key: u.key })).body.data.access;
    expect([rest.leads.length, rest.leads_pagination.has_more]).toEqual([51, false]);
    const forged = await siteFetch(t, host(p.public_slug), `/_pier/gate/recipient?token=${link.searchParams.get("token")!.slice(0, -2)}xx`);
    expect(forged.status).toBe(401);
    await t.api("PATCH", `/api/v1/publications/${p.id}/access`, { key: u.key, body: { access_mode: "require_email" } });
    expect((await siteFetch(t, host(p.public_slug), link.pathname + link.search)).status).toBe(401);
    const publicPub = await bucketWith(u, "Public Link Site", { "index.html": "x" });
    const pp = (await publish(u.key, publicPub)).body.data.publication;
    const refused = await t.api("POST", `/api/v1/publications/${pp.id}/recipient_links`, { key: u.key, body: { emails: ["a@example.com"] } });
    expect(refused.status).toBe(422);
  });
});

describe("previews and plan policy", () => {
  test("Free: protected main sites need an upgrade (with choices), previews may be protected, expire to 410 and do not count", async () => {
    const u = await t.user({ plan: "free" });
    const id = await bucketWith(u, "Free Preview Site", { "index.html": "<p>free</p>" });
    const refused = await publish(u.key, id, { access_mode: "password" });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe("PUBLICATION_UPGRADE_REQUIRED");
    expect(refused.body.error.details.choices.map((c: { action: string }) => c.action)).toEqual(["preview", "upgrade", "public"]);
    expect((await t.api("GET", "/api/v1/publications", { key: u.key })).body.data.publications).toEqual([]);

    const pv = await t.api("POST", `/api/v1/buckets/${id}/publication/preview`, { key: u.key, body: { access_mode: "password", password: "preview-pass" } });
    expect(pv.status).toBe(202);
    const prev = pv.body.data.publication;
    expect(prev.kind).toBe("preview");
    expect(prev.public_url).toContain(`preview-${prev.public_slug}.`);
    expect(Math.abs(Date.parse(prev.expires_at) - t.clock.now().getTime() - 15 * 60_000)).toBeLessThan(5_000);
    await drain();
    expect((await siteFetch(t, host(prev.public_slug, true), "/")).status).toBe(401);
    // The preview does not count: the one public main site is still allowed.
    const main = await publish(u.key, id);
    expect(main.status).toBe(202);
    await drain();
    const mainPub = await readPub(u.key, main.body.data.publication.id);
    expect(mainPub.access_mode).toBe("public");
    expect(await (await siteFetch(t, host(mainPub.public_slug), "/")).text()).toBe("<p>free</p>");
    // A second live main site is over Free's limit.
    const other = await bucketWith(u, "Second Free Site", { "index.html": "2" });
    const second = await publish(u.key, other);
    expect([second.status, second.body.error.code, second.body.error.details.max_live_sites]).toEqual([403, "FORBIDDEN", 1]);

    // Re-running the preview republishes the same slug with a new expiry; the main site is untouched.
    const again = await t.api("POST", `/api/v1/buckets/${id}/publication/preview`, { key: u.key, body: { expires_in_minutes: 60 } });
    expect(again.body.data.publication.public_slug).toBe(prev.public_slug);
    expect(again.body.data.publication.id).toBe(prev.id);
    await drain();
    t.clock.advance(61 * 60_000);
    expect((await t.primaryFetch(host(prev.public_slug, true), "/")).status).toBe(410); // the test's clock: the primary's answer
    expect((await siteFetch(t, host(mainPub.public_slug), "/")).status).toBe(200);
    const tooLong = await t.api("POST", `/api/v1/buckets/${id}/publication/preview`, { key: u.key, body: { expires_in_minutes: 43201 } });
    expect(tooLong.status).toBe(422);
    // The expiry job ends a preview a week after it expired (404, lifecycle over).
    t.clock.advance(8 * 24 * 3600_000);
    t.pier.deps.jobs.enqueue("publish.expire_previews");
    await drain();
    expect((await readPub(u.key, prev.id)).status).toBe("unpublished");
  });

  test("a preview of a gated site keeps the site's gate unless the request names another access mode", async () => {
    const u = await t.user({ plan: "pro" });
    const id = await bucketWith(u, "Secret Plans Site", { "index.html": "<h1>confidential</h1>" });
    const main = (await publish(u.key, id, { access_mode: "password", password: "correct-horse-1" })).body.data.publication;
    await drain();
    expect((await siteFetch(t, host(main.public_slug), "/")).status).toBe(401);

    // `pier preview DIR` sends no access mode: the preview, at preview-<the site's slug>, asks for the site's password.
    const pv = await t.api("POST", `/api/v1/buckets/${id}/publication/preview`, { key: u.key, body: {} });
    expect(pv.status).toBe(202);
    expect(pv.body.data.publication.access_mode).toBe("password");
    await drain();
    const previewHost = host(main.public_slug, true);
    expect((await siteFetch(t, previewHost, "/")).status).toBe(401);
    const gate = (password: string) =>
      siteFetch(t, previewHost, "/_pier/gate/password", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: `http://${previewHost}` },
        body: new URLSearchParams({ password, next: "/" }).toString(),
      });
    expect((await gate("wrong-password-1")).status).toBe(401);
    const in_ = await gate("correct-horse-1");
    expect(in_.status).toBe(303);
    const cookie = in_.headers.get("set-cookie")!.split(";")[0]!;
    expect(await (await siteFetch(t, previewHost, "/", { headers: { cookie } })).text()).toBe("<h1>confidential</h1>");
    // The owner reads the preview's password as the site's.
    expect((await t.api("GET", `/api/v1/publications/${pv.body.data.publication.id}/access`, { key: u.key })).body.data.access.access_password).toBe(
      "correct-horse-1",
    );
    // The preview took the site's password, so it follows the site's password: rotated because it
    // leaked, it no longer opens preview-<slug> (nor do cookies it bought), and the new one does.
    const rotated = await t.api("PATCH", `/api/v1/publications/${main.id}/access`, {
      key: u.key,
      body: { access_mode: "password", password: "correct-horse-2" },
    });
    expect(rotated.status).toBe(200);
    expect((await siteFetch(t, previewHost, "/", { headers: { cookie } })).status).toBe(401);
    expect((await gate("correct-horse-1")).status).toBe(401);
    expect((await gate("correct-horse-2")).status).toBe(303);
    // So does a publish that sets a new one; a mode change too.
    expect((await publish(u.key, id, { access_mode: "password", password: "correct-horse-3" })).status).toBe(202);
    expect((await gate("correct-horse-2")).status).toBe(401);
    expect((await gate("correct-horse-3")).status).toBe(303);
    expect((await t.api("GET", `/api/v1/publications/${pv.body.data.publication.id}/access`, { key: u.key })).body.data.access.access_password).toBe(
      "correct-horse-3",
    );
    await t.api("PATCH", `/api/v1/publications/${main.id}/access`, { key: u.key, body: { access_mode: "require_email" } });
    expect(await (await siteFetch(t, previewHost, "/")).text()).toContain('action="/_pier/gate/email"');
    await drain();

    // An existing public preview of a site gated since is gated too on its next run; public only when asked.
    const id2 = await bucketWith(u, "Gated Later Site", { "index.html": "<p>later</p>" });
    const main2 = (await publish(u.key, id2)).body.data.publication;
    await drain();
    expect((await t.api("POST", `/api/v1/buckets/${id2}/publication/preview`, { key: u.key, body: {} })).body.data.publication.access_mode).toBe("public");
    await drain();
    await t.api("PATCH", `/api/v1/publications/${main2.id}/access`, { key: u.key, body: { access_mode: "require_email" } });
    expect((await t.api("POST", `/api/v1/buckets/${id2}/publication/preview`, { key: u.key, body: {} })).body.data.publication.access_mode).toBe(
      "require_email",
    );
    await drain();
    expect((await siteFetch(t, host(main2.public_slug, true), "/")).status).toBe(401);
    const open = await t.api("POST", `/api/v1/buckets/${id2}/publication/preview`, { key: u.key, body: { access_mode: "public" } });
    expect(open.body.data.publication.access_mode).toBe("public");
    await drain();
    expect(await (await siteFetch(t, host(main2.public_slug, true), "/")).text()).toBe("<p>later</p>");
  });

  test("PATCH expires_at keeps the plan's rules: a preview at most 30 days out, an expired main site back only within the live-site limit", async () => {
    const u = await t.user({ plan: "free" });
    const a = await bucketWith(u, "Patched Site A", { "index.html": "<p>A</p>" });
    const b = await bucketWith(u, "Patched Site B", { "index.html": "<p>B</p>" });
    const patch = (id: string, expires_at: string | null) => t.api("PATCH", `/api/v1/publications/${id}`, { key: u.key, body: { expires_at } });
    const inDays = (d: number) => new Date(t.clock.now().getTime() + d * 24 * 3600_000).toISOString();

    const pv = (await t.api("POST", `/api/v1/buckets/${a}/publication/preview`, { key: u.key, body: { access_mode: "password", password: "preview-pass" } }))
      .body.data.publication;
    await drain();
    const forever = await patch(pv.id, "2099-01-01T00:00:00Z");
    expect([forever.status, forever.body.error.code, forever.body.error.details.field]).toEqual([422, "VALIDATION_FAILED", "expires_at"]);
    // A day the calendar does not have is refused, not rolled over into the next month.
    for (const impossible of ["2026-02-29T00:00:00Z", "2027-04-31T12:00:00Z"]) {
      const r = await patch(pv.id, impossible);
      expect([impossible, r.status, r.body.error.code, r.body.error.details.fields[0].path]).toEqual([impossible, 422, "VALIDATION_FAILED", "/expires_at"]);
    }
    const month = inDays(29);
    expect((await patch(pv.id, month)).status).toBe(200);
    expect((await readPub(u.key, pv.id)).expires_at).toBe(month);

    // A expires, B takes Free's one live site, and A cannot come back beside it.
    const pa = (await publish(u.key, a, { expires_at: new Date(t.clock.now().getTime() + 60_000).toISOString() })).body.data.publication;
    await drain();
    t.clock.advance(120_000);
    expect((await publish(u.key, b)).status).toBe(202);
    await drain();
    for (const expiry of [null, inDays(3)]) {
      const revive = await patch(pa.id, expiry);
      expect([revive.status, revive.body.error.details.max_live_sites]).toEqual([403, 1]);
    }
    expect((await t.primaryFetch(host(pa.public_slug), "/")).status).toBe(410);
    // Once B is gone, A may come back.
    expect((await t.api("DELETE", `/api/v1/buckets/${b}/publication`, { key: u.key })).status).toBeLessThan(300);
    await drain();
    expect((await patch(pa.id, null)).status).toBe(200);
    expect((await t.primaryFetch(host(pa.public_slug), "/")).status).toBe(200);
  });

  test("Free-site renewal: without a dashboard visit for 30 days the main site is unpublished; API traffic does not renew", async () => {
    const u = await t.user({ plan: "free" });
    const id = await bucketWith(u, "Renewal Test Site", { "index.html": "r" });
    const p = (await publish(u.key, id)).body.data.publication;
    await drain();
    const visit = new Date(t.clock.now().getTime() - 29 * 86_400_000).toISOString();
    t.pier.deps.db.update(accounts).set({ lastDashboardVisitAt: visit }).where(eq(accounts.id, u.accountId)).run();
    t.pier.deps.jobs.enqueue("publish.site_renewal");
    await drain();
    expect((await readPub(u.key, p.id)).status).toBe("published");
    t.clock.advance(2 * 86_400_000);
    await t.api("GET", "/api/v1/buckets", { key: u.key }); // API traffic: no renewal
    t.pier.deps.jobs.enqueue("publish.site_renewal");
    await drain();
    expect((await readPub(u.key, p.id)).status).toBe("unpublished");
    expect(
      t.pier.deps.db
        .select()
        .from(notifications)
        .where(eq(notifications.accountId, u.accountId))
        .all()
        .map((n) => n.kind),
    ).toContain("site_renewal_lapsed");
  });
});
