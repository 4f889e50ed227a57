import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import pkg from "../../../package.json";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { scenarios } from "../../helpers/scenario";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
});
afterAll(() => t.stop());

describe("status", () => {
  scenarios({ pier: () => t, credentials: () => ({ user: u.key, notAKey: "pier_notarealkey" }) }, [
    {
      name: "GET /api/v1/status answers without a key, with versions and headers",
      method: "GET",
      url: "/api/v1/status",
      status: 200,
      expect: (r) => {
        expect(r.body.data.server_version).toBe(pkg.version);
        expect(r.body.data.client_version).toBe(pkg.version);
        expect(r.body.data.publishing.free_plan_available).toBe(true);
        expect(r.body.data.account).toBeNull();
        expect(r.headers.get("x-pier-client-version")).toBe(pkg.version);
        expect(r.headers.get("x-request-id")).toMatch(/^req_[a-z0-9]{20}$/);
      },
    },
    {
      name: "with a key, status reports the account state",
      method: "GET",
      url: "/api/v1/agent_auth/status",
      as: "user",
      status: 200,
      expect: (r) => expect(r.body.data.account).toMatchObject({ id: u.accountId, state: "active", read_only: false, permission_scope: "bucket_admin" }),
    },
    {
      name: "agent_auth/status without a key is 401 in the error envelope",
      method: "GET",
      url: "/api/v1/agent_auth/status",
      status: 401,
      code: "UNAUTHORIZED",
      expect: (r) => expect(r.body.error.docs_url).toBe(`${t.pier.deps.urls.baseUrl}/docs/errors#UNAUTHORIZED`),
    },
    { name: "an unknown route is a 404 envelope", method: "GET", url: "/api/v1/nope", status: 404, code: "NOT_FOUND" },
    { name: "a bad key is 401", method: "GET", url: "/api/v1/buckets", as: "notAKey", status: 401, code: "UNAUTHORIZED" },
  ]);

  test("/docs serves the API reference offline and /docs/json lists the routes with their scope", async () => {
    const page = await fetch(`${t.url}/docs`);
    const html = await page.text();
    expect(html).toContain("/docs/assets/scalar.js");
    expect(html).not.toMatch(/https:\/\/(cdn|unpkg|fonts)\./);
    const js = await fetch(`${t.url}/docs/assets/scalar.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const script = await js.text();
    expect(script.length).toBeGreaterThan(100_000);
    // Scalar's own bundle as published (sites/docs/scalar.js, scripts/vendor-scalar.ts).
    expect(script.slice(0, 600)).toMatch(/@scalar\/api-reference \d+\.\d+\.\d+/);
    const spec = await (await fetch(`${t.url}/docs/json`)).json();
    expect(spec.paths["/api/v1/buckets"].get["x-pier-auth"]).toBe("bucket_read");
    const errors = await (await fetch(`${t.url}/docs/errors`)).text();
    expect(errors).toContain('id="BUCKET_LOCKED"');
  });

  test("an unknown path: a browser gets an HTML not-found page; curl, JSON clients and machine paths the envelope", async () => {
    const BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
    const page = await fetch(`${t.url}/nope`, { headers: { accept: BROWSER } });
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("vary")).toBe("accept");
    expect(page.headers.get("x-request-id")).toMatch(/^req_[a-z0-9]{20}$/);
    const html = await page.text();
    expect(html).toContain('<h1 id="h">Page not found</h1>');
    expect(html).toContain('<a href="/dashboard">Go to the dashboard</a>');

    const envelope = async (path: string, accept?: string) => {
      const r = await fetch(`${t.url}${path}`, { headers: accept ? { accept } : {} });
      expect([r.status, r.headers.get("content-type")]).toEqual([404, "application/json; charset=utf-8"]);
      return ((await r.json()) as { error: { code: string; message: string } }).error;
    };
    expect(await envelope("/nope", "*/*")).toMatchObject({ code: "NOT_FOUND", message: "No such route. See the API reference at /docs." });
    expect((await envelope("/nope", "application/json")).code).toBe("NOT_FOUND");
    expect((await envelope("/nope", "application/json, text/html;q=0.5")).code).toBe("NOT_FOUND");
    expect((await envelope("/nope")).code).toBe("NOT_FOUND");
    // Machine endpoints keep the envelope even for a browser-like Accept.
    for (const path of ["/api/v1/nope", "/mcp/nope", "/oauth/nope", "/.well-known/nope"]) expect((await envelope(path, BROWSER)).code).toBe("NOT_FOUND");
    // A form posted to nowhere is not a navigation to a page.
    const post = await fetch(`${t.url}/nope`, { method: "POST", headers: { accept: BROWSER } });
    expect([post.status, post.headers.get("content-type")]).toEqual([404, "application/json; charset=utf-8"]);
  });

  test("a path that exists with other methods: 405 METHOD_NOT_ALLOWED naming them in Allow; HEAD of a GET route is served", async () => {
    const u = await t.user();
    const refused = async (method: string, path: string) => {
      const r = await fetch(`${t.url}${path}`, { method, headers: { authorization: `Bearer ${u.key}` } });
      const body = (await r.json()) as { error: { code: string; message: string; details: { allow: string[] } } };
      return { status: r.status, allow: r.headers.get("allow"), error: body.error };
    };
    const put = await refused("PUT", "/api/v1/buckets");
    expect([put.status, put.error.code, put.allow]).toEqual([405, "METHOD_NOT_ALLOWED", "GET, HEAD, POST"]);
    expect(put.error.message).toBe("/api/v1/buckets does not take PUT: use GET, HEAD, POST.");
    const onOne = await refused("PUT", "/api/v1/buckets/bkt_00000000000000000000");
    expect(onOne.status).toBe(405);
    expect(onOne.allow!.split(", ")).toEqual(expect.arrayContaining(["DELETE", "GET", "HEAD", "PATCH"]));
    // No route at all is still 404; HEAD where GET is served is not refused.
    expect((await refused("PUT", "/api/v1/nothing-here")).status).toBe(404);
    expect((await fetch(`${t.url}/api/v1/status`, { method: "HEAD" })).status).toBe(200);
  });

  test("site hosts never reach the API", async () => {
    const res = await fetch(`${t.url}/api/v1/status`, { headers: { host: "someslug123.localhost" } });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("text/html");
  });
});
