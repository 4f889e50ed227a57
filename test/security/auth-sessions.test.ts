// Attacks on sign-in links, sessions and cookies (docs/security.md, "Accounts, sessions, OAuth
// and gates"). Each test replays what the attacker did and shows it no longer gets through.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, isNull } from "drizzle-orm";
import { accounts, apiKeys, invites, users } from "../../src/db/schema";
import { listOutbox } from "../../src/features/mail";
import { Browser, csrfOf } from "../helpers/browser";
import { hiddenFields } from "../helpers/oauth";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t.stop());

const local = (url: string) => url.replace(t.pier.deps.urls.baseUrl, t.url);
const liveKeys = (accountId: string) =>
  t.pier.deps.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
    .all().length;
const hashOf = (key: string) => new Bun.CryptoHasher("sha256").update(key).digest("hex");
const totpSeed = (userId: string) => t.pier.deps.db.select({ s: users.totpSealed }).from(users).where(eq(users.id, userId)).get()!.s;

/** Mint a login link with `key` and open it in a fresh browser, as the attacker did. */
async function browserFromLink(key: string): Promise<Browser> {
  const r = await t.api("POST", "/api/v1/agent_auth/browser_login_link", { key, body: { redirect_path: "/account/access" } });
  expect(r.status).toBe(200);
  const b = new Browser(t.url);
  const path = new URL(local(r.body.data.url)).pathname;
  const page = await b.get(path);
  const done = await b.post(path, hiddenFields(page.text));
  expect(done.status).toBe(303);
  expect(b.cookies.has("pier_session")).toBe(true);
  return b;
}

async function signedIn(u: TestUser): Promise<Browser> {
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  return b;
}

describe("browser login links cannot turn a weaker credential into the owner", () => {
  test("a bucket_read key, a key limited to one bucket and a bucket_write key are refused a login link", async () => {
    const owner = await t.user({ plan: "pro" });
    const bucket = await t.api("POST", "/api/v1/buckets", { key: owner.key, body: { bucket: { title: "one" } } });
    const bucketId = bucket.body.data.bucket.id as string;
    const readKey = t.key(owner, { scope: "bucket_read" });
    const oneBucketAdmin = t.key(owner, { scope: "bucket_admin", bucketAccess: "selected", bucketPermissions: { [bucketId]: "admin" } });
    const writeKey = t.key(owner, { scope: "bucket_write" });
    for (const key of [readKey, oneBucketAdmin, writeKey]) {
      const r = await t.api("POST", "/api/v1/agent_auth/browser_login_link", { key, body: {} });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe("FORBIDDEN");
      expect(r.body.error.details.required_scope).toBe("bucket_admin");
      expect(r.body.data).toBeUndefined();
    }
    // The bucket_admin key limited to one bucket passes the scope check and is refused by the rule.
    const limited = await t.api("POST", "/api/v1/agent_auth/browser_login_link", { key: oneBucketAdmin, body: {} });
    expect(limited.body.error.details.reason).toBe("needs_owner_full_access");
    // The owner's own account-wide admin key still may.
    expect((await t.api("POST", "/api/v1/agent_auth/browser_login_link", { key: owner.key, body: {} })).status).toBe(200);
  });

  test("a session opened from a login link cannot create or revoke keys, or turn on two-factor, without the password", async () => {
    const owner = await t.user({ plan: "pro" });
    const before = liveKeys(owner.accountId);
    const b = await browserFromLink(owner.key);

    // Dashboard form: asks for the password instead of creating the key.
    const create = await b.submit("/dashboard/account/keys", "/dashboard/account/keys", { label: "attacker", scope: "bucket_admin" });
    expect(create.status).toBe(403);
    expect(create.text).toContain("Confirm your password");
    expect(liveKeys(owner.accountId)).toBe(before);

    // REST with the session and its CSRF token: the same refusal, with a stable code.
    const csrf = csrfOf((await b.get("/dashboard")).text);
    const cookie = `pier_session=${b.cookies.get("pier_session")}`;
    const rest = await t.api("POST", "/api/v1/api_keys", { headers: { cookie, "x-pier-csrf": csrf }, body: { label: "attacker" } });
    expect(rest.status).toBe(403);
    expect(rest.body.error.code).toBe("REAUTHENTICATION_REQUIRED");
    expect(rest.body.error.details.reauthenticate_url).toEndWith("/account/confirm-password");
    const revoke = await t.api("DELETE", `/api/v1/api_keys/${t.pier.deps.db.select().from(apiKeys).where(eq(apiKeys.accountId, owner.accountId)).get()!.id}`, {
      headers: { cookie, "x-pier-csrf": csrf },
    });
    expect(revoke.body.error.code).toBe("REAUTHENTICATION_REQUIRED");
    expect(liveKeys(owner.accountId)).toBe(before);

    // Two-factor set-up (which would lock the owner out) is refused before any seed is stored.
    const enroll = await b.submit("/account/security", "/account/security/totp/enroll", {});
    expect(enroll.text).toContain("Confirm your password");
    expect(totpSeed(owner.userId)).toBeNull();

    // A wrong password does not open sudo mode.
    const wrong = await b.submit("/account/confirm-password", "/account/confirm-password", { password: "not the password", next: "/account/access" });
    expect(wrong.status).toBe(401);
    expect((await b.submit("/dashboard/account/keys", "/dashboard/account/keys", { label: "attacker", scope: "bucket_admin" })).text).toContain(
      "Confirm your password",
    );
    expect(liveKeys(owner.accountId)).toBe(before);
  });

  test("the owner who knows the password confirms it once and can then manage keys and two-factor", async () => {
    const owner = await t.user({ plan: "pro" });
    const b = await browserFromLink(owner.key);
    const ok = await b.submit("/account/confirm-password", "/account/confirm-password", { password: owner.password, next: "/account/access" });
    expect(ok.status).toBe(303);
    expect(ok.location).toBe("/account/access");
    const before = liveKeys(owner.accountId);
    const create = await b.submit("/dashboard/account/keys", "/dashboard/account/keys", { label: "mine", scope: "bucket_read" });
    expect(create.status).toBe(303);
    expect(liveKeys(owner.accountId)).toBe(before + 1);
    const enroll = await b.submit("/account/security", "/account/security/totp/enroll", {});
    expect(enroll.text).toContain("Scan this code");
    expect(totpSeed(owner.userId)).not.toBeNull();
  });

  test("a session opened from a login link cannot approve a device login or an OAuth consent without the password", async () => {
    const owner = await t.user({ plan: "pro" });
    const b = await browserFromLink(owner.key);
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const tokenFor = (client: string, deviceCode: string) =>
      fetch(`${t.url}/oauth/token`, {
        method: "POST",
        headers: form,
        body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: deviceCode, client_id: client }).toString(),
      });

    // Device flow: the attacker's terminal waits for the approval of its Connection ID.
    const cli = await t.api("POST", "/oauth/register", {
      body: { client_name: "CLI", grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"], token_endpoint_auth_method: "none" },
    });
    const device = (await (
      await fetch(`${t.url}/oauth/device_authorization`, {
        method: "POST",
        headers: form,
        body: new URLSearchParams({ client_id: cli.body.client_id }).toString(),
      })
    ).json()) as { user_code: string; device_code: string };
    const shown = await b.get(`/oauth/device?user_code=${device.user_code}`);
    expect(shown.status).toBe(200);
    const approve = await b.post("/oauth/device", { ...hiddenFields(shown.text), action: "approve" });
    expect(approve.status).toBe(303);
    expect(approve.location).toBe(`/account/confirm-password?next=${encodeURIComponent(`/oauth/device?user_code=${device.user_code}`)}`);
    expect((await (await tokenFor(cli.body.client_id, device.device_code)).json()).error).toBe("authorization_pending");

    // Authorization code flow: Allow asks for the password instead of redirecting with a code.
    const redirect = "https://app.example/cb";
    const app = await t.api("POST", "/oauth/register", {
      body: { client_name: "App", redirect_uris: [redirect], grant_types: ["authorization_code"], token_endpoint_auth_method: "none" },
    });
    const params = {
      response_type: "code",
      client_id: app.body.client_id,
      redirect_uri: redirect,
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      state: "s",
    };
    const consentPage = await b.get(`/oauth/authorize?${new URLSearchParams(params)}`);
    expect(consentPage.status).toBe(200);
    const allow = await b.post("/oauth/authorize", { ...hiddenFields(consentPage.text), decision: "approve" });
    expect(allow.status).toBe(303);
    expect(allow.location).toStartWith("/account/confirm-password?next=%2Foauth%2Fauthorize%3F");
    expect(allow.location).not.toContain("code=");

    // With the password confirmed, the owner approves and is sent back to the same request.
    const ok = await b.submit("/account/confirm-password", "/account/confirm-password", {
      password: owner.password,
      next: `/oauth/device?user_code=${device.user_code}`,
    });
    expect(ok.status).toBe(303);
    const again = await b.get(ok.location!);
    expect((await b.post("/oauth/device", { ...hiddenFields(again.text), action: "approve" })).status).toBe(200);
    t.clock.advance(10_000); // past the polling interval
    expect((await (await tokenFor(cli.body.client_id, device.device_code)).json()).access_token).toBeString();
  });

  test("a login link stops working when the key that minted it is revoked or narrowed", async () => {
    const owner = await t.user({ plan: "pro" });
    const leaked = t.key(owner, { scope: "bucket_admin" });
    const mint = async (key: string) => {
      const r = await t.api("POST", "/api/v1/agent_auth/browser_login_link", { key, body: {} });
      expect(r.status).toBe(200);
      return new URL(local(r.body.data.url)).pathname;
    };
    const open = async (path: string) => {
      const b = new Browser(t.url);
      const page = await b.get(path);
      const done = await b.post(path, hiddenFields(page.text));
      return { done, signedIn: b.cookies.has("pier_session") };
    };
    // The owner revokes the leaked key: the link it already handed out must die with it.
    const link = await mint(leaked);
    const keyId = t.pier.deps.db
      .select()
      .from(apiKeys)
      .where(eq(apiKeys.tokenHash, hashOf(leaked)))
      .get()!.id;
    expect((await t.api("DELETE", `/api/v1/api_keys/${keyId}`, { key: owner.key })).status).toBe(200);
    const afterRevoke = await open(link);
    expect(afterRevoke.signedIn).toBe(false);
    expect(afterRevoke.done.status).not.toBe(303);

    // A key narrowed since (here: to bucket_read) no longer holds the owner's power either.
    const other = t.key(owner, { scope: "bucket_admin" });
    const link2 = await mint(other);
    t.pier.deps.db
      .update(apiKeys)
      .set({ permissionScope: "bucket_read" })
      .where(eq(apiKeys.tokenHash, hashOf(other)))
      .run();
    expect((await open(link2)).signedIn).toBe(false);

    // A link from a key still in good standing works.
    expect((await open(await mint(owner.key))).signedIn).toBe(true);
  });

  test("a password sign-in is in sudo mode for 10 minutes, then asks again", async () => {
    const owner = await t.user({ plan: "pro" });
    const b = await signedIn(owner);
    expect((await b.submit("/dashboard/account/keys", "/dashboard/account/keys", { label: "fresh", scope: "bucket_read" })).status).toBe(303);
    t.clock.advance(11 * 60_000);
    const stale = await b.submit("/dashboard/account/keys", "/dashboard/account/keys", { label: "stale", scope: "bucket_read" });
    expect(stale.status).toBe(403);
    expect(stale.text).toContain("Confirm your password");
  });

  test("a sudo cookie from one session does not work in another", async () => {
    const owner = await t.user({ plan: "pro" });
    const withPassword = await signedIn(owner);
    const fromLink = await browserFromLink(owner.key);
    fromLink.cookies.set("pier_sudo", withPassword.cookies.get("pier_sudo")!);
    const r = await fromLink.submit("/dashboard/account/keys", "/dashboard/account/keys", { label: "borrowed", scope: "bucket_admin" });
    expect(r.status).toBe(403);
    expect(r.text).toContain("Confirm your password");
  });
});

describe("the visibility lock an agent set stays set", () => {
  test("a login-link session cannot lift the visibility lock without the password; the owner with it can", async () => {
    const owner = await t.user();
    const bucket = (await t.api("POST", "/api/v1/buckets", { key: owner.key, body: { bucket: { title: "Frozen" } } })).body.data.bucket.id as string;
    expect((await t.api("POST", `/api/v1/buckets/${bucket}/visibility_change_lock`, { key: owner.key, body: { reason: "human review" } })).status).toBeLessThan(
      300,
    );
    const locked = async () => (await t.api("GET", `/api/v1/buckets/${bucket}`, { key: owner.key })).body.data.bucket.visibility_change_lock.locked;
    const settings = `/dashboard/buckets/${bucket}/settings`;

    const b = await browserFromLink(owner.key);
    const refused = await b.submit(settings, `${settings}/visibility/unlock`, {});
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("Confirm your password");
    expect(await locked()).toBe(true);

    const ok = await b.submit("/account/confirm-password", "/account/confirm-password", { password: owner.password, next: settings });
    expect(ok.location).toBe(settings);
    const lifted = await b.submit(settings, `${settings}/visibility/unlock`, {});
    expect(lifted.status).toBe(303);
    expect(await locked()).toBe(false);
  });
});

describe("instance admin powers need the password too", () => {
  const db = () => t.pier.deps.db;
  const isAdmin = (id: string) => db().select({ a: users.isInstanceAdmin }).from(users).where(eq(users.id, id)).get()!.a;
  const planOf = (id: string) => db().select({ p: accounts.plan }).from(accounts).where(eq(accounts.id, id)).get()!.p;

  test("a login-link session of an instance admin cannot change users, plans or invites, nor read the outbox, until the password is confirmed", async () => {
    const admin = await t.user();
    db().update(users).set({ isInstanceAdmin: true }).where(eq(users.id, admin.userId)).run();
    const target = await t.user();
    const victim = await t.user();
    db()
      .update(users)
      .set({ totpSealed: t.pier.deps.secrets.seal("totp", "JBSWY3DPEHPK3PXP", victim.userId), totpEnabledAt: new Date().toISOString() })
      .where(eq(users.id, victim.userId))
      .run();
    // Another user's agent login code waits in the outbox (no relay): what the attacker was after.
    expect((await t.api("POST", "/api/v1/agent_auth/request_code", { body: { email: target.email } })).status).toBe(200);
    const codeMail = () => listOutbox(t.pier.deps, 200).find((m) => m.to_address === target.email);
    let mail = codeMail();
    for (let i = 0; !mail && i < 100; i++) {
      await Bun.sleep(20); // sent after the response
      mail = codeMail();
    }
    if (!mail) throw new Error("the code never reached the outbox");
    const invitesBefore = db().select().from(invites).all().length;

    const b = await browserFromLink(admin.key);
    expect((await b.get("/dashboard/admin")).status).toBe(200); // the lists stay readable
    const csrf = csrfOf((await b.get("/dashboard/admin")).text);
    const posts: [string, Record<string, string>][] = [
      [`/dashboard/admin/users/${target.userId}/admin-on`, {}],
      [`/dashboard/admin/users/${victim.userId}/reset-2fa`, {}],
      [`/dashboard/admin/users/${victim.userId}/disable`, {}],
      ["/dashboard/admin/invites", { email: "", days: "7" }],
      [`/dashboard/admin/plans/accounts/${target.accountId}`, { plan: "owner" }],
    ];
    for (const [path, form] of posts) {
      const res = await b.post(path, { csrf, ...form });
      expect(res.status).toBe(403);
      expect(res.text).toContain("Confirm your password");
    }
    for (const path of ["/dashboard/admin/outbox", `/dashboard/admin/outbox/${mail.id}`]) {
      const res = await b.get(path);
      expect(res.status).toBe(403);
      expect(res.text).toContain("Confirm your password");
      expect(res.text).not.toContain(mail.subject);
    }
    expect(isAdmin(target.userId)).toBe(false);
    expect(db().select().from(users).where(eq(users.id, victim.userId)).get()!).toMatchObject({ totpEnabledAt: expect.any(String), disabledAt: null });
    expect(planOf(target.accountId)).not.toBe("owner");
    expect(db().select().from(invites).all().length).toBe(invitesBefore);

    // The admin who knows the password confirms it and comes back to the page asked for.
    const ok = await b.submit("/account/confirm-password", "/account/confirm-password", { password: admin.password, next: "/dashboard/admin/outbox" });
    expect(ok.status).toBe(303);
    expect(ok.location).toBe("/dashboard/admin/outbox");
    expect((await b.get("/dashboard/admin/outbox")).text).toContain(target.email);
    expect((await b.submit("/dashboard/admin", `/dashboard/admin/users/${target.userId}/admin-on`, {})).status).toBe(303);
    expect(isAdmin(target.userId)).toBe(true);
  });
});

describe("session cookie tossing", () => {
  test("a request with two session cookies is signed out, even when one of them is valid", async () => {
    const owner = await t.user();
    const b = await signedIn(owner);
    const good = b.cookies.get("pier_session")!;
    expect((await fetch(`${t.url}/dashboard`, { headers: { cookie: `pier_session=${good}` }, redirect: "manual" })).status).toBe(200);
    // A site on a sibling host set a second pier_session (longer Path, or a parent Domain).
    const attacker = await signedIn(await t.user());
    const tossed = attacker.cookies.get("pier_session")!;
    for (const cookie of [`pier_session=${tossed}; pier_session=${good}`, `pier_session=${good}; pier_session=${good}`]) {
      expect((await fetch(`${t.url}/dashboard`, { headers: { cookie }, redirect: "manual" })).status).toBe(303);
      expect((await t.api("GET", "/api/v1/buckets", { headers: { cookie } })).status).toBe(401);
    }
  });
});

describe("session cookie tossing over https", () => {
  let s: TestPier;
  beforeAll(async () => {
    s = await startTestPier({ baseUrl: "https://pier.example.test", trustProxy: true });
  });
  afterAll(() => s.stop());

  test("only the __Host- session cookie counts: a plain pier_session planted by a site is ignored", async () => {
    const u = await s.user();
    const headers = { host: "pier.example.test", "x-forwarded-proto": "https" };
    const b = new Browser(s.url, headers);
    expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
    const token = b.cookies.get("__Host-pier_session")!;
    expect(token).toBeDefined();
    const get = (cookie: string) => fetch(`${s.url}/dashboard`, { headers: { ...headers, cookie }, redirect: "manual" });
    expect((await get(`__Host-pier_session=${token}`)).status).toBe(200);
    // The name a sibling host can set is not read at all, and two __Host- values are refused.
    expect((await get(`pier_session=${token}`)).status).toBe(303);
    expect((await get(`__Host-pier_session=${token}; __Host-pier_session=${token}`)).status).toBe(303);
  });
});
