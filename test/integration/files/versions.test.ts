import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { collectGarbage } from "../../../src/blobs/gc";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { declared, newBucket, syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
});
afterAll(() => t.stop());

const read = async (bucket: string, path: string) => {
  const r = await t.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=${encodeURIComponent(path)}`, { key: u.key });
  return r.status === 302 ? (await fetch(r.headers.get("location")!)).text() : null;
};
const paths = async (bucket: string) => (await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files.map((f: any) => f.path);

describe("bucket versions", () => {
  test("list, get with changed paths, restore makes a new latest version and keeps history", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [textFile("index.html", "v1"), textFile("about.html", "about")]);
    await syncFiles(t, u.key, bucket, [textFile("index.html", "v2"), textFile("new.html", "new")]);
    const id = (await t.api("GET", `/api/v1/buckets/${bucket}/files?q=about`, { key: u.key })).body.data.files[0].id;
    await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${id}`, { key: u.key });
    const list = await t.api("GET", `/api/v1/buckets/${bucket}/versions`, { key: u.key });
    const versions = list.body.data.versions;
    // The documented page limits, kept as every list keeps its own: 500 versions, 1000 files
    // (before: 501-1000 versions were accepted and silently answered with 500).
    const tooMany = await t.api("GET", `/api/v1/buckets/${bucket}/versions?limit=501`, { key: u.key });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.error.details.fields[0].path).toBe("/limit");
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/versions/${versions[0].id}/files?limit=1000`, { key: u.key })).status).toBe(200);
    expect(versions.map((v: any) => v.number)).toEqual([3, 2, 1]);
    expect(versions.map((v: any) => v.file_count)).toEqual([2, 3, 2]);
    const first = versions[2];
    const got = await t.api("GET", `/api/v1/buckets/${bucket}/versions/${first.id}`, { key: u.key });
    expect(got.body.data.version.changes.map((c: any) => `${c.change} ${c.path}`)).toEqual(["written about.html", "written index.html"]);

    const snap = await t.api("GET", `/api/v1/buckets/${bucket}/versions/${versions[1].id}/files`, { key: u.key });
    expect(snap.body.data.files.map((f: any) => f.path)).toEqual(["about.html", "index.html", "new.html"]);
    const restore = await t.api("POST", `/api/v1/buckets/${bucket}/versions/restore`, { key: u.key, body: { version_id: first.id, comment: "back to v1" } });
    expect(restore.status).toBe(201);
    expect(restore.body.data.version).toMatchObject({ number: 4, kind: "restore", comment: "back to v1", restored_from: first.id, file_count: 2 });
    expect(await paths(bucket)).toEqual(["about.html", "index.html"]);
    expect(await read(bucket, "index.html")).toBe("v1");
    expect(await read(bucket, "about.html")).toBe("about");
    // The restored file got its old id back.
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/files/${id}`, { key: u.key })).body.data.file.path).toBe("about.html");
    // Newer history is kept: restoring version 2 brings back new.html.
    const again = await t.api("POST", `/api/v1/buckets/${bucket}/versions/restore`, { key: u.key, body: { version_id: versions[1].id } });
    expect(again.body.data.version.number).toBe(5);
    expect(await paths(bucket)).toEqual(["about.html", "index.html", "new.html"]);
    expect(await read(bucket, "index.html")).toBe("v2");
    const unknown = await t.api("POST", `/api/v1/buckets/${bucket}/versions/restore`, { key: u.key, body: { version_id: "bktrv_nope" } });
    expect(unknown.body.error.code).toBe("VERSION_NOT_FOUND");
  });

  test("a version's files page through its snapshot in path order, deletions and later changes left out", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(
      t,
      u.key,
      bucket,
      ["e", "a", "d", "c", "b"].map((n) => textFile(`${n}.txt`, `${n}1`)),
    );
    const b = (await t.api("GET", `/api/v1/buckets/${bucket}/files?q=b.txt`, { key: u.key })).body.data.files[0].id;
    await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${b}`, { key: u.key });
    await syncFiles(t, u.key, bucket, [textFile("c.txt", "c2"), textFile("f.txt", "f2"), textFile("b.txt", "b3")]);
    const versions = (await t.api("GET", `/api/v1/buckets/${bucket}/versions`, { key: u.key })).body.data.versions;
    const all = async (versionId: string) => {
      const seen: string[] = [];
      for (let offset: number | null = 0; offset !== null; ) {
        const r = await t.api("GET", `/api/v1/buckets/${bucket}/versions/${versionId}/files?limit=2&offset=${offset}`, { key: u.key });
        const { files, pagination } = r.body.data;
        expect(files.length).toBeLessThanOrEqual(2);
        seen.push(...files.map((f: any) => `${f.path}:${f.byte_size}`));
        expect(pagination.total_count).toBe(r.body.data.version.file_count);
        offset = pagination.next_offset;
      }
      return seen;
    };
    expect(await all(versions[2].id)).toEqual(["a.txt:2", "b.txt:2", "c.txt:2", "d.txt:2", "e.txt:2"]);
    expect(await all(versions[1].id)).toEqual(["a.txt:2", "c.txt:2", "d.txt:2", "e.txt:2"]);
    expect(await all(versions[0].id)).toEqual(["a.txt:2", "b.txt:2", "c.txt:2", "d.txt:2", "e.txt:2", "f.txt:2"]);
    const sha = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");
    const middle = (await t.api("GET", `/api/v1/buckets/${bucket}/versions/${versions[1].id}/files?offset=1&limit=1`, { key: u.key })).body.data;
    expect(middle.files.map((f: any) => [f.path, f.sha256])).toEqual([["c.txt", sha("c1")]]);
    expect(middle.pagination).toMatchObject({ total_count: 4, has_more: true, next_offset: 2 });
  });

  test("a version stores only the changed paths", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(
      t,
      u.key,
      bucket,
      Array.from({ length: 50 }, (_, i) => textFile(`f${i}.txt`, `${i}`)),
    );
    await syncFiles(t, u.key, bucket, [textFile("f7.txt", "changed")]);
    const v = (await t.api("GET", `/api/v1/buckets/${bucket}/versions`, { key: u.key })).body.data.versions[0];
    expect(v.changed_paths_count).toBe(1);
    expect(v.file_count).toBe(50);
    const rows = t.pier.deps.sqlite.query("SELECT count(*) AS n FROM file_changes WHERE bucket_id = ?").get(bucket) as { n: number };
    expect(rows.n).toBe(51);
  });

  test("GC keeps blobs that only old versions reference, frees unreferenced ones", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [textFile("h.txt", "historic")]);
    await syncFiles(t, u.key, bucket, [textFile("h.txt", "current")]);
    const orphan = await t.pier.deps.blobs.putBytes("never attached");
    t.clock.advance(48 * 3600_000);
    await collectGarbage(t.pier.deps);
    expect(await t.pier.deps.blobs.has(declared(textFile("h.txt", "historic")).sha256)).toBe(true);
    expect(await t.pier.deps.blobs.has(orphan.sha256)).toBe(false);
    t.clock.advance(-48 * 3600_000);
  });
});

describe("bucket deletion hooks", () => {
  test("the bucket-owned tables count a bucket's files and versions and empty it in bounded batches", async () => {
    const { countBucketItems, deleteBucketItemsBatch } = await import("../../../src/features/buckets/items");
    const bucket = await newBucket(t, u.key);
    await syncFiles(
      t,
      u.key,
      bucket,
      Array.from({ length: 20 }, (_, i) => textFile(`f${i}.txt`, `${i}`)),
    );
    const c = countBucketItems(bucket, t.pier.deps.db);
    expect(c.files).toBe(20);
    expect(c.versions).toBe(1);
    let batches = 0;
    while (deleteBucketItemsBatch(bucket, 15, t.pier.deps.db).deleted > 0) batches++;
    expect(batches).toBeGreaterThan(2);
    expect(countBucketItems(bucket, t.pier.deps.db).total).toBe(0);
  });
});
