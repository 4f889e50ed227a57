// Attacks on the dashboard's instance admin and account-security forms: a signed-in user who is
// not an instance admin opening or posting to every admin page, an admin's form token replayed
// from another session or after the admin was demoted, and a password change by someone holding
// a session without the current password. Each is reproduced over HTTP and shown to change nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts, invites, jobs, sessions, users } from "../../src/db/schema";
import { Browser, csrfOf } from "../helpers/browser";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";

let t: TestPier;
let admin: TestUser;
beforeAll(async () => {
  t = await startTestPier();
  admin = await t.user({ email: "the-admin@example.com" }); // the instance's first user administers it
});
afterAll(async () => {
  await t?.stop();
});

async function signedIn(u: TestUser, password = u.password): Promise<Browser> {
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password })).status).toBe(303);
  return b;
}

const db = () => t.pier.deps.db;
const isAdmin = (id: string) => db().select({ a: users.isInstanceAdmin }).from(users).where(eq(users.id, id)).get()!.a;
const planOf = (id: string) => db().select({ p: accounts.plan }).from(accounts).where(eq(accounts.id, id)).get()!.p;

function failedJob(): string {
  const id = `job_sec${Math.random().toString(36).slice(2, 10)}`;
  const now = new Date().toISOString();
  db()
    .insert(jobs)
    .values({ id, kind: "noop", status: "failed", runAt: now, createdAt: now, updatedAt: now, finishedAt: now, lastError: "boom", attempts: 5 })
    .run();
  return id;
}

describe("instance admin pages", () => {
  test("a signed-in user who is not an instance admin gets the not-found page on every admin route, GET and POST, and nothing changes", async () => {
    const user = await t.user();
    const b = await signedIn(user);
    const job = failedJob();
    const invitesBefore = db().select().from(invites).all().length;
    // The admin pages do not appear in the user's navigation.
    expect((await b.get("/dashboard/buckets")).text).not.toContain('href="/dashboard/admin"');
    for (const path of ["/dashboard/admin", "/dashboard/admin/plans", "/dashboard/admin/outbox", "/dashboard/admin/outbox/out_x", "/dashboard/admin/health"]) {
      const res = await b.get(path);
      expect(res.status).toBe(404);
      expect(res.text).toContain("Not found");
    }
    // Posts carry this session's valid token: only the admin check stands in the way.
    const csrf = csrfOf((await b.get("/dashboard/buckets")).text);
    const posts: [string, Record<string, string>][] = [
      [`/dashboard/admin/users/${user.userId}/admin-on`, {}],
      [`/dashboard/admin/users/${admin.userId}/admin-off`, {}],
      [`/dashboard/admin/users/${admin.userId}/reset-2fa`, {}],
      ["/dashboard/admin/invites", { email: "", days: "7" }],
      [`/dashboard/admin/plans/accounts/${user.accountId}`, { plan: "owner" }],
      [`/dashboard/admin/health/jobs/${job}/retry`, {}],
    ];
    for (const [path, form] of posts) {
      const res = await b.post(path, { csrf, ...form });
      expect(res.status).toBe(404);
      expect(res.text).not.toContain("pier_inv");
    }
    expect(isAdmin(user.userId)).toBe(false);
    expect(isAdmin(admin.userId)).toBe(true);
    expect(planOf(user.accountId)).toBe("free");
    expect(db().select().from(invites).all().length).toBe(invitesBefore);
    expect(db().select({ s: jobs.status }).from(jobs).where(eq(jobs.id, job)).get()!.s).toBe("failed");
  });

  test("an admin's form token replayed from another session, or after the admin was demoted, does nothing", async () => {
    const second = await t.user({ email: "second-admin@example.com" });
    const target = await t.user();
    const a = await signedIn(admin);
    // The admin makes `second` an admin, so `second` can be demoted later.
    const page = await a.get("/dashboard/admin");
    expect((await a.post(`/dashboard/admin/users/${second.userId}/admin-on`, { csrf: csrfOf(page.text) })).status).toBe(303);
    expect(isAdmin(second.userId)).toBe(true);

    // Stolen token: the admin's form token posted from the target's own session.
    const stolen = csrfOf((await a.get("/dashboard/admin/plans")).text);
    const attacker = await signedIn(target);
    const replay = await attacker.post(`/dashboard/admin/plans/accounts/${target.accountId}`, { csrf: stolen, plan: "owner" });
    expect(replay.status).toBe(404); // not this session's token, and not an admin: the not-found page
    // An admin session given another admin session's token refuses it as a forged form.
    const otherAdmin = await signedIn(admin);
    const forged = await otherAdmin.post(`/dashboard/admin/plans/accounts/${target.accountId}`, { csrf: stolen, plan: "owner" });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain("This form expired or was sent from another site");
    expect(planOf(target.accountId)).toBe("free");

    // Old form: `second` loads the plans page as an admin, is demoted, then submits it.
    const s2 = await signedIn(second);
    const oldForm = csrfOf((await s2.get("/dashboard/admin/plans")).text);
    expect((await a.post(`/dashboard/admin/users/${second.userId}/admin-off`, { csrf: csrfOf((await a.get("/dashboard/admin")).text) })).status).toBe(303);
    const late = await s2.post(`/dashboard/admin/plans/accounts/${target.accountId}`, { csrf: oldForm, plan: "owner" });
    expect(late.status).toBe(404);
    expect(planOf(target.accountId)).toBe("free");
  });

  test("the last instance admin cannot be demoted (the instance would have nobody to administer it in a browser)", async () => {
    const fresh = await startTestPier();
    try {
      const only = await fresh.user();
      const b = new Browser(fresh.url);
      expect((await b.submit("/signin", "/signin", { email: only.email, password: only.password })).status).toBe(303);
      const res = await b.post(`/dashboard/admin/users/${only.userId}/admin-off`, { csrf: csrfOf((await b.get("/dashboard/admin")).text) });
      expect(res.status).toBe(409);
      expect(res.text).toContain("only instance admin");
      expect(fresh.pier.deps.db.select({ a: users.isInstanceAdmin }).from(users).where(eq(users.id, only.userId)).get()!.a).toBe(true);
    } finally {
      await fresh.stop();
    }
  });
});

describe("disabling a user", () => {
  test("a disabled user cannot sign in, their session, API key and login links stop working; enabling restores the key", async () => {
    const u = await t.user();
    const b = await signedIn(u);
    const a = await signedIn(admin);
    const res = await a.post(`/dashboard/admin/users/${u.userId}/disable`, { csrf: csrfOf((await a.get("/dashboard/admin")).text) });
    expect(res.status).toBe(303);
    expect((await b.get("/dashboard/account")).status).toBe(303); // signed out
    const key = await t.api("GET", "/api/v1/buckets", { key: u.key });
    expect(key.status).toBe(401);
    // The right password is refused with a reason; a wrong one says only that it is wrong.
    const signin = await new Browser(t.url).submit("/signin", "/signin", { email: u.email, password: u.password });
    expect(signin.status).toBe(403);
    expect(signin.text).toContain("disabled");
    const wrong = await new Browser(t.url).submit("/signin", "/signin", { email: u.email, password: "not the password" });
    expect(wrong.text).not.toContain("disabled");
    // An admin is not disabled (remove admin first).
    const self = await a.post(`/dashboard/admin/users/${admin.userId}/disable`, { csrf: csrfOf((await a.get("/dashboard/admin")).text) });
    expect(self.status).toBe(409);
    expect(db().select({ d: users.disabledAt }).from(users).where(eq(users.id, admin.userId)).get()!.d).toBeNull();

    expect((await a.post(`/dashboard/admin/users/${u.userId}/enable`, { csrf: csrfOf((await a.get("/dashboard/admin")).text) })).status).toBe(303);
    expect((await t.api("GET", "/api/v1/buckets", { key: u.key })).status).toBe(200);
    await signedIn(u);
  });
});

describe("password change", () => {
  test("a session without the current password cannot change it; the owner's change ends every other session", async () => {
    const u = await t.user();
    const b = await signedIn(u);
    const other = await signedIn(u);
    const form = async (current: string, next: string) =>
      b.post("/dashboard/account/security/password", {
        csrf: csrfOf((await b.get("/dashboard/account/security")).text),
        current_password: current,
        new_password: next,
      });

    const guessed = await form("not the password", "a brand new password");
    expect(guessed.status).toBe(401);
    expect(guessed.text).toContain("That is not your current password.");
    expect((await signedIn(u)).cookies.has("pier_session")).toBe(true); // the old password still works

    // Outside sudo mode (10 minutes after the sign-in), the password is asked for first.
    t.clock.advance(11 * 60_000);
    const stale = await form(u.password, "a brand new password");
    expect(stale.status).toBe(403);
    expect(stale.text).toContain("Confirm your password");

    const ok = await b.submit("/account/confirm-password", "/account/confirm-password", { password: u.password, next: "/dashboard/account/security" });
    expect(ok.status).toBe(303);
    const changed = await form(u.password, "a brand new password");
    expect(changed.status).toBe(303);
    expect(changed.location).toBe("/dashboard/account/security?done=password-changed");
    // This session stays; the other one (and the two signed in above) ended.
    expect((await b.get("/dashboard/account/security")).status).toBe(200);
    expect((await other.get("/dashboard/account/security")).status).toBe(303);
    expect(db().select().from(sessions).where(eq(sessions.userId, u.userId)).all().length).toBe(1);
    await signedIn(u, "a brand new password");
  });

  test("sign out everywhere ends every session of the user, this one included", async () => {
    const u = await t.user();
    const b = await signedIn(u);
    const other = await signedIn(u);
    const res = await b.submit("/dashboard/account/security", "/dashboard/account/security/sign-out-everywhere", {});
    expect(res.status).toBe(303);
    expect(res.location).toBe("/signin?signed_out=1");
    expect((await b.get("/dashboard/account")).status).toBe(303);
    expect((await other.get("/dashboard/account")).status).toBe(303);
    expect(db().select().from(sessions).where(eq(sessions.userId, u.userId)).all().length).toBe(0);
  });
});
