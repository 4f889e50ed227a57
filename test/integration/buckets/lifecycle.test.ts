import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBucket, snapshot } from "../../helpers/buckets";
import { sessionCookie } from "../../helpers/oauth";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
});
afterAll(() => t.stop());

describe("archive and unarchive", () => {
  test("archive moves a bucket to the archived list; unarchive brings it back", async () => {
    const b = await createBucket(t, u, { title: "Old project" });
    expect(b.archive).toEqual({ allowed: true });
    expect(b.unarchive).toEqual({ allowed: false });

    const a = await t.api("POST", `/api/v1/buckets/${b.id}/archive`, { key: u.key });
    expect(a.status).toBe(200);
    expect(a.body.data.changed).toBe(true);
    expect(a.body.data.bucket).toMatchObject({ id: b.id, archived: true, archive: { allowed: false }, unarchive: { allowed: true } });
    expect(a.body.data.bucket.archived_at).toBeString();

    const active = await t.api("GET", "/api/v1/buckets", { key: u.key });
    expect(active.body.data.buckets.map((x: any) => x.id)).not.toContain(b.id);
    const archived = await t.api("GET", "/api/v1/buckets?archived=true", { key: u.key });
    expect(archived.body.data.buckets.map((x: any) => x.id)).toContain(b.id);

    // Idempotent: archiving again is a no-op, not an error.
    const again = await t.api("POST", `/api/v1/buckets/${b.id}/archive`, { key: u.key });
    expect(again.status).toBe(200);
    expect(again.body.data.changed).toBe(false);

    const un = await t.api("POST", `/api/v1/buckets/${b.id}/unarchive`, { key: u.key });
    expect(un.status).toBe(200);
    expect(un.body.data).toMatchObject({ changed: true, bucket: { archived: false, archived_at: null } });
    const unAgain = await t.api("POST", `/api/v1/buckets/${b.id}/unarchive`, { key: u.key });
    expect(unAgain.body.data.changed).toBe(false);
  });

  test("an archived bucket is read-only: every mutation answers 409 BUCKET_ARCHIVED, reads work", async () => {
    const b = await createBucket(t, u, { title: "Frozen", tag_paths: ["website"] });
    await t.api("POST", `/api/v1/buckets/${b.id}/archive`, { key: u.key });
    const before = snapshot(t);
    const mutations: [string, string, unknown][] = [
      ["PATCH", `/api/v1/buckets/${b.id}`, { bucket: { title: "Changed" } }],
      ["PATCH", `/api/v1/buckets/${b.id}/variables`, { variables: { A: "1" } }],
      ["POST", `/api/v1/buckets/${b.id}/lock`, { message: "mine" }],
      ["POST", `/api/v1/buckets/${b.id}/visibility_change_lock`, {}],
    ];
    for (const [method, path, body] of mutations) {
      const r = await t.api(method, path, { key: u.key, body });
      expect([method, path, r.status, r.body.error.code]).toEqual([method, path, 409, "BUCKET_ARCHIVED"]);
      expect(r.body.error.docs_url).toEndWith("/docs/errors#BUCKET_ARCHIVED");
    }
    expect(snapshot(t)).toBe(before);
    for (const path of [`/api/v1/buckets/${b.id}`, `/api/v1/buckets/${b.id}/variables`, "/api/v1/tags"]) {
      expect((await t.api("GET", path, { key: u.key })).status).toBe(200);
    }
    // Releasing a lock and permanent delete still work on archived buckets.
    expect((await t.api("DELETE", `/api/v1/buckets/${b.id}/lock`, { key: u.key })).status).toBe(200);
    const del = await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation: b.delete.confirmation } });
    expect(del.status).toBe(200);
  });
});

describe("bulk", () => {
  test("archives and unarchives several buckets with a result per bucket", async () => {
    const [a, b] = [await createBucket(t, u), await createBucket(t, u)];
    const r = await t.api("POST", "/api/v1/buckets/bulk", {
      key: u.key,
      body: { operation: "archive", bucket_ids: [a.id, b.id, a.id, "bkt_doesnotexist0000000"] },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.operation).toBe("archive");
    expect(r.body.data.succeeded).toBe(2);
    expect(r.body.data.failed).toBe(1);
    expect(r.body.data.results).toEqual([
      { id: a.id, ok: true, archived: true, changed: true },
      { id: b.id, ok: true, archived: true, changed: true },
      { id: "bkt_doesnotexist0000000", ok: false, error: { code: "BUCKET_NOT_FOUND", message: expect.any(String) } },
    ]);
    expect((await t.api("GET", `/api/v1/buckets/${a.id}`, { key: u.key })).body.data.bucket.archived).toBe(true);

    const back = await t.api("POST", "/api/v1/buckets/bulk", { key: u.key, body: { operation: "unarchive", bucket_ids: [a.id, b.id] } });
    expect(back.body.data.results.map((x: any) => [x.ok, x.archived])).toEqual([
      [true, false],
      [true, false],
    ]);
  });

  test("delete is refused as a whole with BULK_DELETE_NOT_SUPPORTED and nothing changes", async () => {
    const a = await createBucket(t, u);
    const before = snapshot(t);
    const r = await t.api("POST", "/api/v1/buckets/bulk", { key: u.key, body: { operation: "delete", bucket_ids: [a.id] } });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("BULK_DELETE_NOT_SUPPORTED");
    expect(r.body.error.details.supported_operations).toEqual(["archive", "unarchive"]);
    expect(snapshot(t)).toBe(before);
  });

  test("a bucket locked by another key fails alone; the rest are archived", async () => {
    const [a, b] = [await createBucket(t, u), await createBucket(t, u)];
    const other = t.key(u, { scope: "bucket_write" });
    expect((await t.api("POST", `/api/v1/buckets/${a.id}/lock`, { key: other, body: { message: "deploying" } })).status).toBe(200);
    const r = await t.api("POST", "/api/v1/buckets/bulk", { key: u.key, body: { operation: "archive", bucket_ids: [a.id, b.id] } });
    expect(r.body.data.results[0]).toMatchObject({ id: a.id, ok: false, error: { code: "BUCKET_LOCKED" } });
    expect(r.body.data.results[1]).toMatchObject({ id: b.id, ok: true, archived: true });
  });
});

describe("create", () => {
  test("needs account-wide bucket_admin and room in the plan: 403 FORBIDDEN otherwise, nothing created", async () => {
    const plans = join(tmpdir(), `pier-plans-${Date.now()}.json`);
    writeFileSync(plans, JSON.stringify([{ id: "tiny", entitlements: { max_buckets: 2 } }]));
    const small = await startTestPier({ plansFile: plans });
    try {
      const v = await small.user({ plan: "tiny" });
      await createBucket(small, v);
      const first = await createBucket(small, v);
      const before = snapshot(small);
      const full = await small.api("POST", "/api/v1/buckets", { key: v.key, body: { bucket: { title: "one too many" } } });
      // The instance's first user: the way out is the owner plan, by the operator's command.
      expect([full.status, full.body.error.code, full.body.error.details]).toEqual([
        403,
        "FORBIDDEN",
        {
          reason: "plan_limit",
          entitlement: "max_buckets",
          max_buckets: 2,
          suggested_plan: "owner",
          ask_operator: `Ask the operator of this Pier instance to move account ${v.accountId} to the owner plan.`,
          operator_hint: `pier admin account plan --account ${v.accountId} --plan owner`,
        },
      ]);
      const selected = small.key(v, { scope: "bucket_admin", bucketAccess: "selected", bucketPermissions: { [first.id]: "admin" } });
      const sel = await small.api("POST", "/api/v1/buckets", { key: selected, body: { bucket: { title: "not account-wide" } } });
      expect([sel.status, sel.body.error.code]).toEqual([403, "FORBIDDEN"]);
      expect(snapshot(small)).toBe(before);
    } finally {
      await small.stop();
    }
  });
});

describe("dashboard_url", () => {
  test("every bucket response carries it, and it opens the dashboard for a signed-in user", async () => {
    const created = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "Linked" } } });
    const id = created.body.data.bucket.id;
    const url = `${t.pier.deps.urls.baseUrl}/dashboard/buckets/${id}`;
    expect(created.body.data.bucket.dashboard_url).toBe(url);
    expect((await t.api("GET", `/api/v1/buckets/${id}`, { key: u.key })).body.data.bucket.dashboard_url).toBe(url);
    expect((await t.api("GET", "/api/v1/buckets", { key: u.key })).body.data.buckets.find((b: any) => b.id === id).dashboard_url).toBe(url);
    expect((await t.api("PATCH", `/api/v1/buckets/${id}`, { key: u.key, body: { bucket: { title: "Linked 2" } } })).body.data.bucket.dashboard_url).toBe(url);
    expect((await t.api("POST", `/api/v1/buckets/${id}/archive`, { key: u.key })).body.data.bucket.dashboard_url).toBe(url);

    const path = new URL(url).pathname;
    const anonymous = await fetch(t.url + path, { redirect: "manual" });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe(`/signin?next=${encodeURIComponent(path)}`);
    const signedIn = await fetch(t.url + path, { redirect: "manual", headers: { cookie: sessionCookie(t, u) } });
    expect(signedIn.status).toBe(200);
  });
});
