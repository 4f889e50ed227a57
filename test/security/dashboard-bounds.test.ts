// Dashboard pages over large data: a page shows a page of rows, so it reads about a page of rows
// from SQLite, whatever the size of what it pages through (a site of 100,000 files must not be
// read whole, on the event loop, for every view of its Site tab). Rows are counted as SQLite
// hands them to drizzle, so the tests are not timing tests.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Browser } from "../helpers/browser";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { publishSite } from "../helpers/sites";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t?.stop());

async function signedIn(u: TestUser): Promise<Browser> {
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  return b;
}

/** Rows SQLite returned to drizzle's queries while `fn` ran (drizzle prepares each query it runs). */
async function rowsRead(fn: () => Promise<unknown>): Promise<number> {
  const db = t.pier.deps.sqlite;
  const prepare = db.prepare;
  let rows = 0;
  const count = (r: unknown) => {
    rows += Array.isArray(r) ? r.length : r ? 1 : 0;
    return r;
  };
  db.prepare = ((...args: Parameters<typeof db.prepare>) => {
    const stmt = prepare.apply(db, args);
    // A proxy, not a patch: the statement stays in the statement cache untouched.
    return new Proxy(stmt, {
      get(target, name) {
        const v = Reflect.get(target, name, target);
        if (name === "all" || name === "values" || name === "get") return (...a: unknown[]) => count((v as (...x: unknown[]) => unknown).apply(target, a));
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  }) as typeof db.prepare;
  try {
    await fn();
  } finally {
    db.prepare = prepare;
  }
  return rows;
}

describe("dashboard pages over large data read a page of it", () => {
  test("the Site tab of a 3,000-file site reads its 50 shown files, not the whole manifest", async () => {
    const u = await t.user();
    const files = Array.from({ length: 3000 }, (_, i) => ({ path: `p/${String(i).padStart(5, "0")}.txt`, bytes: "x", contentType: "text/plain" }));
    const site = await publishSite(t, { user: u, files });
    const b = await signedIn(u);
    let page = "";
    const rows = await rowsRead(async () => {
      const res = await b.get(`/dashboard/buckets/${site.pub.bucketId}/site?offset=1500`);
      expect(res.status).toBe(200);
      page = res.text;
    });
    // The page shows its slice, the total and the next page, as before (booleans: no page dump on failure).
    const shows = (text: string) => page.includes(text);
    expect([shows("p/01500.txt"), shows("p/01549.txt"), shows("p/01550.txt"), shows("p/01499.txt")]).toEqual([true, true, false, false]);
    expect(shows("3,000 file(s)")).toBe(true);
    expect(shows("?offset&#61;1550#manifest")).toBe(true);
    expect(rows).toBeLessThan(500);
    // An offset past the end (or beyond any integer SQLite binds) is an empty page, not an error.
    expect((await b.get(`/dashboard/buckets/${site.pub.bucketId}/site?offset=99999999999999999999999`)).status).toBe(200);
  });
});

describe("notice codes", () => {
  test("a ?done= code naming an inherited property (constructor, toString) shows no notice", async () => {
    const u = await t.user();
    const site = await publishSite(t, { user: u, files: [{ path: "index.html", bytes: "hi" }] });
    const b = await signedIn(u);
    for (const page of ["/dashboard", `/dashboard/buckets/${site.pub.bucketId}`, `/dashboard/buckets/${site.pub.bucketId}/site`]) {
      for (const code of ["constructor", "toString", "__proto__"]) {
        const res = await b.get(`${page}?done=${code}`);
        expect(res.status).toBe(200);
        const body = res.text;
        // alertBox's notice (the page's own status boxes carry an id).
        expect([page, code, body.includes("[native code]"), body.includes('<div class="alert ok" role="status">')]).toEqual([page, code, false, false]);
      }
    }
  });
});
