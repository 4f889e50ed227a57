// A gated site's content stays out of shared caches whatever its `_headers` says: a CDN in front
// of Pier obeys CDN-Cache-Control, Surrogate-Control and its vendor's own field over
// Cache-Control, so those are dropped on gated sites like Cache-Control is. A public site keeps them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";

const ORDERS = {
  "cache-control": "public, max-age=86400",
  "cdn-cache-control": "max-age=86400",
  "cloudflare-cdn-cache-control": "max-age=86400",
  "vercel-cdn-cache-control": "max-age=86400",
  "surrogate-control": "max-age=86400",
  "edge-control": "cache-maxage=1d",
};
const HEADERS = `/*\n${Object.entries(ORDERS)
  .map(([name, value]) => `  ${name}: ${value}`)
  .join("\n")}\n  X-Site: kept\n`;
const FILES = [
  { path: "index.html", bytes: "<h1>Members' page</h1>" },
  { path: "doc.txt", bytes: "a members' document" },
  { path: "list/a.txt", bytes: "a" },
  { path: "404.html", bytes: "<h1>Lost</h1>" },
  { path: "_headers", bytes: HEADERS },
  { path: "_redirects", bytes: "/old /doc.txt 301\n/alias /doc.txt 200\n" },
];

let t: TestPier;
let gated: PublishedSite;
let open: PublishedSite;
let cookie: string;

beforeAll(async () => {
  t = await startTestPier();
  gated = await publishSite(t, { access: "password", password: "open sesame", files: FILES });
  open = await publishSite(t, { files: FILES });
  const r = await siteFetch(t, gated.host, "/_pier/gate/password", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ password: "open sesame", next: "/" }).toString(),
  });
  expect(r.status).toBe(303);
  cookie = r.headers.get("set-cookie")!.split(";")[0]!;
});
afterAll(() => t.stop());

/** Every kind of answer a site's content gets: file, 304, range, 416, redirect, rewrite, listing, 404. */
async function answers(site: PublishedSite, extra: Record<string, string>): Promise<[string, Response][]> {
  const get = (path: string, headers: Record<string, string> = {}) => siteFetch(t, site.host, path, { headers: { ...extra, ...headers } });
  const file = await get("/doc.txt");
  const listing = await get("/list/");
  return [
    ["file", file],
    ["file 304", await get("/doc.txt", { "if-none-match": file.headers.get("etag")! })],
    ["range 206", await get("/doc.txt", { range: "bytes=0-3" })],
    ["range 416", await get("/doc.txt", { range: "bytes=999-" })],
    ["HEAD", await siteFetch(t, site.host, "/doc.txt", { method: "HEAD", headers: extra })],
    ["page", await get("/")],
    ["folder redirect", await get("/list")],
    ["rule redirect", await get("/old")],
    ["rewrite", await get("/alias")],
    ["listing", listing],
    ["listing 304", await get("/list/", { "if-none-match": listing.headers.get("etag")! })],
    ["site 404", await get("/missing")],
  ];
}

describe("cache orders from _headers", () => {
  test("a gated site's answers carry none of them: private, no-cache only", async () => {
    for (const [what, r] of await answers(gated, { cookie })) {
      expect([what, r.status < 500, r.headers.get("x-site")]).toEqual([what, true, "kept"]);
      expect([what, r.headers.get("cache-control")]).toEqual([what, "private, no-cache"]);
      for (const name of Object.keys(ORDERS).slice(1)) expect([what, name, r.headers.get(name)]).toEqual([what, name, null]);
    }
  });

  test("the gate page itself is not stored by anyone", async () => {
    const r = await siteFetch(t, gated.host, "/doc.txt");
    expect(r.status).toBe(401);
    expect(r.headers.get("cache-control")).toBe("no-store");
    for (const name of Object.keys(ORDERS).slice(1)) expect(r.headers.get(name)).toBeNull();
  });

  test("a public site keeps what its _headers says", async () => {
    for (const [what, r] of await answers(open, {})) {
      if (r.status === 304 || r.status === 416) continue; // a 304 or 416 carries no _headers of its body's
      for (const [name, value] of Object.entries(ORDERS)) expect([what, name, r.headers.get(name)]).toEqual([what, name, value]);
    }
  });
});
