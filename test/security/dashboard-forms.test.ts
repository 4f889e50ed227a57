// Attacks on the dashboard's forms: a cross-site form post (no or another session's CSRF token),
// markup in a bucket title, and another account's bucket ids. Each is reproduced over HTTP
// and shown to change nothing and reveal nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DASHBOARD_CSP } from "../../src/features/dashboard/csp";
import { Browser, csrfOf } from "../helpers/browser";
import { createBucket } from "../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(async () => {
  await t?.stop();
});

async function signedIn(u: TestUser): Promise<Browser> {
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  return b;
}

const archived = async (u: TestUser, id: string) => (await t.api("GET", `/api/v1/buckets/${id}`, { key: u.key })).body.data.bucket.archived;

describe("dashboard forms", () => {
  test("a cross-site post without the session's CSRF token archives nothing", async () => {
    const u = await t.user();
    const bucket = await createBucket(t, u, { title: "Target" });
    const b = await signedIn(u);
    for (const csrf of ["", "forged-token-forged-token-forged"]) {
      const res = await b.post(`/dashboard/buckets/${bucket.id}/archive`, { csrf });
      expect(res.status).toBe(403);
      expect(res.text).toContain("This form expired or was sent from another site");
    }
    // Another signed-in user's valid token is not this session's token either.
    const other = await signedIn(await t.user());
    const foreignToken = csrfOf((await other.get("/dashboard/buckets")).text);
    expect((await b.post(`/dashboard/buckets/${bucket.id}/archive`, { csrf: foreignToken })).status).toBe(403);
    expect(await archived(u, bucket.id)).toBe(false);
  });

  test("a bucket title with markup is shown as text on every page, under the strict CSP", async () => {
    const u = await t.user();
    const bucket = await createBucket(t, u, { title: `<img src=x onerror=alert(1)>"'` });
    const b = await signedIn(u);
    for (const path of ["/dashboard/buckets", `/dashboard/buckets/${bucket.id}`]) {
      const page = await b.get(path);
      expect(page.status).toBe(200);
      expect(page.text).not.toContain("<img src=x");
      expect(page.text).toContain("&#60;img src&#61;x onerror&#61;alert(1)&#62;");
      expect(page.headers.get("content-security-policy")).toBe(DASHBOARD_CSP);
      expect(page.headers.get("x-frame-options")).toBe("DENY");
    }
  });

  test("another account's bucket id: same 404 as an unknown id, and its forms do nothing", async () => {
    const owner = await t.user();
    const theirs = await createBucket(t, owner, { title: "Secret project" });
    const b = await signedIn(await t.user());
    const page = await b.get(`/dashboard/buckets/${theirs.id}`);
    const unknown = await b.get("/dashboard/buckets/bkt_unknownunknown");
    expect(page.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(page.text).not.toContain("Secret project");
    const csrf = csrfOf(page.text);
    for (const [action, form] of [
      ["archive", {}],
      ["inbound", { enabled: "on" }],
      ["delete", { confirmation: `delete ${theirs.id}` }],
    ] as const) {
      const res = await b.post(`/dashboard/buckets/${theirs.id}/${action}`, { csrf, ...form });
      expect(res.status).toBe(404);
    }
    const after = (await t.api("GET", `/api/v1/buckets/${theirs.id}`, { key: owner.key })).body.data.bucket;
    expect(after.archived).toBe(false);
    expect(after.inbound_email.enabled).toBe(false);
  });

  test("signed out, every dashboard page sends to sign-in and comes back", async () => {
    const anon = new Browser(t.url);
    const res = await anon.get("/dashboard/buckets?q=x");
    expect(res.status).toBe(303);
    expect(res.location).toBe("/signin?next=%2Fdashboard%2Fbuckets%3Fq%3Dx");
    expect((await anon.post("/dashboard/buckets", { title: "x" })).location).toBe("/signin");
  });
});
