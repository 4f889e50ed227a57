// A publication's manifest inside its read and list answers is bounded (D284): the first files
// in path order with manifest_truncated, and a list page shares one budget. The whole list comes
// from GET /publications/:id/manifest, streamed a step at a time.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { manifestLimits } from "../../../src/features/publish/present";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { publishSite, type PublishedSite } from "../../helpers/sites";

let t: TestPier;
let owner: TestUser;
let big: PublishedSite;
const N = 4_500; // more than two of the full manifest's 2,000-row steps
const name = (i: number) => `pages/${String(i).padStart(5, "0")}.html`;
const saved = { ...manifestLimits };

beforeAll(async () => {
  t = await startTestPier();
  owner = await t.user({ plan: "pro" });
  big = await publishSite(t, { user: owner, files: Array.from({ length: N }, (_, i) => ({ path: name(N - 1 - i), bytes: `page ${i}` })) });
}, 120_000);
afterAll(async () => {
  Object.assign(manifestLimits, saved);
  await t?.stop();
});

describe("manifest bounds", () => {
  test("a read shows the first 1,000 files in path order and says the rest are at /manifest", async () => {
    const pub = (await t.api("GET", `/api/v1/publications/${big.pub.id}`, { key: owner.key })).body.data.publication;
    expect(pub.manifest).toHaveLength(1_000);
    expect(pub.manifest_truncated).toBe(true);
    expect(pub.published_files_count).toBe(N);
    expect(pub.manifest.slice(0, 2).map((f: any) => f.path)).toEqual([name(0), name(1)]);
    expect(pub.manifest[999].path).toBe(name(999));
  });

  test("/manifest streams every file in path order, with the entry fields of the inline one", async () => {
    const r = await t.api("GET", `/api/v1/publications/${big.pub.id}/manifest`, { key: owner.key });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("application/json");
    const { publication_id, manifest } = r.body.data;
    expect(publication_id).toBe(big.pub.id);
    expect(manifest).toHaveLength(N);
    expect(manifest.map((f: any) => f.path)).toEqual(Array.from({ length: N }, (_, i) => name(i)));
    const inline = (await t.api("GET", `/api/v1/publications/${big.pub.id}`, { key: owner.key })).body.data.publication.manifest[0];
    expect(manifest[0]).toEqual(inline);
    expect(Object.keys(manifest[0]).sort()).toEqual(["content_type", "etag", "path", "sha256", "size"]);
  });

  test("a small site's manifest is whole and not truncated; an unpublished site's /manifest is empty", async () => {
    const small = await publishSite(t, { user: owner, files: [{ path: "index.html", bytes: "hi" }] });
    const pub = (await t.api("GET", `/api/v1/publications/${small.pub.id}`, { key: owner.key })).body.data.publication;
    expect(pub.manifest.map((f: any) => f.path)).toEqual(["index.html"]);
    expect(pub.manifest_truncated).toBe(false);
    t.pier.deps.sqlite.run("update publications set status = 'unpublished' where id = ?", [small.pub.id]);
    expect((await t.api("GET", `/api/v1/publications/${small.pub.id}/manifest`, { key: owner.key })).body).toEqual({
      data: { publication_id: small.pub.id, manifest: [] },
    });
  });

  test("a list page shares one budget: later publications show fewer files, then none, each marked truncated", async () => {
    Object.assign(manifestLimits, { inline: 3, listBudget: 7 });
    try {
      const user = await t.user({ plan: "pro" });
      for (let s = 0; s < 4; s++) await publishSite(t, { user, files: Array.from({ length: 5 }, (_, i) => ({ path: `f${i}.txt`, bytes: `${s}${i}` })) });
      const list = (await t.api("GET", "/api/v1/publications", { key: user.key })).body.data.publications;
      expect(list.map((p: any) => [p.manifest.length, p.manifest_truncated])).toEqual([
        [3, true],
        [3, true],
        [1, true],
        [0, true],
      ]);
    } finally {
      Object.assign(manifestLimits, saved);
    }
  });
});
