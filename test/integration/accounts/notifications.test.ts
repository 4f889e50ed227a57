// GET /api/v1/notifications pages like the spec's other lists (limit/offset, a `pagination`
// object), so an account with more than 100 notifications can read them all; the dashboard's
// notifications page pages the same way.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { notifyAccount } from "../../../src/features/notifications";
import { sessionCookie } from "../../helpers/oauth";
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
