// Work an attacker can make Pier do outside request bodies (docs/security.md, "Request bodies and
// the event loop"): a published README crafted to make the Markdown renderer run for seconds.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestPier, type TestPier } from "../helpers/pier";
import { publishSite } from "../helpers/sites";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t.stop());

const enc = (s: string) => new TextEncoder().encode(s);

test("a README that takes marked seconds to render does not stall other requests, and shows as text", async () => {
  // 64 KiB of quote markers: marked recursed for 1.3 s and then overflowed its stack (a 500 before).
  const evil = ">".repeat(64 * 1024 - 10) + " gotcha";
  const site = await publishSite(t, {
    files: [
      { path: "docs/README.md", bytes: enc(evil), contentType: "text/markdown" },
      { path: "docs/a.txt", bytes: enc("a"), contentType: "text/plain" },
    ],
  });
  // Both visits to one process (the primary, through the relay with PIER_TEST_WORKERS): each
  // serving process remembers its own renders.
  const page = t.primaryFetch(site.host, "/docs/");
  await Bun.sleep(20);
  const t0 = performance.now();
  expect((await fetch(`${t.url}/api/v1/status`)).status).toBe(200);
  expect(performance.now() - t0).toBeLessThan(800);
  const r = await page;
  expect(r.status).toBe(200);
  const html = await r.text();
  expect(html).toContain("<pre>&gt;&gt;&gt;");
  expect(html).toContain("gotcha");
  // Remembered: the second visit does not render again.
  const t1 = performance.now();
  expect((await t.primaryFetch(site.host, "/docs/")).status).toBe(200);
  expect(performance.now() - t1).toBeLessThan(500);
});

test("an ordinary README still renders as Markdown", async () => {
  const site = await publishSite(t, {
    files: [
      { path: "README.md", bytes: enc("# Hello\n\nSome *text* and [a link](https://example.com)."), contentType: "text/markdown" },
      { path: "b.txt", bytes: enc("b"), contentType: "text/plain" },
    ],
  });
  const html = await (await fetch(`${t.url}/`, { headers: { host: site.host } })).text();
  expect(html).toContain("<h1>Hello</h1>");
  expect(html).toContain("<em>text</em>");
});
