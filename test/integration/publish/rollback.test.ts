// Deploy history and instant rollback over real HTTP: every build of a main site is a deploy;
// a rollback switches the live site to an earlier one at once (no rebuild, bucket files
// untouched), visitors never get a response mixing two deploys, bad input changes nothing, and
// only the newest deploy_history deploys keep their files (blob GC frees the rest).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { unlinkSync } from "node:fs";
import { eq } from "drizzle-orm";
import type { DiskBlobStore } from "../../../src/blobs/disk";
import { collectGarbage } from "../../../src/blobs/gc";
import { deployFiles } from "../../../src/db/schema";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { expectServedBody, siteFetch } from "../../helpers/sites";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier({ publishRateLimitPerMinute: 10_000, uploadRateLimitPerMinute: 10_000 });
});
afterAll(() => t.stop());

const drain = () => t.pier.runner.drain();
const host = (slug: string) => `${slug}.${t.pier.deps.urls.sitesDomain}`;

async function write(u: TestUser, bucketId: string, files: Record<string, string>, contentType = "text/html; charset=utf-8") {
  for (const [path, text] of Object.entries(files)) {
    const r = await directUpload(t, u.key, bucketId, textFile(path, text, contentType));
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${r.text}`);
  }
}

/** Publish the bucket and run the build; the ready publication. */
async function publishNow(u: TestUser, bucketId: string, headers: Record<string, string> = {}) {
  const r = await t.api("POST", `/api/v1/buckets/${bucketId}/publication`, { key: u.key, body: {}, headers });
  if (r.status !== 202) throw new Error(`publish: ${r.status} ${r.text}`);
  await drain();
  const p = (await t.api("GET", `/api/v1/publications/${r.body.data.publication.id}?include_manifest=false`, { key: u.key })).body.data.publication;
  expect(p.publish_state).toBe("ready");
  return p;
}

const deploysOf = async (u: TestUser, pubId: string, q = "") => (await t.api("GET", `/api/v1/publications/${pubId}/deploys${q}`, { key: u.key })).body.data;
const rollback = (u: TestUser, pubId: string, body: unknown) => t.api("POST", `/api/v1/publications/${pubId}/rollback`, { key: u.key, body });
const readPub = async (u: TestUser, pubId: string) =>
  (await t.api("GET", `/api/v1/publications/${pubId}?include_manifest=false`, { key: u.key })).body.data.publication;

describe("deploy history and rollback", () => {
  test("publish, publish again, roll back to the first (served at once), and back; bucket files unchanged", async () => {
    const u = await t.user({ plan: "pro" });
    const bucket = await newBucket(t, u.key, "Rollback Walkthrough");
    await write(u, bucket, { "index.html": "<h1>first</h1>" });
    const first = await publishNow(u, bucket);
    await write(u, bucket, { "index.html": "<h1>second</h1>", "new.html": "<p>only in the second</p>" });
    const second = await publishNow(u, bucket, { "user-agent": "pier-cli/9.9.9" });
    const slug = second.public_slug;
    await expectServedBody(t, host(slug), "/", "<h1>second</h1>");

    const listed = await deploysOf(u, first.id);
    expect(listed.deploy_history_limit).toBe(20);
    expect(listed.pagination).toMatchObject({ total_count: 2, has_more: false });
    const [newest, oldest] = listed.deploys;
    expect(newest).toMatchObject({ id: second.deploy_id, live: true, trigger: "cli", files_count: 2, rollback_available: true, publication_id: first.id });
    expect(oldest).toMatchObject({ id: first.deploy_id, live: false, trigger: "api", files_count: 1, total_bytes: "<h1>first</h1>".length });
    expect(newest.id).toMatch(/^dpl_/);
    expect(oldest.bucket_version_id).not.toBe(newest.bucket_version_id);
    expect(second.rolled_back_from).toBeUndefined();
    const one = await t.api("GET", `/api/v1/publications/${first.id}/deploys/${oldest.id}`, { key: u.key });
    expect(one.body.data.deploy).toEqual(oldest);
    expect((await deploysOf(u, first.id, "?limit=1&offset=1")).deploys.map((d: any) => d.id)).toEqual([oldest.id]);

    // Roll back: the earlier deploy is served within a second of the answer.
    const started = performance.now();
    const r = await rollback(u, first.id, { deploy_id: oldest.id });
    expect(r.status).toBe(200);
    await expectServedBody(t, host(slug), "/", "<h1>first</h1>");
    expect((await siteFetch(t, host(slug), "/new.html")).status).toBe(404);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(r.body.data).toMatchObject({ changed: true, previous_deploy_id: newest.id, deploy: { id: oldest.id, live: true } });
    expect(r.body.data.publication).toMatchObject({ deploy_id: oldest.id, rolled_back_from: newest.id, published_files_count: 1, publish_state: "ready" });
    expect(await readPub(u, first.id)).toMatchObject({ deploy_id: oldest.id, rolled_back_from: newest.id });
    expect((await deploysOf(u, first.id)).deploys.map((d: any) => d.live)).toEqual([false, true]);
    // The bucket still holds the second version's files: a rollback changes the site only.
    const files = await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key });
    expect(files.text).toContain("new.html");

    // Rolling back to the live deploy changes nothing.
    const again = await rollback(u, first.id, { deploy_id: oldest.id });
    expect(again.body.data.changed).toBe(false);

    // And forward again.
    const back = await rollback(u, first.id, { deploy_id: newest.id });
    expect(back.status).toBe(200);
    await expectServedBody(t, host(slug), "/", "<h1>second</h1>");
    expect(back.body.data.publication.rolled_back_from).toBeUndefined();
    expect(back.body.data.publication.deploy_id).toBe(newest.id);

    // No deploy_id: the one before the live deploy.
    const previous = await rollback(u, first.id, {});
    expect(previous.body.data.deploy.id).toBe(oldest.id);
    await expectServedBody(t, host(slug), "/", "<h1>first</h1>");

    // The next publish builds from the bucket again (the second version's files), as a new deploy.
    const third = await publishNow(u, bucket);
    await expectServedBody(t, host(slug), "/", "<h1>second</h1>");
    expect(third.deploy_id).not.toBe(newest.id);
    expect(third.rolled_back_from).toBeUndefined();
    expect((await deploysOf(u, first.id)).deploys.length).toBe(3);
  });

  test("a build superseded while it ran records no deploy: rollback without an id lands on the deploy that was live", async () => {
    const u = await t.user({ plan: "pro" });
    const bucket = await newBucket(t, u.key, "Superseded Build");
    await write(u, bucket, { "index.html": "<h1>first</h1>" });
    const first = await publishNow(u, bucket);
    await write(u, bucket, { "index.html": "<h1>second</h1>" });
    expect((await t.api("POST", `/api/v1/buckets/${bucket}/publication`, { key: u.key, body: {} })).status).toBe(202);

    // Hold the first build inside its file preparation (it looks up each blob) until a second
    // publish is accepted: the first build then finishes superseded.
    const blobs = t.pier.deps.blobs as { size: (sha: string) => Promise<number | null> };
    const size = blobs.size;
    let entered!: () => void;
    let release!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const held = new Promise<void>((r) => (release = r));
    blobs.size = async (sha) => {
      entered();
      await held;
      return size.call(blobs, sha);
    };
    const building = drain();
    try {
      await inside;
      expect((await t.api("POST", `/api/v1/buckets/${bucket}/publication`, { key: u.key, body: {} })).status).toBe(202);
    } finally {
      delete (blobs as Partial<typeof blobs>).size;
      if (blobs.size !== size) blobs.size = size;
      release();
    }
    await building;
    await drain();

    const after = await readPub(u, first.id);
    expect(after.publish_state).toBe("ready");
    await expectServedBody(t, host(after.public_slug), "/", "<h1>second</h1>");
    // Only deploys that were served are history: the superseded build left none.
    const listed = await deploysOf(u, first.id);
    expect(listed.deploys.map((d: any) => [d.id, d.live])).toEqual([
      [after.deploy_id, true],
      [first.deploy_id, false],
    ]);

    const r = await rollback(u, first.id, {});
    expect(r.status).toBe(200);
    expect(r.body.data.deploy.id).toBe(first.deploy_id);
    await expectServedBody(t, host(after.public_slug), "/", "<h1>first</h1>");
  });

  test("requests during rollbacks each get one whole deploy, never a 404 or 5xx", async () => {
    const u = await t.user({ plan: "pro" });
    const bucket = await newBucket(t, u.key, "Rollback Under Load");
    // Two files whose bytes name their deploy; big enough to span many TCP segments.
    const body = (mark: string) => `${mark}\n`.repeat(20_000);
    await write(u, bucket, { "a.txt": body("A-one"), "b.txt": body("B-one") }, "text/plain; charset=utf-8");
    const first = await publishNow(u, bucket);
    await write(u, bucket, { "a.txt": body("A-two"), "b.txt": body("B-two") }, "text/plain; charset=utf-8");
    const second = await publishNow(u, bucket);
    const allowed = new Set([body("A-one"), body("B-one"), body("A-two"), body("B-two")]);

    let switching = true;
    const problems: string[] = [];
    const seen = new Set<string>();
    const visitor = async () => {
      while (switching) {
        for (const path of ["/a.txt", "/b.txt"]) {
          const res = await siteFetch(t, host(first.public_slug), path, { headers: { "accept-encoding": Math.random() < 0.5 ? "gzip, br" : "identity" } });
          const text = await res.text();
          if (res.status !== 200) problems.push(`${path}: ${res.status}`);
          else if (!allowed.has(text) || text[0] !== path[1]!.toUpperCase()) problems.push(`${path}: mixed or wrong body (${text.length} bytes)`);
          else seen.add(text.slice(0, 5));
        }
      }
    };
    const visitors = [visitor(), visitor(), visitor()];
    for (let i = 0; i < 30; i++) {
      const target = i % 2 === 0 ? first.deploy_id : second.deploy_id;
      const r = await rollback(u, first.id, { deploy_id: target });
      if (r.status !== 200) problems.push(`rollback: ${r.status} ${r.text}`);
      await Bun.sleep(5);
    }
    switching = false;
    await Promise.all(visitors);
    expect(problems).toEqual([]);
    // Both deploys were actually served during the switching.
    expect([...seen].sort()).toEqual(["A-one", "A-two", "B-one", "B-two"]);
  });

  test("bad input: another site's deploy, an unknown one, a malformed body, a preview, a pending build; nothing changes", async () => {
    const u = await t.user({ plan: "pro" });
    const bucket = await newBucket(t, u.key, "Rollback Refusals");
    await write(u, bucket, { "index.html": "<h1>one</h1>" });
    const pub = await publishNow(u, bucket);
    await write(u, bucket, { "index.html": "<h1>two</h1>" });
    await publishNow(u, bucket);
    const other = await newBucket(t, u.key, "Someone Else Site");
    await write(u, other, { "index.html": "<h1>other</h1>" });
    const otherPub = await publishNow(u, other);
    const before = await readPub(u, pub.id);

    const cases: Array<[unknown, number, string]> = [
      [{ deploy_id: otherPub.deploy_id }, 404, "DEPLOY_NOT_FOUND"],
      [{ deploy_id: "dpl_doesnotexist" }, 404, "DEPLOY_NOT_FOUND"],
      [{ deploy_id: "" }, 422, "VALIDATION_FAILED"],
      [{ deploy_id: 42 }, 422, "VALIDATION_FAILED"],
      [{ deploy_id: before.deploy_id, extra: true }, 422, "VALIDATION_FAILED"],
    ];
    for (const [body, status, code] of cases) {
      const r = await rollback(u, pub.id, body);
      expect([r.status, r.body.error?.code]).toEqual([status, code]);
    }
    expect((await t.api("GET", `/api/v1/publications/${pub.id}/deploys/${otherPub.deploy_id}`, { key: u.key })).body.error.code).toBe("DEPLOY_NOT_FOUND");
    // Another account cannot see the site's deploys or roll it back.
    const stranger = await t.user({ plan: "pro" });
    expect((await rollback(stranger, pub.id, { deploy_id: before.deploy_id })).body.error.code).toBe("PUBLICATION_NOT_FOUND");
    expect((await t.api("GET", `/api/v1/publications/${pub.id}/deploys`, { key: stranger.key })).status).toBe(404);
    // The site's only other deploy is the first; a site with a single deploy has none before it.
    expect((await rollback(u, otherPub.id, {})).body.error.code).toBe("DEPLOY_NOT_FOUND");

    // A preview has no history.
    const prev = await t.api("POST", `/api/v1/buckets/${bucket}/publication/preview`, { key: u.key, body: {} });
    await drain();
    const pr = await rollback(u, prev.body.data.publication.id, {});
    expect([pr.status, pr.body.error.code, pr.body.error.details.reason]).toEqual([409, "ROLLBACK_NOT_POSSIBLE", "preview"]);

    // A pending build would replace the rollback: refused until it ends.
    await t.api("POST", `/api/v1/buckets/${bucket}/publication`, { key: u.key, body: {} });
    const pending = await rollback(u, pub.id, {});
    expect([pending.status, pending.body.error.code, pending.body.error.details.reason]).toEqual([409, "ROLLBACK_NOT_POSSIBLE", "build_pending"]);
    await drain();

    const after = await readPub(u, pub.id);
    expect(after.deploy_id).toBe(before.deploy_id);
    await expectServedBody(t, host(pub.public_slug), "/", "<h1>two</h1>");

    // An unpublished site is not brought back by a rollback.
    await t.api("DELETE", `/api/v1/buckets/${other}/publication`, { key: u.key, body: {} });
    await drain();
    const off = await rollback(u, otherPub.id, { deploy_id: otherPub.deploy_id });
    expect([off.status, off.body.error.code, off.body.error.details.reason]).toEqual([409, "ROLLBACK_NOT_POSSIBLE", "not_published"]);
    expect((await siteFetch(t, host(otherPub.public_slug), "/")).status).toBe(404);
  });

  test("the newest 20 deploys keep their files; older ones are refused and their blobs collected", async () => {
    const u = await t.user({ plan: "pro" });
    const bucket = await newBucket(t, u.key, "Rollback History Limit");
    const css = (n: number) => `/* build ${n} */\n${"body { color: #123456; margin: 0 auto; }\n".repeat(40)}`;
    const variantsOf = (deployId: string) =>
      t.pier.deps.db
        .select()
        .from(deployFiles)
        .where(eq(deployFiles.deployId, deployId))
        .all()
        .flatMap((f) => [f.gzipSha256, f.brSha256].filter((s): s is string => s !== null));
    let pubId = "";
    let firstVariants: string[] = [];
    for (let n = 1; n <= 22; n++) {
      await write(u, bucket, { "index.html": `<h1>build ${n}</h1>` });
      await write(u, bucket, { "site.css": css(n) }, "text/css; charset=utf-8");
      const p = await publishNow(u, bucket);
      pubId = p.id;
      if (n === 1) firstVariants = variantsOf(p.deploy_id);
    }
    expect(firstVariants.length).toBe(2);
    const all = (await deploysOf(u, pubId, "?limit=100")).deploys;
    expect(all.length).toBe(22);
    expect(all.filter((d: any) => d.rollback_available).length).toBe(20);
    const [oldest2, oldest1] = [all[20], all[21]];
    expect(oldest1).toMatchObject({ rollback_available: false, pruned_at: expect.any(String) });
    expect(oldest2.rollback_available).toBe(false);

    // The pruned deploys' precompressed variants were only theirs: the collector frees them.
    // (Their identity bytes stay while the bucket's version history holds them.)
    expect(variantsOf(oldest1.id)).toEqual([]);
    const kept = all.slice(0, 20).flatMap((d: any) => variantsOf(d.id));
    expect(kept.length).toBeGreaterThanOrEqual(40);
    for (const sha of firstVariants) expect(await t.pier.deps.blobs.has(sha)).toBe(true);
    await collectGarbage(t.pier.deps, 0);
    for (const sha of firstVariants) expect(await t.pier.deps.blobs.has(sha)).toBe(false);
    for (const sha of kept) expect(await t.pier.deps.blobs.has(sha)).toBe(true);
    // The first build's identity bytes stay: the bucket's version history still holds them.
    const cssOfFirst = new Bun.CryptoHasher("sha256").update(css(1)).digest("hex");
    expect(await t.pier.deps.blobs.has(cssOfFirst)).toBe(true);

    const refused = await rollback(u, pubId, { deploy_id: oldest1.id });
    expect([refused.status, refused.body.error.code]).toEqual([409, "DEPLOY_COLLECTED"]);
    // A kept deploy whose bytes were removed from the store anyway is refused the same way.
    const fourth = t.pier.deps.db
      .select()
      .from(deployFiles)
      .where(eq(deployFiles.deployId, all[18].id))
      .all()
      .find((f) => f.path === "index.html")!;
    unlinkSync((t.pier.deps.blobs as DiskBlobStore).pathOf(fourth.blobSha256));
    const holes = await rollback(u, pubId, { deploy_id: all[18].id });
    expect([holes.status, holes.body.error.code]).toEqual([409, "DEPLOY_COLLECTED"]);
    // So is one that lost only a precompressed copy: every browser asks for one, and would get a 500.
    const compressed = t.pier.deps.db
      .select()
      .from(deployFiles)
      .where(eq(deployFiles.deployId, all[17].id))
      .all()
      .find((f) => f.brSha256 !== null)!;
    unlinkSync((t.pier.deps.blobs as DiskBlobStore).pathOf(compressed.brSha256!));
    const noCopy = await rollback(u, pubId, { deploy_id: all[17].id });
    expect([noCopy.status, noCopy.body.error.code]).toEqual([409, "DEPLOY_COLLECTED"]);
    await expectServedBody(t, host((await readPub(u, pubId)).public_slug), "/", "<h1>build 22</h1>");
    // The oldest kept deploy is still a working rollback target, with compressed answers.
    const r = await rollback(u, pubId, { deploy_id: all[19].id });
    expect(r.status).toBe(200);
    const slug = r.body.data.publication.public_slug;
    await expectServedBody(t, host(slug), "/", "<h1>build 3</h1>");
    const gz = await siteFetch(t, host(slug), "/site.css", { headers: { "accept-encoding": "gzip" }, decompress: false });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
  });

  test("a deploy of many files, some sharing content: rollback checks each blob, and a missing shared one refuses it", async () => {
    const u = await t.user({ plan: "pro" });
    const bucket = await newBucket(t, u.key, "Rollback Many Files");
    const distinct = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`pages/p${i}.html`, `<p>page ${i}</p>`]));
    const copies = (text: string) => Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`copies/c${i}.html`, text]));
    await write(u, bucket, { "index.html": "<h1>many</h1>", ...distinct, ...copies("<p>the same in ten files</p>") });
    const first = await publishNow(u, bucket);
    await write(u, bucket, { "index.html": "<h1>after</h1>", ...copies("<p>changed</p>") });
    const second = await publishNow(u, bucket);
    const slug = second.public_slug;

    // Every blob is there: the rollback goes through and serves the many-file deploy.
    const back = await rollback(u, first.id, { deploy_id: first.deploy_id });
    expect(back.status).toBe(200);
    await expectServedBody(t, host(slug), "/", "<h1>many</h1>");
    await expectServedBody(t, host(slug), "/pages/p39", "<p>page 39</p>");
    expect((await rollback(u, first.id, { deploy_id: second.deploy_id })).status).toBe(200);

    // The blob the ten copies share is removed from the store by hand: the deploy is refused.
    const shared = new Bun.CryptoHasher("sha256").update("<p>the same in ten files</p>").digest("hex");
    const rows = t.pier.deps.db.select().from(deployFiles).where(eq(deployFiles.deployId, first.deploy_id)).all();
    expect(rows.filter((f) => f.blobSha256 === shared).length).toBe(10);
    unlinkSync((t.pier.deps.blobs as DiskBlobStore).pathOf(shared));
    const holes = await rollback(u, first.id, { deploy_id: first.deploy_id });
    expect([holes.status, holes.body.error.code]).toEqual([409, "DEPLOY_COLLECTED"]);
    await expectServedBody(t, host(slug), "/", "<h1>after</h1>");
  });

  test("the publication list shows each site's live deploy and rollback as its own read does", async () => {
    const u = await t.user({ plan: "pro" });
    const make = async (title: string) => {
      const bucket = await newBucket(t, u.key, title);
      await write(u, bucket, { "index.html": `<h1>${title} 1</h1>` });
      const one = await publishNow(u, bucket);
      await write(u, bucket, { "index.html": `<h1>${title} 2</h1>` });
      const two = await publishNow(u, bucket);
      return { bucket, one, two };
    };
    const rolled = await make("Listed Rolled Back");
    const current = await make("Listed Current");
    const gone = await make("Listed Unpublished");
    const onlyOnce = await newBucket(t, u.key, "Listed Once");
    await write(u, onlyOnce, { "index.html": "<h1>once</h1>" });
    const once = await publishNow(u, onlyOnce);
    expect((await rollback(u, rolled.one.id, {})).status).toBe(200);
    expect((await t.api("DELETE", `/api/v1/buckets/${gone.bucket}/publication`, { key: u.key })).status).toBe(202);
    await drain();

    const listed = (await t.api("GET", "/api/v1/publications?include_manifest=false&limit=100", { key: u.key })).body.data.publications as any[];
    const ids = [rolled.one.id, current.one.id, gone.one.id, once.id];
    expect(listed.map((p) => p.id).sort()).toEqual([...ids].sort());
    const fields = (p: any) => ({ deploy_id: p.deploy_id, rolled_back_from: p.rolled_back_from });
    for (const id of ids) expect(fields(listed.find((p) => p.id === id))).toEqual(fields(await readPub(u, id)));
    const byId = (id: string) => fields(listed.find((p) => p.id === id));
    expect(byId(rolled.one.id)).toEqual({ deploy_id: rolled.one.deploy_id, rolled_back_from: rolled.two.deploy_id });
    expect(byId(current.one.id)).toEqual({ deploy_id: current.two.deploy_id, rolled_back_from: undefined });
    expect(byId(gone.one.id)).toEqual({ deploy_id: null, rolled_back_from: undefined });
    expect(byId(once.id)).toEqual({ deploy_id: once.deploy_id, rolled_back_from: undefined });
  });
});
