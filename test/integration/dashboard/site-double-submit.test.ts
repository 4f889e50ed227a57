// A publish form sent twice at once acts once, even though publishing is asynchronous (the
// password is hashed before the publication is written): the second POST waits for the first
// and is sent where it led. With one publish a minute allowed, a second run would be refused.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Browser } from "../../helpers/browser";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
const formCsrf = (html: string) => [...html.matchAll(/name="csrf" value="([^"]+)"/g)].map((m) => m[1]!).find((v) => v.includes("~"))!;
beforeAll(async () => {
  t = await startTestPier({ publishRateLimitPerMinute: 1 });
});
afterAll(() => t?.stop());

test("the same publish form posted twice at once publishes once and both answers lead to the same page", async () => {
  const u = await t.user({ plan: "pro" });
  const bucket = await createBucket(t, u, { title: "Twice" });
  await syncFiles(t, u.key, bucket.id, [textFile("index.html", "<p>once</p>", "text/html")]);
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  const csrf = formCsrf((await b.get(`/dashboard/buckets/${bucket.id}/site`)).text);
  const form = { csrf, site_mode: "static", access_mode: "password", password: "twice-secret" };
  const [first, second] = await Promise.all([
    b.post(`/dashboard/buckets/${bucket.id}/site/publish`, form),
    b.post(`/dashboard/buckets/${bucket.id}/site/publish`, form),
  ]);
  expect(first.status).toBe(303);
  expect(second.status).toBe(303);
  expect(second.location).toBe(first.location);
  // The one publish allowed this minute was used once: a new form is refused by the limit.
  const again = formCsrf((await b.get(`/dashboard/buckets/${bucket.id}/site`)).text);
  expect((await b.post(`/dashboard/buckets/${bucket.id}/site/publish`, { ...form, csrf: again })).status).toBe(429);
});
