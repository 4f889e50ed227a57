// A bucket in a list reads exactly as its own GET, in every state a list shows: the per-row
// lookups behind both are prepared once per database (src/db/prepared.ts), with the built query
// kept for callers inside a transaction, and the two must never drift apart.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier({ mailDomain: "in.pier.test" });
  u = await t.user({ plan: "pro" });
});
afterAll(() => t.stop());

test("every bucket of a list, in every state, is presented as GET /buckets/:id presents it", async () => {
  await createBucket(t, u, { title: "plain" });
  await createBucket(t, u, { title: "with an address", inbound_email: { enabled: true } });
  const locked = await createBucket(t, u, { title: "locked" });
  expect((await t.api("POST", `/api/v1/buckets/${locked.id}/lock`, { key: u.key, body: { message: "busy", duration_seconds: 120 } })).status).toBe(200);
  const archived = await createBucket(t, u, { title: "archived" });
  expect((await t.api("POST", `/api/v1/buckets/${archived.id}/archive`, { key: u.key })).status).toBe(200);
  await publishSite(t, { user: u, title: "published", files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });

  for (const query of ["", "?archived=true"]) {
    const list = await t.api("GET", `/api/v1/buckets${query}`, { key: u.key });
    expect(list.status).toBe(200);
    const buckets = list.body.data.buckets as { id: string }[];
    expect(buckets.length).toBeGreaterThan(0);
    for (const listed of buckets) {
      const own = await t.api("GET", `/api/v1/buckets/${listed.id}`, { key: u.key });
      expect(listed).toEqual(own.body.data.bucket);
    }
  }
  const all = (await t.api("GET", "/api/v1/buckets", { key: u.key })).body.data.buckets as any[];
  expect(all.find((b) => b.title === "published")).toMatchObject({ published: true, publication_lifecycle_active: true });
  expect(all.find((b) => b.title === "locked").lock).toMatchObject({ kind: "bucket_lock", message: "busy" });
  expect(all.find((b) => b.title === "with an address").inbound_email).toMatchObject({ enabled: true });
});
