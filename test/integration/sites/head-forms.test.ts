// HEAD on a page that gets hosted forms answers with GET's headers: no ETag of the file as
// stored (GET sends the page with the forms put in, which has none), GET's length and caching.
// Before, HEAD described the stored file, so a client or cache that checked with HEAD was told
// a validator and a length the page it then fetched did not have.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";

let t: TestPier;
let site: PublishedSite;

beforeAll(async () => {
  t = await startTestPier();
  site = await publishSite(t, {
    files: [
      { path: "index.html", bytes: "<!doctype html><html><body><h1>Shop</h1></body></html>" },
      { path: "contact.html", bytes: "<!doctype html><html><body>{{PIER_FORM:contact}}</body></html>" },
      { path: "404.html", bytes: "<!doctype html><html><body><h1>Lost?</h1></body></html>" },
      { path: "style.css", bytes: "h1{color:red}" },
      { path: "_headers", bytes: "/*\n  Cache-Control: public, max-age=604800\n" },
    ],
  });
  const r = await t.api("PATCH", `/api/v1/buckets/${site.pub.bucketId}`, {
    key: site.user.key,
    body: { bucket: { metadata: { publication_forms: { forms: [{ name: "contact" }] } } } },
  });
  expect(r.status).toBe(200);
});
afterAll(() => t.stop());

const DESCRIBING = ["etag", "content-length", "content-type", "cache-control", "accept-ranges", "content-encoding", "last-modified", "content-security-policy"];
const described = (r: Response) => Object.fromEntries(DESCRIBING.map((h) => [h, r.headers.get(h)]));

test("HEAD of a page with hosted forms describes what GET sends", async () => {
  for (const path of ["/", "/contact", "/missing"]) {
    const get = await siteFetch(t, site.host, path, { headers: { "accept-encoding": "identity" } });
    const body = await get.text();
    expect(body).toContain("pier-form"); // the forms are in
    const head = await siteFetch(t, site.host, path, { method: "HEAD", headers: { "accept-encoding": "identity" } });
    expect([path, head.status]).toEqual([path, get.status]);
    expect(await head.text()).toBe("");
    expect([path, described(head)]).toEqual([path, described(get)]);
    expect(head.headers.get("etag")).toBeNull();
    // The fill timer differs per view, never the page's length.
    expect([path, Number(head.headers.get("content-length"))]).toEqual([path, Buffer.byteLength(body)]);
  }
});

test("HEAD of a file without forms keeps the file's ETag and length", async () => {
  const get = await siteFetch(t, site.host, "/style.css");
  const head = await siteFetch(t, site.host, "/style.css", { method: "HEAD" });
  expect(described(head)).toEqual(described(get));
  expect(head.headers.get("etag")).toMatch(/^"[0-9a-f]{40}"$/);
});
