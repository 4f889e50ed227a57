// A connection's permission is capped by what the approving user may give when they approve
// (as a named key's scope is at creation): a member's approval of bucket_admin is bucket_write,
// and a later promotion of that member does not widen it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { addMember } from "../../../src/features/accounts/service";
import { createGrant, issueTokens } from "../../../src/features/oauth/grants";
import { discoverAndRegister } from "../../helpers/oauth";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t?.stop());

test("a member's approval of bucket_admin is stored as bucket_write, and stays so after a promotion", async () => {
  const owner = await t.user({ plan: "pro" });
  const member = await t.user();
  addMember(t.pier.deps, owner.accountId, member.userId, "member");
  const bucket = (await t.api("POST", "/api/v1/buckets", { key: owner.key, body: { bucket: { title: "Team" } } })).body.data.bucket.id;
  const { client } = await discoverAndRegister(t, { client_name: "agent", redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" });
  // What the consent page stores when `userId` approves the client's request for bucket_admin.
  const approveAdmin = (userId: string) =>
    createGrant(t.pier.deps, {
      clientId: client.client_id,
      accountId: owner.accountId,
      userId,
      flow: "authorization_code",
      scope: "pier:mcp",
      permission: "bucket_admin",
    });
  const grant = approveAdmin(member.userId);
  expect(grant.permissionScope).toBe("bucket_write");
  t.pier.deps.sqlite.run("UPDATE memberships SET role = 'admin' WHERE account_id = ? AND user_id = ?", [owner.accountId, member.userId]);
  const { access_token } = issueTokens(t.pier.deps, grant);
  const rename = await t.api("PATCH", `/api/v1/buckets/${bucket}`, { key: access_token, body: { bucket: { title: "Renamed" } } });
  expect([rename.status, rename.body.error?.code]).toEqual([403, "FORBIDDEN"]);
  // An owner's approval keeps what was asked.
  const own = approveAdmin(owner.userId);
  expect(own.permissionScope).toBe("bucket_admin");
});
