import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import pkg from "../../../package.json";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t.stop());

describe("status", () => {
  test("GET /api/v1/status answers without a key, with versions and headers", async () => {
    const r = await t.api("GET", "/api/v1/status");
    expect(r.status).toBe(200);
    expect(r.body.data.server_version).toBe(pkg.version);
    expect(r.body.data.client_version).toBe(pkg.version);
    expect(r.body.data.publishing.free_plan_available).toBe(true);
    expect(r.body.data.account).toBeNull();
    expect(r.headers.get("x-pier-client-version")).toBe(pkg.version);
    expect(r.headers.get("x-request-id")).toMatch(/^req_[a-z0-9]{20}$/);
  });

  test("with a key, status reports the account state", async () => {
    const u = await t.user();
    const r = await t.api("GET", "/api/v1/agent_auth/status", { key: u.key });
    expect(r.status).toBe(200);
    expect(r.body.data.account).toMatchObject({ id: u.accountId, state: "active", read_only: false, permission_scope: "bucket_admin" });
  });

  test("agent_auth/status without a key is 401 in the error envelope", async () => {
    const r = await t.api("GET", "/api/v1/agent_auth/status");
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("UNAUTHORIZED");
    expect(r.body.error.request_id).toBe(r.headers.get("x-request-id"));
    expect(r.body.error.docs_url).toBe(`${t.pier.deps.urls.baseUrl}/docs/errors#UNAUTHORIZED`);
  });

  test("an unknown route is a 404 envelope, and a bad key is 401", async () => {
    const r = await t.api("GET", "/api/v1/nope");
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe("NOT_FOUND");
    const bad = await t.api("GET", "/api/v1/buckets", { key: "pier_notarealkey" });
    expect(bad.status).toBe(401);
  });

  test("/docs serves the API reference offline and /docs/json lists the routes with their scope", async () => {
    const page = await fetch(`${t.url}/docs`);
    const html = await page.text();
    expect(html).toContain("/docs/assets/scalar.js");
    expect(html).not.toMatch(/https:\/\/(cdn|unpkg|fonts)\./);
    const js = await fetch(`${t.url}/docs/assets/scalar.js`);
    expect(js.status).toBe(200);
    expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    const spec = await (await fetch(`${t.url}/docs/json`)).json();
    expect(spec.paths["/api/v1/buckets"].get["x-pier-auth"]).toBe("bucket_read");
    const errors = await (await fetch(`${t.url}/docs/errors`)).text();
    expect(errors).toContain('id="BUCKET_LOCKED"');
  });

  test("site hosts never reach the API", async () => {
    const res = await fetch(`${t.url}/api/v1/status`, { headers: { host: "someslug123.localhost" } });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("text/html");
  });
});
