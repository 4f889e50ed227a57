import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createBucket, snapshot } from "../../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
});
afterAll(() => t.stop());

describe("variables", () => {
  test("public values are returned, secrets only by name; secret values are encrypted at rest", async () => {
    const b = await createBucket(t, u);
    const empty = await t.api("GET", `/api/v1/buckets/${b.id}/variables`, { key: u.key });
    expect(empty.body.data).toEqual({ bucket_id: b.id, variables: {}, secrets: [] });

    const r = await t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, {
      key: u.key,
      body: { variables: { API_BASE: "https://api.example.com", _FLAG: "" }, secrets: { STRIPE_KEY: "sk_live_supersecret" } },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.variables).toEqual({ API_BASE: "https://api.example.com", _FLAG: "" });
    expect(r.body.data.secrets).toEqual([{ name: "STRIPE_KEY", updated_at: expect.any(String) }]);
    expect(r.text).not.toContain("sk_live_supersecret");

    const got = await t.api("GET", `/api/v1/buckets/${b.id}/variables`, { key: u.key });
    expect(got.body.data).toEqual(r.body.data);
    expect(got.text).not.toContain("sk_live_supersecret");

    const row = t.pier.deps.sqlite.query("select value, sealed from bucket_variables where bucket_id = ? and name = 'STRIPE_KEY'").get(b.id) as any;
    expect(row.value).toBeNull();
    expect(row.sealed).not.toContain("sk_live_supersecret");
    // Bound to bucket and name: it opens only with the right associated data.
    expect(t.pier.deps.secrets.open("bucket-variables", row.sealed, `${b.id}:STRIPE_KEY`)).toBe("sk_live_supersecret");
    expect(() => t.pier.deps.secrets.open("bucket-variables", row.sealed, `${b.id}:OTHER`)).toThrow();
  });

  test("PATCH replaces public variables and patches secrets (set, delete, keep)", async () => {
    const b = await createBucket(t, u);
    await t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, { key: u.key, body: { variables: { A: "1", B: "2" }, secrets: { S1: "one", S2: "two" } } });
    // Only secrets: public variables stay.
    const r1 = await t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, { key: u.key, body: { secrets: { S1: null, S3: "three" } } });
    expect(r1.body.data.variables).toEqual({ A: "1", B: "2" });
    expect(r1.body.data.secrets.map((s: any) => s.name)).toEqual(["S2", "S3"]);
    // Variables given: they replace the whole public set; secrets untouched.
    const r2 = await t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, { key: u.key, body: { variables: { C: "3" } } });
    expect(r2.body.data.variables).toEqual({ C: "3" });
    expect(r2.body.data.secrets.map((s: any) => s.name)).toEqual(["S2", "S3"]);
    // Empty object clears the public ones.
    const r3 = await t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, { key: u.key, body: { variables: {} } });
    expect(r3.body.data.variables).toEqual({});
    // A public variable may take a secret's name when the same patch deletes the secret.
    const r4 = await t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, { key: u.key, body: { variables: { S2: "now public" }, secrets: { S2: null } } });
    expect(r4.status).toBe(200);
    expect(r4.body.data).toMatchObject({ variables: { S2: "now public" }, secrets: [{ name: "S3" }] });
  });

  test("bad names, sizes and conflicts are 422 and change nothing", async () => {
    const b = await createBucket(t, u);
    await t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, { key: u.key, body: { variables: { KEEP: "me" }, secrets: { TOKEN: "t" } } });
    const before = snapshot(t);
    const tooMany = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`V${i}`, "x"]));
    const cases: unknown[] = [
      { variables: { lower: "x" } },
      { variables: { "1ABC": "x" } },
      { variables: { "A-B": "x" } },
      { variables: { ["A".repeat(65)]: "x" } },
      { variables: { PIER_URL: "x" } },
      { secrets: { PIER_TOKEN: "x" } },
      { variables: { A: "x".repeat(4097) } },
      { variables: { A: "é".repeat(2049) } }, // 4098 bytes
      { variables: { A: 1 } },
      { secrets: { S: 5 } },
      { variables: { TOKEN: "clash" } },
      { secrets: { KEEP: "clash" } },
      { variables: tooMany },
      { variables: { A: "nul\u0000" } },
    ];
    for (const body of cases) {
      const r = await t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, { key: u.key, body });
      expect([JSON.stringify(body).slice(0, 60), r.status, r.body.error.code]).toEqual([JSON.stringify(body).slice(0, 60), 422, "VALIDATION_FAILED"]);
    }
    expect(snapshot(t)).toBe(before);
  });
});

describe("tags", () => {
  test("lists the account's labels with counts, only over buckets the key can see", async () => {
    const v = await t.user();
    const a = await createBucket(t, v, { tag_paths: ["website", "clients/acme"] });
    const b = await createBucket(t, v, { tag_paths: ["website"] });
    await createBucket(t, v, { tag_paths: ["Archive me"] }).then((c) => t.api("POST", `/api/v1/buckets/${c.id}/archive`, { key: v.key }));
    await createBucket(t, u, { tag_paths: ["other-account"] });

    const r = await t.api("GET", "/api/v1/tags", { key: v.key });
    expect(r.status).toBe(200);
    expect(r.body.data.tags).toEqual([
      { path: "Archive me", bucket_count: 1, active_bucket_count: 0 },
      { path: "clients/acme", bucket_count: 1, active_bucket_count: 1 },
      { path: "website", bucket_count: 2, active_bucket_count: 2 },
    ]);

    const selected = t.key(v, { scope: "bucket_read", bucketAccess: "selected", bucketPermissions: { [b.id]: "read" } });
    const s = await t.api("GET", "/api/v1/tags", { key: selected });
    expect(s.body.data.tags).toEqual([{ path: "website", bucket_count: 1, active_bucket_count: 1 }]);
    void a;
  });

  test("GET /buckets?tag= lists only buckets carrying that exact label; a malformed label is 422", async () => {
    const v = await t.user();
    const a = await createBucket(t, v, { tag_paths: ["website", "clients/acme"] });
    const b = await createBucket(t, v, { tag_paths: ["website"] });
    await createBucket(t, v, { tag_paths: ["websites"] });
    const ids = async (q: string, key = v.key) => (await t.api("GET", `/api/v1/buckets?${q}`, { key })).body.data.buckets.map((x: { id: string }) => x.id);
    // Both made in the same millisecond can list in either order (newest first, then by id).
    expect((await ids("tag=website")).sort()).toEqual([a.id, b.id].sort());
    expect(await ids("tag=clients%2Facme")).toEqual([a.id]);
    // Exact labels, not prefixes or patterns.
    expect(await ids("tag=web")).toEqual([]);
    expect(await ids("tag=website&archived=true")).toEqual([]);
    // A key limited to selected buckets sees only those among them.
    expect(await ids("tag=website", t.key(v, { scope: "bucket_read", bucketAccess: "selected", bucketPermissions: { [a.id]: "read" } }))).toEqual([a.id]);
    const bad = await t.api("GET", "/api/v1/buckets?tag=%25", { key: v.key });
    expect(bad.status).toBe(422);
  });
});
