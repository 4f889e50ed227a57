// A folder of thousands of files: its Auto-Index is built once per deploy and folder (concurrent
// first requests share one build, revalidations build nothing) and lists at most MAX_LISTED rows.
// Before, every request scanned the whole deploy and sorted with a collator built per comparison:
// one anonymous request for a folder of 20,000 files held every site of the process for seconds.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createSiteHandler } from "../../../src/sites/server";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";

let t: TestPier;
let s: PublishedSite;
const MAX_LISTED = 5_000; // the documented cap (docs/sites.md, MAX_LISTED in src/sites/autoindex.ts)
const N = MAX_LISTED + 1_500;

beforeAll(async () => {
  // One process: the render counter read below is this process's.
  t = await startTestPier({}, { servingWorkers: 1 });
  // Names out of order, with numbers, so the natural sort has work to do.
  const files = Array.from({ length: N }, (_, i) => ({ path: `big/${(i * 7919) % N}-${i.toString(36)}.txt`, bytes: "x" }));
  files.push({ path: "big/README.md", bytes: "# Many files\n\nSee *below*." });
  for (let i = 0; i < 30; i++) files.push({ path: `small/d${i}/f.txt`, bytes: "y" });
  s = await publishSite(t, { files });
}, 300_000);
afterAll(() => t.stop());

const renders = () => t.pier.deps.metrics.autoIndexRenders.values[0]!;

describe("Auto-Index of a large folder", () => {
  test("concurrent and repeated requests for a folder build its page once", async () => {
    const before = renders();
    const pages = await Promise.all(Array.from({ length: 8 }, () => siteFetch(t, s.host, "/big/").then(async (r) => [r.status, await r.text()] as const)));
    for (const [status, html] of pages) {
      expect(status).toBe(200);
      expect(html).toBe(pages[0]![1]);
    }
    for (let i = 0; i < 5; i++) expect((await siteFetch(t, s.host, "/big/")).status).toBe(200);
    expect(renders() - before).toBe(1);
  }, 60_000);

  test("rows are capped, with a note saying how many more there are; the order is natural", async () => {
    const html = await (await siteFetch(t, s.host, "/big/")).text();
    const rows = html.match(/<a href="[^"]+\.(txt|md)">/g) ?? [];
    expect(rows.length).toBe(MAX_LISTED);
    const hidden = N + 1 - MAX_LISTED;
    expect(html).toContain(`${hidden.toLocaleString("en")} more entries are not listed: a listing shows the first ${MAX_LISTED.toLocaleString("en")}.`);
    // Numbers by value: 0-…, 1-…, 2-…, then 10-… after 9-….
    const names = rows.slice(0, 12).map((r) => r.slice('<a href="'.length, -2));
    expect(names.slice(0, 3).map((n) => n.split("-")[0])).toEqual(["0", "1", "2"]);
    expect(names[10]!.split("-")[0]).toBe("10");
    expect(html).toContain("<em>below</em>"); // the README still renders under a capped listing
  });

  test("many folders of one deploy: one build each, never again", async () => {
    const before = renders();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 30; i++) expect((await siteFetch(t, s.host, `/small/d${i}/`)).status).toBe(200);
    }
    expect(renders() - before).toBe(30);
  }, 60_000);

  test("a revalidation is answered 304 without building the page, also by a process that never built it", async () => {
    const etag = (await siteFetch(t, s.host, "/big/")).headers.get("etag")!;
    const before = renders();
    for (let i = 0; i < 5; i++) expect((await siteFetch(t, s.host, "/big/", { headers: { "if-none-match": etag } })).status).toBe(304);
    // A second site handler has empty caches, like another serving worker or a restarted Pier.
    const fresh = createSiteHandler(t.pier.deps);
    const label = s.host.split(".")[0]!;
    const res = await fresh(new Request(`http://${s.host}/big/`, { headers: { host: s.host, "if-none-match": etag } }), { kind: "site", label });
    expect(res.status).toBe(304);
    expect(res.headers.get("etag")).toBe(etag);
    expect(renders() - before).toBe(0);
  }, 60_000);
});
