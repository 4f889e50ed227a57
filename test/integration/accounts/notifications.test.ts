// GET /api/v1/notifications pages like the spec's other lists (limit/offset, a `pagination`
// object), so an account with more than 100 notifications can read them all; the dashboard's
// notifications page pages the same way.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { notifyAccount } from "../../../src/features/notifications";
import { sessionCookie } from "../../helpers/oauth";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";

const COUNT = 130;
let t: TestPier;
let u: TestUser;

beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
  for (let i = 0; i < COUNT; i++) {
    notifyAccount(
      t.pier.deps,
      { accountId: u.accountId, kind: "bucket_deleted", subject: `Note ${String(i).padStart(3, "0")}`, body: "done", data: { n: i } },
      t.pier.deps.db,
    );
    t.clock.advance(1000);
  }
});
afterAll(() => t?.stop());

const subjects = (r: { body: any }) => r.body.data.notifications.map((n: { subject: string }) => n.subject) as string[];
const expected = Array.from({ length: COUNT }, (_, i) => `Note ${String(COUNT - 1 - i).padStart(3, "0")}`);

describe("GET /api/v1/notifications", () => {
  test("pages past the newest 100 with limit/offset and says where the next page starts", async () => {
    const first = await t.api("GET", "/api/v1/notifications?limit=100", { key: u.key });
    expect(first.status).toBe(200);
    expect(first.body.data.pagination).toEqual({ limit: 100, offset: 0, total_count: COUNT, has_more: true, next_offset: 100 });
    const second = await t.api("GET", `/api/v1/notifications?limit=100&offset=${first.body.data.pagination.next_offset}`, { key: u.key });
    expect(second.status).toBe(200);
    expect(second.body.data.pagination).toEqual({ limit: 100, offset: 100, total_count: COUNT, has_more: false, next_offset: null });
    // Every notification once, newest first across the pages.
    expect([...subjects(first), ...subjects(second)]).toEqual(expected);
  });

  test("the default page is the newest 20; a bad offset is 422 naming the field", async () => {
    const r = await t.api("GET", "/api/v1/notifications", { key: u.key });
    expect(subjects(r)).toEqual(expected.slice(0, 20));
    expect(r.body.data.pagination).toMatchObject({ limit: 20, offset: 0, has_more: true, next_offset: 20 });
    const bad = await t.api("GET", "/api/v1/notifications?offset=-1", { key: u.key });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe("VALIDATION_FAILED");
  });
});

describe("the dashboard's notifications page", () => {
  test("links to the older notifications past the first 100", async () => {
    const cookie = sessionCookie(t, u);
    const get = async (path: string) => (await fetch(`${t.url}${path}`, { headers: { cookie } })).text();
    const first = await get("/dashboard/account/notifications");
    expect(first).toContain("Note 129");
    expect(first).toContain("Note 030");
    expect(first).not.toContain("Note 029");
    expect(first).toMatch(/href="\/dashboard\/account\/notifications\?offset(=|&#61;)100">Next/);
    const older = await get("/dashboard/account/notifications?offset=100");
    expect(older).toContain("Note 029");
    expect(older).toContain("Note 000");
    expect(older).not.toContain("Note 030");
  });
});

describe("a failed build's notification", () => {
  test("the dashboard links to the bucket's Site tab (its Retry button); the API keeps the REST call", async () => {
    const owner = await t.user({ plan: "pro" });
    const id = await newBucket(t, owner.key, "Failing");
    expect((await directUpload(t, owner.key, id, textFile("docs/readme.txt", "hi"))).status).toBe(201);
    // The root folder holds nothing: the build fails and the account is told.
    expect((await t.api("POST", `/api/v1/buckets/${id}/publication`, { key: owner.key, body: { publication_root_directory: "site" } })).status).toBe(202);
    await t.pier.runner.drain();

    const api = (await t.api("GET", "/api/v1/notifications", { key: owner.key })).body.data.notifications;
    expect(api.map((n: { kind: string }) => n.kind)).toEqual(["publish_failed"]);
    expect(api[0].body).toEndWith(`\nFix the files and retry: POST /api/v1/buckets/${id}/publication/retry`);

    const page = await (await fetch(`${t.url}/dashboard/account/notifications`, { headers: { cookie: sessionCookie(t, owner) } })).text();
    expect(page).toContain(`Fix the files, then retry on <a href="/dashboard/buckets/${id}/site">the bucket's Site tab</a>.`);
    expect(page).toContain("holds no publishable files."); // the build's own reason is still shown
    expect(page).not.toContain("publication/retry");
  });
});
