// A read-only account (`pier admin account read-only`) may read but not write. The REST API
// refuses its writes with ACCOUNT_READ_ONLY; the dashboard's forms are another door to the same
// services and must refuse them too. One test per attempt, each showing nothing was written.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setReadOnly } from "../../src/features/accounts";
import { Browser } from "../helpers/browser";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { publishSite } from "../helpers/sites";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t?.stop());

/** The token of the page's own forms (the sign-out form in the navigation carries a plain one). */
const formCsrf = (html: string) => [...html.matchAll(/name="csrf" value="([^"]+)"/g)].map((m) => m[1]!).find((v) => v.includes("~"))!;

async function signedIn(u: TestUser): Promise<Browser> {
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  return b;
}

describe("dashboard writes of a read-only account", () => {
  test("creating a bucket from the dashboard is refused with ACCOUNT_READ_ONLY and creates nothing", async () => {
    const u = await t.user();
    const b = await signedIn(u);
    const csrf = formCsrf((await b.get("/dashboard/buckets")).text);
    setReadOnly(t.pier.deps, u.accountId, true, "unpaid invoice");
    const res = await b.post("/dashboard/buckets", { csrf, title: "Written anyway" });
    expect(res.status).toBe(403);
    expect(res.text).toContain("read-only");
    const list = await t.api("GET", "/api/v1/buckets", { key: u.key });
    expect(list.status).toBe(200);
    expect(list.body.data.buckets.map((x: { title: string }) => x.title)).not.toContain("Written anyway");
  });

  test("adding a custom domain from the dashboard is refused and adds nothing", async () => {
    const u = await t.user({ plan: "pro" });
    const site = await publishSite(t, { user: u, files: [{ path: "index.html", bytes: "hi" }] });
    const bucket = site.pub.bucketId;
    const b = await signedIn(u);
    const csrf = formCsrf((await b.get(`/dashboard/buckets/${bucket}/domains`)).text);
    setReadOnly(t.pier.deps, u.accountId, true);
    const res = await b.post(`/dashboard/buckets/${bucket}/domains`, { csrf, hostname: "www.read-only-write.com" });
    expect(res.status).toBe(403);
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/custom_domains`, { key: u.key })).body.data.custom_domains).toEqual([]);
  });

  test("the user's own security still works: signing out everywhere is not an account write", async () => {
    const u = await t.user();
    const b = await signedIn(u);
    const csrf = formCsrf((await b.get("/dashboard/account/security")).text);
    setReadOnly(t.pier.deps, u.accountId, true);
    const res = await b.post("/dashboard/account/security/sign-out-everywhere", { csrf });
    expect([res.status, res.location]).toEqual([303, "/signin?signed_out=1"]);
  });
});
