// Bad input on every bucket endpoint: each case gets its documented 4xx code and changes
// nothing (the stored rows are compared before and after every request).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Scope } from "../../../src/core/context";
import { JSON_BODY_LIMIT } from "../../../src/http/body-limit";
import { createBucket, snapshot } from "../../helpers/buckets";
import { startTestPier, type ApiResult, type RequestOpts, type TestPier, type TestUser } from "../../helpers/pier";
import { scenarios } from "../../helpers/scenario";

interface Endpoint {
  method: string;
  path: (id: string) => string;
  /** Scope the route needs (a key one step lower must get 403). */
  scope: Scope;
  /** A valid body (so "unknown field" is the only thing wrong when one is added). */
  valid?: (b: any) => Record<string, unknown>;
  /** Bodies with wrong types or values: 422 VALIDATION_FAILED. */
  invalid?: unknown[];
  /** The route mutates a bucket that archiving makes read-only (409 BUCKET_ARCHIVED). */
  refusedWhenArchived?: boolean;
  /** Another credential's lock refuses it (423 BUCKET_LOCKED). */
  refusedWhenLocked?: boolean;
}

const byId =
  (suffix = "") =>
  (id: string) =>
    `/api/v1/buckets/${id}${suffix}`;
const endpoints: Endpoint[] = [
  { method: "GET", path: () => "/api/v1/buckets", scope: "bucket_read" },
  {
    method: "POST",
    path: () => "/api/v1/buckets",
    scope: "bucket_admin",
    valid: () => ({ bucket: { title: "New" } }),
    invalid: [
      {},
      { bucket: null },
      { bucket: { title: 5 } },
      { bucket: { title: "" } },
      // Before: trimmed after the length check, so "   " made a bucket titled "".
      { bucket: { title: "   " } },
      { bucket: { title: "a\u0000b" } },
      { bucket: { title: "two\nlines" } },
      { bucket: { title: "x".repeat(201) } },
      { bucket: { title: "t", tag_paths: "website" } },
      { bucket: { title: "t", tag_paths: ["../etc"] } },
      { bucket: { title: "t", metadata: [] } },
      [],
      "bucket",
      null,
      { bucket: { title: "t", color: "red" } },
    ],
  },
  {
    method: "POST",
    path: () => "/api/v1/buckets/bulk",
    scope: "bucket_admin",
    valid: (b) => ({ operation: "archive", bucket_ids: [b.id] }),
    invalid: [
      {},
      { operation: "explode", bucket_ids: ["bkt_x"] },
      { operation: "archive", bucket_ids: [] },
      { operation: "archive", bucket_ids: "bkt_x" },
      { operation: "archive", bucket_ids: Array.from({ length: 101 }, (_, i) => `bkt_${i}`) },
      { operation: "archive", bucket_ids: [5] },
      { operation: 1, bucket_ids: ["bkt_x"] },
    ],
  },
  { method: "GET", path: byId(), scope: "bucket_read" },
  {
    method: "PATCH",
    path: byId(),
    scope: "bucket_admin",
    valid: () => ({ bucket: { description: "d" } }),
    refusedWhenArchived: true,
    refusedWhenLocked: true,
    invalid: [
      {},
      { bucket: null },
      { bucket: { title: 1 } },
      { bucket: { title: "" } },
      { bucket: { title: " \t " } },
      { bucket: { title: "a\u0007b" } },
      { bucket: { metadata: "x" } },
      { bucket: { tag_paths: [1] } },
      { bucket: { description: "x".repeat(5001) } },
      { bucket: { archived: true } },
    ],
  },
  {
    method: "DELETE",
    path: byId(),
    scope: "bucket_admin",
    valid: (b) => ({ confirmation: b.delete.confirmation }),
    refusedWhenLocked: true,
    invalid: [{}, { confirmation: 5 }, { confirmation: null }, { confirmation: "nope" }, { confirmation: ["delete"] }],
  },
  { method: "POST", path: byId("/archive"), scope: "bucket_admin", valid: () => ({}), refusedWhenLocked: true, invalid: [[], "x", { archived: true }] },
  { method: "POST", path: byId("/unarchive"), scope: "bucket_admin", valid: () => ({}), refusedWhenLocked: true, invalid: [[], "x"] },
  {
    method: "POST",
    path: byId("/lock"),
    scope: "bucket_write",
    valid: () => ({ message: "m", duration_seconds: 60 }),
    refusedWhenArchived: true,
    refusedWhenLocked: true,
    invalid: [
      { duration_seconds: "60" },
      { duration_seconds: 0 },
      { duration_seconds: 3601 },
      { duration_seconds: 2.5 },
      { message: 5 },
      { message: "x".repeat(501) },
      [],
    ],
  },
  { method: "DELETE", path: byId("/lock"), scope: "bucket_write", valid: () => ({}), refusedWhenLocked: true, invalid: [[], { force: true }] },
  {
    method: "POST",
    path: byId("/visibility_change_lock"),
    scope: "bucket_admin",
    valid: () => ({ reason: "r" }),
    refusedWhenArchived: true,
    refusedWhenLocked: true,
    invalid: [{ reason: 5 }, { reason: "x".repeat(501) }, { locked: false }, []],
  },
  { method: "GET", path: byId("/variables"), scope: "bucket_read" },
  {
    method: "PATCH",
    path: byId("/variables"),
    scope: "bucket_admin",
    valid: () => ({ variables: { A: "1" } }),
    refusedWhenArchived: true,
    refusedWhenLocked: true,
    invalid: [{ variables: [] }, { variables: { A: 1 } }, { variables: { a: "1" } }, { secrets: "x" }, { secrets: { S: 1 } }, { variables: null }],
  },
  { method: "GET", path: () => "/api/v1/tags", scope: "bucket_read" },
];

const lower: Record<Scope, Scope | null> = { bucket_read: null, bucket_write: "bucket_read", bucket_admin: "bucket_write" };
const label = (e: Endpoint) => `${e.method} ${e.path(":id")}`;
const hasBody = (e: Endpoint) => e.valid !== undefined;
const takesBucket = (e: Endpoint) => e.path("X").includes("/X");

let t: TestPier;
let owner: TestUser;
let stranger: TestUser;
const keys = {} as Record<Scope, string>;
beforeAll(async () => {
  t = await startTestPier({ rateLimitPerMinute: 1_000_000 });
  owner = await t.user({ plan: "pro" });
  stranger = await t.user();
  for (const s of ["bucket_read", "bucket_write"] as Scope[]) keys[s] = t.key(owner, { scope: s });
  keys.bucket_admin = owner.key;
});
afterAll(() => t.stop());

/** Send the request and prove it was refused with `status`/`code` and nothing changed. */
async function refused(e: Endpoint, what: string, opts: RequestOpts & { path: string }, status: number, code: string): Promise<ApiResult> {
  const before = snapshot(t);
  const r = await t.api(e.method, opts.path, opts);
  expect([label(e), what, r.status, r.body?.error?.code]).toEqual([label(e), what, status, code]);
  expect(r.body.error.request_id).toBe(r.headers.get("x-request-id")!);
  expect(snapshot(t)).toBe(before);
  return r;
}

describe.each(endpoints.map((e) => [label(e), e] as const))("%s", (_name, e) => {
  test("missing or invalid credential: 401 UNAUTHORIZED", async () => {
    const b = await createBucket(t, owner);
    await refused(e, "no key", { path: e.path(b.id), body: e.valid?.(b) }, 401, "UNAUTHORIZED");
    await refused(e, "bad key", { path: e.path(b.id), body: e.valid?.(b), key: "pier_thisisnotarealkeyatall00000000000000" }, 401, "UNAUTHORIZED");
  });

  test("too low a scope: 403 FORBIDDEN", async () => {
    const low = lower[e.scope];
    if (!low) return;
    const b = await createBucket(t, owner);
    await refused(e, `scope ${low}`, { path: e.path(b.id), body: e.valid?.(b), key: keys[low] }, 403, "FORBIDDEN");
  });

  test("another account's bucket, an unknown id or an over-long id: 404 / 422", async () => {
    if (!takesBucket(e)) return;
    const b = await createBucket(t, owner);
    await refused(e, "foreign account", { path: e.path(b.id), body: e.valid?.(b), key: stranger.key }, 404, "BUCKET_NOT_FOUND");
    await refused(e, "unknown id", { path: e.path("bkt_00000000000000000000"), body: e.valid?.(b), key: owner.key }, 404, "BUCKET_NOT_FOUND");
    await refused(e, "long id", { path: e.path(`bkt_${"a".repeat(80)}`), body: e.valid?.(b), key: owner.key }, 422, "VALIDATION_FAILED");
  });

  test("malformed JSON: 400 BAD_REQUEST", async () => {
    if (!hasBody(e)) return;
    const b = await createBucket(t, owner);
    for (const raw of ["{", '{"bucket": ', "{'a': 1}", "nul", '{"a":1}}']) {
      await refused(e, `raw ${raw}`, { path: e.path(b.id), rawBody: raw, key: owner.key }, 400, "BAD_REQUEST");
    }
  });

  test("wrong types and values: 422 VALIDATION_FAILED", async () => {
    const b = await createBucket(t, owner);
    for (const body of e.invalid ?? []) {
      const code = e.method === "DELETE" && (body as any)?.confirmation === "nope" ? "CONFIRMATION_MISMATCH" : "VALIDATION_FAILED";
      await refused(e, JSON.stringify(body).slice(0, 50), { path: e.path(b.id), body, key: owner.key }, 422, code);
    }
  });

  test("unknown fields: 422 VALIDATION_FAILED", async () => {
    if (!hasBody(e)) return;
    const b = await createBucket(t, owner);
    const r = await refused(e, "unknown field", { path: e.path(b.id), body: { ...e.valid!(b), surprise: true }, key: owner.key }, 422, "VALIDATION_FAILED");
    expect(r.body.error.message).toContain("surprise");
  });

  test("oversized body: 413 PAYLOAD_TOO_LARGE (declared and streamed)", async () => {
    if (!hasBody(e)) return;
    const b = await createBucket(t, owner);
    const big = JSON.stringify({ ...e.valid!(b), pad: "x".repeat(JSON_BODY_LIMIT) });
    await refused(e, "declared length", { path: e.path(b.id), rawBody: big, key: owner.key }, 413, "PAYLOAD_TOO_LARGE");
    // Chunked, no Content-Length: counted while read.
    const before = snapshot(t);
    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < bytes.length; i += 64 * 1024) c.enqueue(bytes.slice(i, i + 64 * 1024));
        c.close();
      },
    });
    const res = await fetch(t.url + e.path(b.id), {
      method: e.method,
      body: stream,
      headers: { "content-type": "application/json", authorization: `Bearer ${owner.key}` },
    });
    expect([label(e), res.status, ((await res.json()) as any).error.code]).toEqual([label(e), 413, "PAYLOAD_TOO_LARGE"]);
    expect(snapshot(t)).toBe(before);
  });

  test("archived bucket: 409 BUCKET_ARCHIVED", async () => {
    if (!e.refusedWhenArchived) return;
    const b = await createBucket(t, owner);
    expect((await t.api("POST", `/api/v1/buckets/${b.id}/archive`, { key: owner.key })).status).toBe(200);
    await refused(e, "archived", { path: e.path(b.id), body: e.valid?.(b), key: owner.key }, 409, "BUCKET_ARCHIVED");
  });

  test("locked by another key: 423 BUCKET_LOCKED", async () => {
    if (!e.refusedWhenLocked) return;
    const b = await createBucket(t, owner);
    const agent = t.key(owner, { scope: "bucket_write" });
    expect((await t.api("POST", `/api/v1/buckets/${b.id}/lock`, { key: agent, body: { message: "busy" } })).status).toBe(200);
    await refused(e, "locked", { path: e.path(b.id), body: e.valid?.(b), key: owner.key }, 423, "BUCKET_LOCKED");
  });
});

describe("queries", () => {
  let b: any;
  beforeAll(async () => {
    b = await createBucket(t, owner);
  });
  scenarios({ pier: () => t, credentials: () => ({ owner: owner.key }), snapshot: () => snapshot(t) }, [
    {
      name: "list with a bad archived value is 422",
      method: "GET",
      url: "/api/v1/buckets?archived=maybe",
      as: "owner",
      status: 422,
      code: "VALIDATION_FAILED",
    },
    {
      name: "a malformed account_id is 422 on reads",
      method: "GET",
      url: () => `/api/v1/buckets/${b.id}?account_id=nope`,
      as: "owner",
      status: 422,
      code: "VALIDATION_FAILED",
    },
    {
      name: "a foreign account_id is 403 on writes, and nothing changes",
      method: "PATCH",
      url: () => `/api/v1/buckets/${b.id}`,
      as: "owner",
      body: () => ({ bucket: { title: "x" }, account_id: stranger.accountId }),
      status: 403,
      code: "FORBIDDEN",
    },
  ]);
});

describe("validation messages", () => {
  test("a body that is not a JSON object says to send one; a missing wrapper is named once", async () => {
    const plain = await t.api("POST", "/api/v1/buckets", { key: owner.key, rawBody: '"just text"', headers: { "content-type": "text/plain" } });
    expect([plain.status, plain.body.error.code]).toEqual([422, "VALIDATION_FAILED"]);
    expect(plain.body.error.message).toContain("Send a JSON object with Content-Type: application/json");
    const unwrapped = await t.api("POST", "/api/v1/buckets", { key: owner.key, body: { title: "no wrapper" } });
    expect(unwrapped.status).toBe(422);
    const message: string = unwrapped.body.error.message;
    expect(message.match(/\/bucket /g)?.length).toBe(1);
    expect(message).toContain("/bucket Property 'bucket' is missing");
  });
});
