// account_id selection on REST: a user who belongs to several accounts picks the one to act on
// with `account_id` in the query string of a read or the JSON body of a write, capped by the
// role held there. Without it, the key's own account is used.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addMember } from "../../../src/features/accounts/service";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";

let t: TestPier;
let owner: TestUser; // owns account A
let admin: TestUser; // owns account B, admin in A
let member: TestUser; // owns account C, member in A
let bucketA: string;
beforeAll(async () => {
  t = await startTestPier();
  [owner, admin, member] = [await t.user(), await t.user(), await t.user()];
  addMember(t.pier.deps, owner.accountId, admin.userId, "admin");
  addMember(t.pier.deps, owner.accountId, member.userId, "member");
  bucketA = (await t.api("POST", "/api/v1/buckets", { key: owner.key, body: { bucket: { title: "Team A" } } })).body.data.bucket.id;
});
afterAll(() => t.stop());

const ids = (r: { body: any }) => r.body.data.buckets.map((b: any) => b.id);

describe("reads select the account with ?account_id=", () => {
  test("without it the key's own account; with it the other account the user belongs to", async () => {
    expect(ids(await t.api("GET", "/api/v1/buckets", { key: admin.key }))).toEqual([]);
    expect(ids(await t.api("GET", `/api/v1/buckets?account_id=${owner.accountId}`, { key: admin.key }))).toEqual([bucketA]);

    const hidden = await t.api("GET", `/api/v1/buckets/${bucketA}`, { key: admin.key });
    expect([hidden.status, hidden.body.error.code]).toEqual([404, "BUCKET_NOT_FOUND"]);
    const got = await t.api("GET", `/api/v1/buckets/${bucketA}?account_id=${owner.accountId}`, { key: member.key });
    expect(got.status).toBe(200);
    expect(got.body.data.bucket.id).toBe(bucketA);

    // /status reports the selected account and the scope capped by the role there.
    const asMember = await t.api("GET", `/api/v1/status?account_id=${owner.accountId}`, { key: member.key });
    expect(asMember.body.data.account).toMatchObject({ id: owner.accountId, permission_scope: "bucket_write" });
    const asAdmin = await t.api("GET", `/api/v1/status?account_id=${owner.accountId}`, { key: admin.key });
    expect(asAdmin.body.data.account).toMatchObject({ id: owner.accountId, permission_scope: "bucket_admin" });
  });
});

describe("writes select the account with account_id in the JSON body", () => {
  test("an admin there creates and changes buckets in the other account", async () => {
    const created = await t.api("POST", "/api/v1/buckets", { key: admin.key, body: { bucket: { title: "Made by admin" }, account_id: owner.accountId } });
    expect(created.status).toBe(201);
    const id = created.body.data.bucket.id;
    // It belongs to account A: the owner sees it, the admin's own account does not have it.
    expect(ids(await t.api("GET", "/api/v1/buckets", { key: owner.key }))).toContain(id);
    expect(ids(await t.api("GET", "/api/v1/buckets", { key: admin.key }))).not.toContain(id);

    const patched = await t.api("PATCH", `/api/v1/buckets/${bucketA}`, {
      key: admin.key,
      body: { bucket: { title: "Renamed by admin" }, account_id: owner.accountId },
    });
    expect(patched.status).toBe(200);
    expect((await t.api("GET", `/api/v1/buckets/${bucketA}`, { key: owner.key })).body.data.bucket.title).toBe("Renamed by admin");

    // Without account_id the write goes to the key's own account, where the bucket is not.
    const own = await t.api("PATCH", `/api/v1/buckets/${bucketA}`, { key: admin.key, body: { bucket: { title: "x" } } });
    expect([own.status, own.body.error.code]).toEqual([404, "BUCKET_NOT_FOUND"]);
  });

  test("a member is capped at bucket_write there: a lock works, admin writes are 403 and change nothing", async () => {
    const lock = await t.api("POST", `/api/v1/buckets/${bucketA}/lock`, { key: member.key, body: { account_id: owner.accountId, duration_seconds: 60 } });
    expect(lock.status).toBe(200);
    const unlock = await t.api("DELETE", `/api/v1/buckets/${bucketA}/lock`, { key: member.key, body: { account_id: owner.accountId } });
    expect(unlock.status).toBe(200);

    const before = (await t.api("GET", `/api/v1/buckets/${bucketA}`, { key: owner.key })).body.data.bucket.title;
    const patch = await t.api("PATCH", `/api/v1/buckets/${bucketA}`, {
      key: member.key,
      body: { bucket: { title: "Member rename" }, account_id: owner.accountId },
    });
    expect([patch.status, patch.body.error.code, patch.body.error.details.required_scope]).toEqual([403, "FORBIDDEN", "bucket_admin"]);
    const create = await t.api("POST", "/api/v1/buckets", { key: member.key, body: { bucket: { title: "Member bucket" }, account_id: owner.accountId } });
    expect([create.status, create.body.error.code]).toEqual([403, "FORBIDDEN"]);
    expect((await t.api("GET", `/api/v1/buckets/${bucketA}`, { key: owner.key })).body.data.bucket.title).toBe(before);
    expect((await t.api("GET", "/api/v1/buckets", { key: owner.key })).body.data.buckets.some((b: any) => b.title === "Member bucket")).toBe(false);
  });

  test("an account the user does not belong to is 403 on reads and writes; a key limited to selected buckets cannot switch", async () => {
    const outsider = await t.user();
    const read = await t.api("GET", `/api/v1/buckets?account_id=${owner.accountId}`, { key: outsider.key });
    expect([read.status, read.body.error.code]).toEqual([403, "FORBIDDEN"]);
    const write = await t.api("POST", "/api/v1/buckets", { key: outsider.key, body: { bucket: { title: "Intruder" }, account_id: owner.accountId } });
    expect([write.status, write.body.error.code]).toEqual([403, "FORBIDDEN"]);
    expect((await t.api("GET", "/api/v1/buckets", { key: owner.key })).body.data.buckets.some((b: any) => b.title === "Intruder")).toBe(false);

    const own = (await t.api("POST", "/api/v1/buckets", { key: admin.key, body: { bucket: { title: "Mine" } } })).body.data.bucket.id;
    const selected = t.key(admin, { scope: "bucket_admin", bucketAccess: "selected", bucketPermissions: { [own]: "admin" } });
    const sel = await t.api("GET", `/api/v1/buckets?account_id=${owner.accountId}`, { key: selected });
    expect([sel.status, sel.body.error.code]).toEqual([403, "FORBIDDEN"]);
  });
});
