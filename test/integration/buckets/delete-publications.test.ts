// Deleting a bucket that was published: refused while the site is live (UNPUBLISH_FIRST); once
// unpublished, its publications, kept deploys, deploy files and publish sessions go with it
// (counted in the delete progress, removed in batches) and the blobs only deploys referenced
// (precompressed variants) become garbage for the blob GC.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { utimesSync } from "node:fs";
import { getTableName } from "drizzle-orm";
import type { DiskBlobStore } from "../../../src/blobs/disk";
import { collectGarbage } from "../../../src/blobs/gc";
import { bucketOwnedTables } from "../../../src/features/buckets/items";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { siteFetch } from "../../helpers/sites";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

// Few rows delete at once; more go to the background job.
const SYNC_LIMIT = 40;
let t: TestPier;
beforeAll(async () => {
  t = await startTestPier({ bucketDeleteSyncLimit: SYNC_LIMIT });
});
afterAll(() => t.stop());

const db = () => t.pier.deps.sqlite;
const drain = () => t.pier.runner.drain();
const count = (q: string, ...args: string[]) =>
  (
    db()
      .query(q)
      .get(...args) as { n: number }
  ).n;
const publishRows = (bucket: string) => ({
  publications: count("SELECT count(*) AS n FROM publications WHERE bucket_id = ?", bucket),
  deploys: count("SELECT count(*) AS n FROM deploys WHERE publication_id IN (SELECT id FROM publications WHERE bucket_id = ?)", bucket),
  deploy_files: count(
    "SELECT count(*) AS n FROM deploy_files WHERE deploy_id IN (SELECT d.id FROM deploys d JOIN publications p ON p.id = d.publication_id WHERE p.bucket_id = ?)",
    bucket,
  ),
  publish_sessions: count("SELECT count(*) AS n FROM publish_sessions WHERE bucket_id = ?", bucket),
});
const html = (n: number) => `<!doctype html><title>v${n}</title>` + `<p>Compressible paragraph ${n}. </p>\n`.repeat(400);
const sha = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");

describe("deleting a published bucket", () => {
  test("publishing tables are bucket-owned, children first", () => {
    const names = bucketOwnedTables.map((x) => getTableName(x.table));
    for (const [child, parent] of [
      ["deploy_files", "deploys"],
      ["deploys", "publications"],
      ["upload_entries", "publish_sessions"],
    ] as const) {
      expect(names.indexOf(child)).toBeGreaterThanOrEqual(0);
      expect(names.indexOf(child)).toBeLessThan(names.indexOf(parent));
    }
  });

  test("UNPUBLISH_FIRST while live; once unpublished, publications, deploys and sessions go in the background and GC frees deploy-only blobs", async () => {
    const u = await t.user({ plan: "pro" });
    const bucket = await newBucket(t, u.key, "Published Then Deleted");
    const other = await newBucket(t, u.key, "Keeps A Shared File");
    const shared = "shared between buckets";
    for (const b of [bucket, other]) expect((await directUpload(t, u.key, b, textFile("shared.txt", shared))).status).toBeLessThan(300);

    // Three deploys kept for rollback (each build changes a page), plus a preview.
    for (let i = 1; i <= 3; i++) {
      expect((await directUpload(t, u.key, bucket, textFile("index.html", html(i), "text/html; charset=utf-8"))).status).toBeLessThan(300);
      for (let j = 0; j < 6; j++) await directUpload(t, u.key, bucket, textFile(`page${j}.txt`, `page ${j} of build ${i}`));
      expect((await t.api("POST", `/api/v1/buckets/${bucket}/publication`, { key: u.key, body: {} })).status).toBe(202);
      await drain();
    }
    expect((await t.api("POST", `/api/v1/buckets/${bucket}/publication/preview`, { key: u.key, body: {} })).status).toBe(202);
    await drain();
    // A pending publish session of the bucket.
    const text = "<p>session</p>";
    const s = await t.api("POST", "/api/v1/publish_sessions", {
      key: u.key,
      body: {
        bucket_id: bucket,
        files: [
          {
            path: "x.html",
            byte_size: text.length,
            content_type: "text/html",
            checksum: new Bun.CryptoHasher("md5").update(text).digest("base64"),
            sha256: sha(text),
          },
        ],
      },
    });
    expect(s.status).toBe(201);

    const before = publishRows(bucket);
    expect(before.publications).toBe(2);
    expect(before.deploys).toBeGreaterThanOrEqual(4);
    expect(before.deploy_files).toBeGreaterThanOrEqual(24);
    expect(before.publish_sessions).toBe(1);
    // The precompressed variants exist only in deploy_files.
    const variants = (
      db()
        .query(
          "SELECT gzip_sha256 AS g, br_sha256 AS b FROM deploy_files WHERE path = 'index.html' AND deploy_id IN (SELECT d.id FROM deploys d JOIN publications p ON p.id = d.publication_id WHERE p.bucket_id = ?)",
        )
        .all(bucket) as { g: string | null; b: string | null }[]
    )
      .flatMap((r) => [r.g, r.b])
      .filter((x): x is string => x !== null);
    expect(variants.length).toBeGreaterThan(0);

    const confirmation = (await t.api("GET", `/api/v1/buckets/${bucket}`, { key: u.key })).body.data.bucket.delete.confirmation;
    const live = await t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: { confirmation } });
    expect([live.status, live.body.error.code]).toEqual([409, "UNPUBLISH_FIRST"]);
    expect(publishRows(bucket)).toEqual(before);

    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}/publication`, { key: u.key })).status).toBe(202);
    await drain();
    // Unpublished: the rows stay (deploys are kept for rollback) until the bucket goes.
    expect(publishRows(bucket)).toEqual(before);

    const del = await t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: { confirmation } });
    expect(del.status).toBe(202);
    const progress = del.body.data.delete_progress;
    const rowsBefore = before.publications + before.deploys + before.deploy_files + before.publish_sessions;
    const otherRows = [
      "mail_messages",
      "upload_entries",
      "upload_sessions",
      "file_locks",
      "files",
      "file_changes",
      "bucket_versions",
      "bucket_variables",
      "bucket_locks",
    ].reduce((n, table) => n + count(`SELECT count(*) AS n FROM ${table} WHERE bucket_id = ?`, bucket), 0);
    expect(progress.total_items).toBe(otherRows + rowsBefore);
    await drain();
    expect((await t.api("GET", `/api/v1/buckets/${bucket}`, { key: u.key })).status).toBe(404);
    expect(publishRows(bucket)).toEqual({ publications: 0, deploys: 0, deploy_files: 0, publish_sessions: 0 });
    expect(count("SELECT count(*) AS n FROM deploy_files WHERE deploy_id NOT IN (SELECT id FROM deploys)")).toBe(0);

    await collectGarbage(t.pier.deps, 0);
    for (const v of variants) expect(await t.pier.deps.blobs.has(v)).toBe(false);
    expect(await t.pier.deps.blobs.has(sha(html(3)))).toBe(false);
    expect(await t.pier.deps.blobs.has(sha(shared))).toBe(true);
  });

  test("a build reusing the compressed copies of a bucket deleted meanwhile keeps them when the blob GC runs beside it", async () => {
    const u = await t.user({ plan: "pro" });
    const gone = await newBucket(t, u.key, "Deleted During A Build");
    const kept = await newBucket(t, u.key, "Built Beside A Delete");
    const page = html(77);
    for (const b of [gone, kept]) await directUpload(t, u.key, b, textFile("index.html", page, "text/html; charset=utf-8"));
    await directUpload(t, u.key, kept, textFile("z.txt", "the last file of the build"));
    await t.api("POST", `/api/v1/buckets/${gone}/publication`, { key: u.key, body: {} });
    await drain();
    await t.api("DELETE", `/api/v1/buckets/${gone}/publication`, { key: u.key });
    await drain();
    // gone's compressed copies were written two days ago: past the collector's grace period.
    const copies = db()
      .query(
        "SELECT gzip_sha256 AS g, br_sha256 AS b FROM deploy_files WHERE deploy_id IN (SELECT d.id FROM deploys d JOIN publications p ON p.id = d.publication_id WHERE p.bucket_id = ?)",
      )
      .get(gone) as { g: string; b: string };
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    for (const v of [copies.g, copies.b]) utimesSync((t.pier.deps.blobs as DiskBlobStore).pathOf(v), twoDaysAgo, twoDaysAgo);
    expect((await t.api("POST", `/api/v1/buckets/${kept}/publication`, { key: u.key, body: {} })).status).toBe(202);

    // While the build prepares its files (index.html has found gone's copies by then), gone is
    // deleted and the blob collector (another job lane) runs.
    const blobs = t.pier.deps.blobs as { size: (sha: string) => Promise<number | null> };
    const size = blobs.size;
    let overlapped = false;
    blobs.size = async (s) => {
      const n = await size.call(blobs, s);
      if (s === sha("the last file of the build") && !overlapped) {
        overlapped = true;
        await Bun.sleep(30);
        const confirmation = (await t.api("GET", `/api/v1/buckets/${gone}`, { key: u.key })).body.data.bucket.delete.confirmation;
        expect((await t.api("DELETE", `/api/v1/buckets/${gone}`, { key: u.key, body: { confirmation } })).status).toBe(200);
        await collectGarbage(t.pier.deps);
      }
      return n;
    };
    try {
      await drain();
    } finally {
      delete (blobs as Partial<typeof blobs>).size;
      if (blobs.size !== size) blobs.size = size;
    }
    expect(overlapped).toBe(true);
    const pub = db().query("SELECT public_slug AS slug, current_deploy_id AS d FROM publications WHERE bucket_id = ?").get(kept) as { slug: string; d: string };
    const row = db().query("SELECT gzip_sha256 AS g, br_sha256 AS b FROM deploy_files WHERE deploy_id = ? AND path = 'index.html'").get(pub.d) as {
      g: string;
      b: string;
    };
    for (const v of [row.g, row.b]) expect(await t.pier.deps.blobs.has(v)).toBe(true);
    const host = `${pub.slug}.${t.pier.deps.urls.sitesDomain}`;
    for (const encoding of ["br", "gzip"]) {
      const r = await siteFetch(t, host, "/", { headers: { "accept-encoding": encoding } });
      expect([r.status, await r.text()]).toEqual([200, page]);
    }
  });

  test("a small unpublished bucket goes at once with its publication rows", async () => {
    const u = await t.user({ plan: "pro" });
    const bucket = await newBucket(t, u.key, "Small Published");
    await directUpload(t, u.key, bucket, textFile("index.html", "<p>hi</p>", "text/html; charset=utf-8"));
    await t.api("POST", `/api/v1/buckets/${bucket}/publication`, { key: u.key, body: {} });
    await drain();
    await t.api("DELETE", `/api/v1/buckets/${bucket}/publication`, { key: u.key });
    await drain();
    const confirmation = (await t.api("GET", `/api/v1/buckets/${bucket}`, { key: u.key })).body.data.bucket.delete.confirmation;
    const del = await t.api("DELETE", `/api/v1/buckets/${bucket}`, { key: u.key, body: { confirmation } });
    expect(del.status).toBe(200);
    expect(publishRows(bucket)).toEqual({ publications: 0, deploys: 0, deploy_files: 0, publish_sessions: 0 });
  });
});
