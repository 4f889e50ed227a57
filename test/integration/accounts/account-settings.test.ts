// The account resource and its time-zone setting, over real HTTP: read and change it with an API
// key (GET/PATCH /api/v1/account) and from the dashboard's account page (a signed-in form post),
// bad names refused with the field named, weaker keys and read-only accounts refused, and one
// account's setting never touching another's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setReadOnly } from "../../../src/features/accounts";
import { Browser } from "../../helpers/browser";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";

let t: TestPier;
let owner: TestUser;
let other: TestUser;

const account = (key: string) => t.api("GET", "/api/v1/account", { key });
const patch = (key: string, body: unknown) => t.api("PATCH", "/api/v1/account", { key, body });

beforeAll(async () => {
  t = await startTestPier();
  owner = await t.user();
  other = await t.user();
});
afterAll(() => t?.stop());

describe("GET and PATCH /api/v1/account", () => {
  test("a new account is in UTC; the owner's key sets Europe/Berlin and reads it back", async () => {
    const before = await account(owner.key);
    expect(before.status).toBe(200);
    expect(before.body.data.account).toMatchObject({ id: owner.accountId, time_zone: "UTC", read_only: false, state: "active" });
    const r = await patch(owner.key, { time_zone: "Europe/Berlin" });
    expect(r.status).toBe(200);
    expect(r.body.data.account.time_zone).toBe("Europe/Berlin");
    expect((await account(owner.key)).body.data.account.time_zone).toBe("Europe/Berlin");
    expect((await patch(owner.key, { time_zone: "Asia/Kathmandu" })).body.data.account.time_zone).toBe("Asia/Kathmandu");
    expect((await patch(owner.key, {})).body.data.account.time_zone).toBe("Asia/Kathmandu"); // nothing named, nothing changed
  });

  test("another account's setting is untouched", async () => {
    expect((await account(other.key)).body.data.account).toMatchObject({ id: other.accountId, time_zone: "UTC" });
  });

  test.each([["Mars/Olympus"], ["europe/berlin"], ["Europe/Berlin "], [""], ["+02:00"], ["GMT+2"], ["x".repeat(101)]])(
    "time_zone %p is 422 VALIDATION_FAILED naming time_zone, and nothing changes",
    async (zone) => {
      const r = await patch(owner.key, { time_zone: zone });
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe("VALIDATION_FAILED");
      expect(r.body.error.details.field).toBe("time_zone");
      expect((await account(owner.key)).body.data.account.time_zone).toBe("Asia/Kathmandu");
    },
  );

  test("an unknown field is refused rather than ignored", async () => {
    const r = await patch(owner.key, { timezone: "Europe/Berlin" });
    expect(r.status).toBe(422);
    expect((await account(owner.key)).body.data.account.time_zone).toBe("Asia/Kathmandu");
  });

  test("a bucket_write key reads the setting but cannot change it; neither can a key limited to some buckets", async () => {
    const writer = t.key(owner, { scope: "bucket_write" });
    expect((await account(writer)).body.data.account.time_zone).toBe("Asia/Kathmandu");
    const r = await patch(writer, { time_zone: "UTC" });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("FORBIDDEN");
    const selected = t.key(owner, { scope: "bucket_admin", bucketAccess: "selected", bucketPermissions: {} });
    expect((await patch(selected, { time_zone: "UTC" })).status).toBe(403);
    expect((await account(owner.key)).body.data.account.time_zone).toBe("Asia/Kathmandu");
  });

  test("another account's key naming this account is refused, and this account's zone stays", async () => {
    const r = await patch(other.key, { time_zone: "UTC", account_id: owner.accountId });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("FORBIDDEN");
    expect((await t.api("GET", `/api/v1/account?account_id=${owner.accountId}`, { key: other.key })).status).toBe(403);
    expect((await account(owner.key)).body.data.account.time_zone).toBe("Asia/Kathmandu");
  });

  test("a read-only account keeps its setting", async () => {
    const u = await t.user();
    setReadOnly(t.pier.deps, u.accountId, true, "test");
    const r = await patch(u.key, { time_zone: "Europe/Berlin" });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("ACCOUNT_READ_ONLY");
    expect((await account(u.key)).body.data.account).toMatchObject({ time_zone: "UTC", read_only: true });
  });
});

describe("the dashboard's account page", () => {
  test("shows the zone selected and saves another one; a bad one is refused on the page", async () => {
    const u = await t.user();
    const b = new Browser(t.url);
    expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
    const page = await b.get("/dashboard/account");
    expect(page.status).toBe(200);
    expect(page.text).toContain('<option value="UTC" selected>UTC</option>');
    expect(page.text).toContain('<option value="Asia/Kathmandu">Asia/Kathmandu</option>');

    const saved = await b.submit("/dashboard/account", "/dashboard/account/time-zone", { time_zone: "Europe/Berlin" });
    expect(saved.status).toBe(303);
    expect(saved.location).toContain("/dashboard/account?done=time-zone");
    expect((await account(u.key)).body.data.account.time_zone).toBe("Europe/Berlin");
    const after = await b.get(saved.location!);
    expect(after.text).toContain('<option value="Europe/Berlin" selected>Europe/Berlin</option>');
    expect(after.text).toContain("Time zone saved");

    const refused = await b.submit("/dashboard/account", "/dashboard/account/time-zone", { time_zone: "Atlantis/Capital" });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('id="time-zone-error"');
    expect(refused.text).toContain('aria-invalid="true"');
    expect((await account(u.key)).body.data.account.time_zone).toBe("Europe/Berlin");
  });
});
