// Legacy email-code flow: codes go through the outbound mailer (the admin outbox here); the
// answers reveal nothing about accounts; every failure is INVALID_CODE with a fallback.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { agentLoginCodes, apiKeys, users } from "../../../src/db/schema";
import { addMember, countUsers } from "../../../src/features/accounts/service";
import { listOutbox } from "../../../src/features/mail/outbound";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier({ rateLimitAnonPerMinute: 1000 });
});
afterAll(() => t.stop());

// Every request comes from 127.0.0.1: tests move the clock a minute on between phases so the
// per-address limiter (10 a minute) stays out of the way.
async function request(email: string) {
  const r = await t.api("POST", "/api/v1/agent_auth/request_code", { body: { email } });
  await Bun.sleep(20); // the mail is sent after the response
  return r;
}
const codeFor = (email: string) => {
  const msg = listOutbox(t.pier.deps, 200).find((m) => m.to_address === email && m.kind === "agent-login-code");
  return msg ? /\b(\d{8})\b/.exec(msg.text_body)![1]! : null;
};
const verify = (body: Record<string, unknown>) => t.api("POST", "/api/v1/agent_auth/verify_code", { body });

describe("email-code flow", () => {
  test("a code by mail becomes an agent key; the answer is the same for unknown and two-factor addresses", async () => {
    const u = await t.user();
    const twoFactor = await t.user();
    t.pier.deps.db.update(users).set({ totpEnabledAt: new Date().toISOString(), totpSealed: "v1.x.y.z" }).where(eq(users.id, twoFactor.userId)).run();
    const known = await request(u.email);
    expect(known.status).toBe(200);
    const unknown = await request("nobody-here@example.com");
    const tf = await request(twoFactor.email);
    expect(unknown.body).toEqual(known.body);
    expect(tf.body).toEqual(known.body);
    expect(known.body.data).toMatchObject({ fallback_url: expect.any(String), signup_url: expect.any(String), hint: expect.any(String) });
    expect(codeFor("nobody-here@example.com")).toBeNull();
    expect(codeFor(twoFactor.email)).toBeNull();
    const code = codeFor(u.email)!;
    expect(code).toMatch(/^\d{8}$/);

    const users0 = countUsers(t.pier.deps);
    const r = await verify({ email: u.email, code, label: "my agent", bucket_access: "all" });
    expect(r.status).toBe(200);
    expect(r.body.data.api_key).toMatch(/^pier_/);
    expect(r.body.data.guidance).toContain("never print");
    const status = await t.api("GET", "/api/v1/agent_auth/status", { key: r.body.data.api_key });
    expect(status.body.data.account).toMatchObject({ id: u.accountId, permission_scope: "bucket_admin" });
    expect((await verify({ email: u.email, code })).body.error.code).toBe("INVALID_CODE"); // once only
    expect(countUsers(t.pier.deps)).toBe(users0);
  });

  test("a member's key is stored capped to what the member may give, not as asked (D295)", async () => {
    t.clock.advance(61_000);
    const owner = await t.user();
    const member = await t.user();
    // A user who belongs to the owner's account only, as a member.
    t.pier.deps.sqlite.run("DELETE FROM memberships WHERE account_id = ?", [member.accountId]);
    addMember(t.pier.deps, owner.accountId, member.userId, "member");
    await request(member.email);
    const r = await verify({ email: member.email, code: codeFor(member.email)!, permission_scope: "bucket_admin" });
    expect(r.status).toBe(200);
    expect(r.body.data.permission_scope).toBe("bucket_write");
    const row = t.pier.deps.db.select().from(apiKeys).where(eq(apiKeys.id, r.body.data.key_id)).get()!;
    expect([row.accountId, row.permissionScope]).toEqual([owner.accountId, "bucket_write"]);
  });

  test("a stored code is an HMAC under the instance secret, not sha256(id:code): the database alone cannot brute-force it", async () => {
    t.clock.advance(61_000);
    const u = await t.user();
    await request(u.email);
    const code = codeFor(u.email)!;
    const row = t.pier.deps.db.select().from(agentLoginCodes).where(eq(agentLoginCodes.email, u.email)).get()!;
    const sha = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
    expect(row.codeHash).not.toBe(sha(`${row.id}:${code}`));
    expect(row.codeHash).not.toContain(code);
    expect(row.codeHash).toBe(t.pier.deps.secrets.sign("signin", `agent-login-code|${row.id}|${code}`));
    const r = await verify({ email: u.email, code });
    expect(r.status).toBe(200);
    expect(r.body.data.api_key).toMatch(/^pier_/);
  });

  test("wrong codes count per client address; INVALID_CODE carries the fallback", async () => {
    t.clock.advance(61_000); // a fresh minute for the per-address limiter
    const u = await t.user();
    await request(u.email);
    const code = codeFor(u.email)!;
    const wrong = code === "00000000" ? "11111111" : "00000000";
    for (let i = 0; i < 5; i++) {
      const r = await verify({ email: u.email, code: wrong });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("INVALID_CODE");
      expect(r.body.error.details).toMatchObject({
        fallback_url: `${t.pier.deps.urls.baseUrl}/oauth/device`,
        signup_url: expect.any(String),
        hint: expect.any(String),
      });
    }
    t.clock.advance(61_000); // let the per-minute limiter refill: the guess limit still holds
    const right = await verify({ email: u.email, code });
    expect(right.status).toBe(429);
    expect(right.body.error.code).toBe("TOO_MANY_ATTEMPTS");
    expect(right.body.error.details.fallback_url).toBe(`${t.pier.deps.urls.baseUrl}/oauth/device`);
    t.clock.advance(15 * 60_000);
    expect((await verify({ email: "never@example.com", code: "12345678" })).body.error.code).toBe("INVALID_CODE");
  });

  test("selected buckets with per-bucket permissions; foreign buckets refused; codes expire", async () => {
    t.clock.advance(61_000);
    const u = await t.user();
    const mine = (await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "Mine" } } })).body.data.bucket.id;
    const other = (await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "Other" } } })).body.data.bucket.id;
    const foreign = (await t.api("POST", "/api/v1/buckets", { key: (await t.user()).key, body: { bucket: { title: "Foreign" } } })).body.data.bucket.id;
    await request(u.email);
    const code = codeFor(u.email)!;
    const bad = await verify({ email: u.email, code, bucket_access: "selected", bucket_ids: [foreign] });
    expect(bad.status).toBe(422);
    const r = await verify({ email: u.email, code, bucket_access: "selected", bucket_ids: [mine], bucket_permissions: { [mine]: "read" } });
    expect(r.status).toBe(200);
    const list = await t.api("GET", "/api/v1/buckets", { key: r.body.data.api_key });
    expect(list.body.data.buckets.map((b: any) => b.id)).toEqual([mine]);
    expect((await t.api("PATCH", `/api/v1/buckets/${mine}`, { key: r.body.data.api_key, body: { bucket: { title: "x" } } })).status).toBe(403);
    expect((await t.api("GET", `/api/v1/buckets/${other}`, { key: r.body.data.api_key })).status).toBe(404);

    t.clock.advance(61_000);
    await request(u.email);
    const late = codeFor(u.email)!;
    t.clock.advance(601_000);
    expect((await verify({ email: u.email, code: late })).body.error.code).toBe("INVALID_CODE");
    expect((await t.api("POST", "/api/v1/agent_auth/request_code", { body: { email: "not an email" } })).status).toBe(422);
  });
});
