// The dashboard's scripts: served from Pier itself with a content hash in the URL, cached for a
// year only under the current hash, and allowed by the page CSP only from Pier's own origin.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Browser } from "../../helpers/browser";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t?.stop());

async function signedIn() {
  const u = await t.user();
  const b = new Browser(t.url);
  const res = await b.submit("/signin", "/signin", { email: u.email, password: u.password });
  expect(res.status).toBe(303);
  return b;
}

test("every dashboard page loads dashboard.js by a hashed URL, and its CSP allows scripts only from Pier", async () => {
  const b = await signedIn();
  const page = await b.get("/dashboard/buckets");
  expect(page.status).toBe(200);
  const csp = page.headers.get("content-security-policy")!;
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toMatch(/script-src[^;]*(unsafe-inline|unsafe-eval|\*)/);
  const src = /<script src="(\/dashboard\/assets\/dashboard\.js\?v=([0-9a-f]{16}))" defer><\/script>/.exec(page.text);
  expect(src).not.toBeNull();
  // No inline script anywhere on the page.
  expect(page.text.match(/<script(?![^>]*\bsrc=)/g)).toBeNull();

  const script = await fetch(t.url + src![1]);
  expect(script.status).toBe(200);
  expect(script.headers.get("content-type")).toStartWith("text/javascript");
  expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  expect(await script.text()).toContain("data-copy");

  // An old or missing hash is served but must be revalidated, so a stale copy is never pinned.
  const stale = await fetch(`${t.url}/dashboard/assets/dashboard.js?v=0000000000000000`);
  expect(stale.status).toBe(200);
  expect(stale.headers.get("cache-control")).toBe("no-cache");
});

test("only embedded dashboard scripts are served: no templates, no other files, no traversal", async () => {
  for (const path of [
    "/dashboard/assets/bucket.html",
    "/dashboard/assets/nope.js",
    "/dashboard/assets/..%2Fbucket.html",
    "/dashboard/assets/..%2F..%2Fauth%2Flayout.html",
  ]) {
    const res = await fetch(t.url + path);
    expect([404, 303]).toContain(res.status);
    expect(await res.text()).not.toContain("{{");
  }
});
