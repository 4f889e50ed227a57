// Account access: API keys from the dashboard page and over REST, plan entitlement for named
// keys, revocation, the dashboard visit record, and the read-only account state.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts, apiKeys } from "../../../src/db/schema";
import { setPlan, setReadOnly } from "../../../src/features/accounts/service";
import { Browser } from "../../helpers/browser";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t.stop());

async function browserFor(u: TestUser): Promise<Browser> {
  const b = new Browser(t.url);
  const res = await b.submit("/signin", "/signin", { email: u.email, password: u.password });
  expect(res.status).toBe(303);
  return b;
}

const keyCount = (accountId: string) => t.pier.deps.db.select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).all().length;

describe("dashboard", () => {
  test("a signed-in page load records the dashboard visit; API traffic does not", async () => {
    const u = await t.user();
    const visit = () => t.pier.deps.db.select().from(accounts).where(eq(accounts.id, u.accountId)).get()!.lastDashboardVisitAt;
    await t.api("GET", "/api/v1/buckets", { key: u.key });
    expect(visit()).toBeNull();
    const b = await browserFor(u);
    const page = await b.get("/dashboard");
    expect(page.status).toBe(200);
    expect(page.text).toContain(u.email);
    expect(page.text).toContain(u.accountId);
    expect(page.text).toContain("Free");
    expect(Math.abs(Date.parse(visit()!) - t.clock.now().getTime())).toBeLessThan(5000);
    t.clock.advance(3600_000);
    await b.get("/dashboard/anything");
    expect(Date.parse(visit()!)).toBeGreaterThan(Date.now() + 3000_000);
    t.clock.advance(3600_000);
    await b.get("/dashboard/account/keys");
    expect(Date.parse(visit()!)).toBeGreaterThan(Date.now() + 6600_000);
    const last = visit();
    t.clock.advance(60_000);
    await t.api("GET", "/api/v1/buckets", { key: u.key });
    await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "api traffic" } } });
    expect(visit()).toBe(last);
  });
});

describe("account access page", () => {
  test("Free: the page lists keys, and creating a named key is refused with an upgrade message", async () => {
    const u = await t.user();
    const b = await browserFor(u);
    // The old address leads to the dashboard's API keys page.
    expect((await b.get("/account/access")).location).toBe("/dashboard/account/keys");
    const page = await b.get("/dashboard/account/keys");
    expect(page.status).toBe(200);
    // The page says what to ask the operator and which command lifts it (no shop to go to).
    expect(page.text).toContain("Named API keys are not part of the Free plan this account is on.");
    expect(page.text).toContain(`pier admin account plan --account ${u.accountId} --plan pro`);
    expect(page.text).toContain("owner");
    const before = keyCount(u.accountId);
    const res = await b.submit("/dashboard/account/keys", "/dashboard/account/keys", { label: "ci", scope: "bucket_write" });
    expect(res.status).toBe(403);
    expect(res.text).toContain(`Ask the operator of this Pier instance to move account ${u.accountId} to the pro plan.`);
    expect(keyCount(u.accountId)).toBe(before);
  });

  test("Pro: create shows the key once, it works with its scope, revoke makes it 401", async () => {
    const u = await t.user({ plan: "pro" });
    const b = await browserFor(u);
    const created = await b.submit("/dashboard/account/keys", "/dashboard/account/keys", { label: "deploy bot", scope: "bucket_read" });
    expect(created.status).toBe(303);
    const res = await b.get(created.location!);
    const key = /(pier_[a-z0-9]{40})/.exec(res.text)![1]!;
    expect(res.text).toContain("shown only once");
    // Reloading the page the create led to shows no key and makes no second one.
    const reloaded = await b.get(created.location!);
    expect(reloaded.text).not.toContain(key);
    expect(t.pier.deps.db.select().from(apiKeys).where(eq(apiKeys.label, "deploy bot")).all().length).toBe(1);
    expect((await t.api("GET", "/api/v1/buckets", { key })).status).toBe(200);
    const write = await t.api("POST", "/api/v1/buckets", { key, body: { bucket: { title: "nope" } } });
    expect(write.status).toBe(403);

    const listed = await b.get("/dashboard/account/keys");
    expect(listed.text).toContain("deploy bot");
    expect(listed.text).not.toContain(key); // never shown again
    const row = t.pier.deps.db.select().from(apiKeys).where(eq(apiKeys.label, "deploy bot")).get()!;
    expect(row.tokenHash).not.toContain(key);
    const revoke = await b.submit("/dashboard/account/keys", `/dashboard/account/keys/${row.id}/revoke`, {});
    expect(revoke.status).toBe(303);
    expect((await b.get(revoke.location!)).text).toContain("Key revoked");
    const after = await t.api("GET", "/api/v1/buckets", { key });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe("UNAUTHORIZED");
  });

  test("key forms need the session's CSRF token, and a session of another account cannot revoke a key", async () => {
    const u = await t.user({ plan: "pro" });
    const other = await t.user({ plan: "pro" });
    const b = await browserFor(u);
    const before = keyCount(u.accountId);
    const forged = await b.post("/dashboard/account/keys", { csrf: "x", label: "x", scope: "bucket_read" });
    expect(forged.status).toBe(403);
    expect(keyCount(u.accountId)).toBe(before);
    const otherKey = t.pier.deps.db.select().from(apiKeys).where(eq(apiKeys.accountId, other.accountId)).get()!;
    const cross = await b.submit("/dashboard/account/keys", `/dashboard/account/keys/${otherKey.id}/revoke`, {});
    expect(cross.status).toBe(404);
    expect((await t.api("GET", "/api/v1/buckets", { key: other.key })).status).toBe(200);
  });

  test("signed-out visitors are sent to sign in", async () => {
    const res = await new Browser(t.url).get("/dashboard/account/keys");
    expect(res.status).toBe(303);
    expect(res.location).toBe("/signin?next=%2Fdashboard%2Faccount%2Fkeys");
    const post = await new Browser(t.url).post("/dashboard/account/keys", { label: "x" });
    expect(post.status).toBe(303);
  });
});

describe("API keys over REST", () => {
  test("Free: POST /api/v1/api_keys is 403 FORBIDDEN with reason plan_limit naming the entitlement", async () => {
    const u = await t.user();
    const before = keyCount(u.accountId);
    const r = await t.api("POST", "/api/v1/api_keys", { key: u.key, body: { label: "ci" } });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("FORBIDDEN");
    expect(r.body.error.details).toEqual({
      reason: "plan_limit",
      entitlement: "named_api_keys",
      plan: "free",
      suggested_plan: "pro",
      ask_operator: `Ask the operator of this Pier instance to move account ${u.accountId} to the pro plan.`,
      operator_hint: `pier admin account plan --account ${u.accountId} --plan pro`,
    });
    expect(r.body.error.message).toContain(`(Operator: pier admin account plan --account ${u.accountId} --plan pro.)`);
    expect(keyCount(u.accountId)).toBe(before);
  });

  test("Pro owner key: create, list (no secrets), revoke -> 401", async () => {
    const u = await t.user({ plan: "pro" });
    const created = await t.api("POST", "/api/v1/api_keys", { key: u.key, body: { label: "ci", permission_scope: "bucket_write" } });
    expect(created.status).toBe(201);
    const key = created.body.data.api_key as string;
    expect(key).toMatch(/^pier_[a-z0-9]{40}$/);
    expect(created.body.data.key).toMatchObject({ label: "ci", kind: "named", permission_scope: "bucket_write", bucket_access: "all" });
    const list = await t.api("GET", "/api/v1/api_keys", { key: u.key });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(key);
    expect(list.body.data.api_keys.map((k: { label: string }) => k.label)).toContain("ci");
    expect((await t.api("GET", "/api/v1/buckets", { key })).status).toBe(200);
    const del = await t.api("DELETE", `/api/v1/api_keys/${created.body.data.key.id}`, { key: u.key });
    expect(del.status).toBe(200);
    expect((await t.api("GET", "/api/v1/buckets", { key })).status).toBe(401);
    const gone = await t.api("DELETE", `/api/v1/api_keys/${created.body.data.key.id}`, { key: u.key });
    expect([gone.status, gone.body.error.code]).toEqual([404, "API_KEY_NOT_FOUND"]);
  });

  test("keys that are not the owner's own key cannot manage keys; bad bodies change nothing", async () => {
    const u = await t.user({ plan: "pro" });
    const writeKey = t.key(u, { scope: "bucket_write" });
    const selected = t.key(u, { scope: "bucket_admin", bucketAccess: "selected", bucketPermissions: {} });
    const before = keyCount(u.accountId);
    const r = await t.api("POST", "/api/v1/api_keys", { key: writeKey, body: { label: "x" } });
    expect(r.status).toBe(403);
    expect((await t.api("POST", "/api/v1/api_keys", { key: selected, body: { label: "x" } })).status).toBe(403);
    expect((await t.api("GET", "/api/v1/api_keys", { key: selected })).status).toBe(403);
    const extra = await t.api("POST", "/api/v1/api_keys", { key: u.key, body: { label: "x", secret: true } });
    expect(extra.status).toBe(422);
    const badScope = await t.api("POST", "/api/v1/api_keys", { key: u.key, body: { label: "x", permission_scope: "root" } });
    expect(badScope.status).toBe(422);
    const foreign = await t.api("POST", "/api/v1/api_keys", {
      key: u.key,
      body: { label: "x", bucket_access: "selected", bucket_permissions: { bkt_doesnotexist: "read" } },
    });
    expect(foreign.status).toBe(404);
    expect((await t.api("POST", "/api/v1/api_keys", { key: u.key, rawBody: "{not json" })).status).toBe(400);
    expect((await t.api("POST", "/api/v1/api_keys", { body: { label: "x" } })).status).toBe(401);
    expect(keyCount(u.accountId)).toBe(before);
  });

  test("a signed-in browser may call the REST API, but mutations need the X-Pier-CSRF header", async () => {
    const u = await t.user({ plan: "pro" });
    const b = await browserFor(u);
    // The browser signed in with its password just now: it is in sudo mode (pier_sudo).
    const cookie = `pier_session=${b.cookies.get("pier_session")}; pier_sudo=${b.cookies.get("pier_sudo")}`;
    const list = await t.api("GET", "/api/v1/api_keys", { headers: { cookie } });
    expect(list.status).toBe(200);
    const noCsrf = await t.api("POST", "/api/v1/api_keys", { headers: { cookie }, body: { label: "x" } });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error.code).toBe("CSRF_FAILED");
    const csrf = /name="csrf" value="([^"]+)"/.exec((await b.get("/dashboard")).text)![1]!;
    const ok = await t.api("POST", "/api/v1/api_keys", { headers: { cookie, "x-pier-csrf": csrf }, body: { label: "from browser" } });
    expect(ok.status).toBe(201);
  });
});

describe("read-only account", () => {
  test("mutations get 403 ACCOUNT_READ_ONLY with read_only: true; reads still work", async () => {
    const u = await t.user({ plan: "pro" });
    expect((await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "before" } } })).status).toBe(201);
    setReadOnly(t.pier.deps, u.accountId, true, "billing review");
    const r = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "during" } } });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("ACCOUNT_READ_ONLY");
    expect(r.body.error.details.read_only).toBe(true);
    expect(r.body.error.message).toContain("billing review");
    const list = await t.api("GET", "/api/v1/buckets", { key: u.key });
    expect(list.status).toBe(200);
    expect(list.body.data.buckets.map((x: { title: string }) => x.title)).toEqual(["before"]);
    expect((await t.api("POST", "/api/v1/api_keys", { key: u.key, body: { label: "x" } })).body.error.code).toBe("ACCOUNT_READ_ONLY");
    const b = await browserFor(u);
    expect((await b.get("/dashboard")).text).toContain("read-only (billing review)");
    const before = keyCount(u.accountId);
    const pageCreate = await b.submit("/dashboard/account/keys", "/dashboard/account/keys", { label: "x", scope: "bucket_read" });
    expect(pageCreate.status).toBe(403);
    expect(pageCreate.text).toContain("read-only");
    expect(keyCount(u.accountId)).toBe(before);
    setReadOnly(t.pier.deps, u.accountId, false);
    expect((await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "after" } } })).status).toBe(201);
  });

  test("a plan change takes effect at once for named keys", async () => {
    const u = await t.user();
    expect((await t.api("POST", "/api/v1/api_keys", { key: u.key, body: { label: "x" } })).status).toBe(403);
    setPlan(t.pier.deps, u.accountId, "pro");
    expect((await t.api("POST", "/api/v1/api_keys", { key: u.key, body: { label: "x" } })).status).toBe(201);
  });
});
