// A bucket in a list reads exactly as its own GET, in every state a list shows: the per-row
// lookups behind both are prepared once per database (src/db/prepared.ts), with the built query
// kept for callers inside a transaction, and the two must never drift apart. The same holds for
// the list's own page and the files and versions reads prepared the same way.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { transaction } from "../../../src/db/tx";
import { actorFromApiKey } from "../../../src/features/accounts/keys";
import { listBucketPage } from "../../../src/features/buckets/service";
import { latestVersion } from "../../../src/features/files/commit";
import { fileById, fileByPath } from "../../../src/features/files/service";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier({ mailDomain: "in.pier.test" });
  u = await t.user({ plan: "pro" });
});
afterAll(() => t.stop());

test("every bucket of a list, in every state, is presented as GET /buckets/:id presents it", async () => {
  await createBucket(t, u, { title: "plain" });
  await createBucket(t, u, { title: "with an address", inbound_email: { enabled: true } });
  const locked = await createBucket(t, u, { title: "locked" });
  expect((await t.api("POST", `/api/v1/buckets/${locked.id}/lock`, { key: u.key, body: { message: "busy", duration_seconds: 120 } })).status).toBe(200);
  const archived = await createBucket(t, u, { title: "archived" });
  expect((await t.api("POST", `/api/v1/buckets/${archived.id}/archive`, { key: u.key })).status).toBe(200);
  await publishSite(t, { user: u, title: "published", files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });

  for (const query of ["", "?archived=true"]) {
    const list = await t.api("GET", `/api/v1/buckets${query}`, { key: u.key });
    expect(list.status).toBe(200);
    const buckets = list.body.data.buckets as { id: string }[];
    expect(buckets.length).toBeGreaterThan(0);
    for (const listed of buckets) {
      const own = await t.api("GET", `/api/v1/buckets/${listed.id}`, { key: u.key });
      expect(listed).toEqual(own.body.data.bucket);
    }
  }
  const all = (await t.api("GET", "/api/v1/buckets", { key: u.key })).body.data.buckets as any[];
  expect(all.find((b) => b.title === "published")).toMatchObject({ published: true, publication_lifecycle_active: true });
  expect(all.find((b) => b.title === "locked").lock).toMatchObject({ kind: "bucket_lock", message: "busy" });
  expect(all.find((b) => b.title === "with an address").inbound_email).toMatchObject({ enabled: true });
});

test("the plain bucket list, prepared once per connection, pages exactly as the filtered list built per request", async () => {
  const other = await t.user({ plan: "pro" });
  for (let i = 0; i < 7; i++) await createBucket(t, other, { title: `paged ${i}` });
  for (let i = 0; i < 3; i++) {
    const b = await createBucket(t, other, { title: `paged archived ${i}` });
    expect((await t.api("POST", `/api/v1/buckets/${b.id}/archive`, { key: other.key })).status).toBe(200);
  }
  const deps = t.pier.deps;
  const actor = actorFromApiKey(deps, other.key)!;
  for (const archived of [false, true]) {
    for (const [limit, offset] of [
      [3, 0],
      [3, 3],
      [3, 6],
      [100, 0],
      [2, 50],
    ] as const) {
      const plain = listBucketPage(deps, actor, { archived, limit, offset });
      // Every title contains "paged": the same buckets, through the query built per request.
      const filtered = listBucketPage(deps, actor, { archived, limit, offset, titleContains: "paged" });
      expect(plain).toEqual(filtered);
      expect(plain.buckets.every((b) => b.accountId === actor.accountId && (b.archivedAt !== null) === archived)).toBe(true);
    }
  }
  expect(listBucketPage(deps, actor, { archived: false, limit: 100 }).pagination.total_count).toBe(7);
  expect(listBucketPage(deps, actor, { archived: true, limit: 100 }).pagination.total_count).toBe(3);
  // The first account's buckets never show in this one's list.
  expect(listBucketPage(deps, actorFromApiKey(deps, u.key)!, { archived: false, limit: 100 }).buckets.some((b) => b.title.startsWith("paged"))).toBe(false);
});

test("files, versions and history read on the connection (prepared) equal the same reads inside a transaction (built)", async () => {
  const b = await createBucket(t, u, { title: "reads" });
  for (const [path, text] of [
    ["a.txt", "one"],
    ["b/c.txt", "two"],
    ["a.txt", "three"],
  ]) {
    expect((await t.api("POST", `/api/v1/buckets/${b.id}/files/append_text`, { key: u.key, body: { path, text, create: true } })).status).toBe(200);
  }
  const deps = t.pier.deps;
  const a = fileByPath(b.id, "a.txt", deps.db)!;
  expect(a.versionCount).toBe(2);
  transaction(deps.db, (tx) => {
    expect(fileByPath(b.id, "a.txt", tx)).toEqual(a);
    expect(fileById(b.id, a.id, tx)).toEqual(fileById(b.id, a.id, deps.db));
    expect(latestVersion(b.id, tx)).toEqual(latestVersion(b.id, deps.db));
  });
  expect(latestVersion(b.id, deps.db)).toMatchObject({ number: 3, fileCount: 2 });
  expect(fileByPath(b.id, "missing.txt", deps.db)).toBeUndefined();
  expect(() => fileById(b.id, "fil_missing", deps.db)).toThrow(/not in bucket/);

  const files = await t.api("GET", `/api/v1/buckets/${b.id}/files?limit=1&offset=1`, { key: u.key });
  expect(files.body.data.files.map((f: { path: string }) => f.path)).toEqual(["b/c.txt"]);
  expect(files.body.data.pagination).toMatchObject({ limit: 1, offset: 1, total_count: 2, has_more: false });
  const history = await t.api("GET", `/api/v1/buckets/${b.id}/files/${a.id}/versions?limit=1&offset=1`, { key: u.key });
  expect(history.body.data.versions.map((v: { version_number: number }) => v.version_number)).toEqual([1]);
  const versions = await t.api("GET", `/api/v1/buckets/${b.id}/versions?limit=2`, { key: u.key });
  expect(versions.body.data.versions.map((v: { number: number }) => v.number)).toEqual([3, 2]);
  expect(versions.body.data.pagination).toMatchObject({ has_more: true, next_offset: 2 });
});
