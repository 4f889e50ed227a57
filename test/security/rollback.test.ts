// Rollback as an attacker (or a careless second agent) would try it: switching what a site serves
// is a publishing change, so it obeys the same bucket rules as a publish.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { siteFetch } from "../helpers/sites";
import { directUpload, newBucket, textFile } from "../helpers/uploads";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier({ publishRateLimitPerMinute: 10_000, uploadRateLimitPerMinute: 10_000 });
});
afterAll(() => t?.stop());

const host = (slug: string) => `${slug}.${t.pier.deps.urls.sitesDomain}`;

async function publishText(u: TestUser, bucketId: string, text: string) {
  const up = await directUpload(t, u.key, bucketId, textFile("index.html", text, "text/html; charset=utf-8"));
  if (up.status >= 300) throw new Error(`upload: ${up.status} ${up.text}`);
  const r = await t.api("POST", `/api/v1/buckets/${bucketId}/publication`, { key: u.key, body: {} });
  if (r.status !== 202) throw new Error(`publish: ${r.status} ${r.text}`);
  await t.pier.runner.drain();
  return (await t.api("GET", `/api/v1/publications/${r.body.data.publication.id}?include_manifest=false`, { key: u.key })).body.data.publication;
}

describe("rollback attacks", () => {
  test("another key's bucket lock refuses a rollback (423 BUCKET_LOCKED) and the live deploy stays; the holder may roll back", async () => {
    const u = await t.user({ plan: "pro" });
    const bucket = await newBucket(t, u.key, "Locked Rollback");
    const first = await publishText(u, bucket, "<h1>first</h1>");
    const second = await publishText(u, bucket, "<h1>second</h1>");
    const holder = t.key(u, { scope: "bucket_admin" });
    const lock = await t.api("POST", `/api/v1/buckets/${bucket}/lock`, { key: holder, body: { message: "release in progress", duration_seconds: 300 } });
    expect(lock.status).toBe(200);

    const r = await t.api("POST", `/api/v1/publications/${first.id}/rollback`, { key: u.key, body: { deploy_id: first.deploy_id } });
    expect([r.status, r.body.error?.code]).toEqual([423, "BUCKET_LOCKED"]);
    expect(await (await siteFetch(t, host(second.public_slug), "/")).text()).toBe("<h1>second</h1>");
    const after = (await t.api("GET", `/api/v1/publications/${first.id}?include_manifest=false`, { key: u.key })).body.data.publication;
    expect(after.deploy_id).toBe(second.deploy_id);

    const byHolder = await t.api("POST", `/api/v1/publications/${first.id}/rollback`, { key: holder, body: { deploy_id: first.deploy_id } });
    expect(byHolder.status).toBe(200);
    expect(await (await siteFetch(t, host(second.public_slug), "/")).text()).toBe("<h1>first</h1>");
  });
});
