// Sign-up modes, sign-in/out, attempt limits, CSRF and cookie attributes, over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { invites, sessions, users } from "../../../src/db/schema";
import { createInvite } from "../../../src/features/accounts/invites";
import { countUsers } from "../../../src/features/accounts/service";
import { Browser } from "../../helpers/browser";
import { startTestPier, type TestPier } from "../../helpers/pier";

const PASSWORD = "a long enough password";

async function signUp(t: TestPier, email: string, extra: Record<string, string> = {}) {
  const b = new Browser(t.url);
  const res = await b.submit("/signup", "/signup", { email, password: PASSWORD, ...extra });
  return { b, res };
}

describe("sign-up in invite mode (the default)", () => {
  let t: TestPier;
  beforeAll(async () => {
    t = await startTestPier();
  });
  afterAll(() => t.stop());

  test("the first user signs up without an invite and becomes instance admin", async () => {
    const page = await new Browser(t.url).get("/signup");
    expect(page.status).toBe(200);
    expect(page.text).toContain("first person here");
    expect(page.text).not.toContain('name="invite"');
    const { b, res } = await signUp(t, "Owner@Example.com");
    expect(res.status).toBe(303);
    expect(res.location).toBe("/dashboard");
    const owner = t.pier.deps.db.select().from(users).where(eq(users.email, "owner@example.com")).get()!;
    expect(owner.isInstanceAdmin).toBe(true);
    expect(owner.passwordHash).toStartWith("$argon2id$");
    const dash = await b.get("/dashboard");
    expect(dash.status).toBe(200);
    expect(dash.text).toContain("owner@example.com");
    expect(dash.text).toContain("instance admin");
    // The person running the instance is not on Free: every capability, no renewal.
    expect(dash.text).toContain("<dt>Plan</dt><dd>Owner</dd>");
    // A brand-new user is welcomed and shown the first steps, not "Welcome back".
    expect(dash.text).toContain("Welcome to Pier");
    expect(dash.text).not.toContain("Welcome back");
    expect(dash.text).toContain("pier login");
  });

  test("a second user is refused without an invite, and nothing is created", async () => {
    const before = countUsers(t.pier.deps);
    const page = await new Browser(t.url).get("/signup");
    expect(page.text).toContain('name="invite"');
    const { res } = await signUp(t, "second@example.com");
    expect(res.status).toBe(403);
    expect(res.text).toContain("needs an invite code");
    const wrong = await signUp(t, "second@example.com", { invite: "inv-notarealcode" });
    expect(wrong.res.status).toBe(403);
    expect(wrong.res.text).toContain("invite code is wrong");
    expect(countUsers(t.pier.deps)).toBe(before);
  });

  test("an invite lets one person in, once; an email-bound invite only that email", async () => {
    const { code } = createInvite(t.pier.deps, {});
    const ok = await signUp(t, "invited@example.com", { invite: code });
    expect(ok.res.status).toBe(303);
    const again = await signUp(t, "another@example.com", { invite: code });
    expect(again.res.status).toBe(403);

    const bound = createInvite(t.pier.deps, { email: "bound@example.com" });
    const other = await signUp(t, "notbound@example.com", { invite: bound.code });
    expect(other.res.status).toBe(403);
    const right = await signUp(t, "bound@example.com", { invite: bound.code });
    expect(right.res.status).toBe(303);
    const second = t.pier.deps.db.select().from(users).where(eq(users.email, "bound@example.com")).get()!;
    expect(second.isInstanceAdmin).toBe(false);
  });

  test("the invite link pre-fills the code", async () => {
    const page = await new Browser(t.url).get("/signup?invite=inv-abc123");
    expect(page.text).toContain('value="inv-abc123"');
  });

  test("bad input re-renders the form with a message and creates nothing", async () => {
    const before = countUsers(t.pier.deps);
    const { code } = createInvite(t.pier.deps, {});
    const short = await signUp(t, "short@example.com", { invite: code, password: "short" });
    expect(short.res.status).toBe(422);
    expect(short.res.text).toContain("at least 10 characters");
    const bad = await signUp(t, "not-an-email", { invite: code });
    expect(bad.res.status).toBe(422);
    const dup = await signUp(t, "owner@example.com", { invite: code });
    expect(dup.res.status).toBe(409);
    expect(countUsers(t.pier.deps)).toBe(before);
  });
});

describe("sign-up modes open and closed", () => {
  test("open: anyone signs up without an invite", async () => {
    const t = await startTestPier({ signupMode: "open" });
    try {
      expect((await signUp(t, "first@example.com")).res.status).toBe(303);
      const page = await new Browser(t.url).get("/signup");
      expect(page.text).not.toContain('name="invite"');
      expect((await signUp(t, "second@example.com")).res.status).toBe(303);
      expect(countUsers(t.pier.deps)).toBe(2);
    } finally {
      await t.stop();
    }
  });

  test("closed: only the very first user; later ones get SIGNUP_CLOSED", async () => {
    const t = await startTestPier({ signupMode: "closed" });
    try {
      expect((await signUp(t, "first@example.com")).res.status).toBe(303);
      const page = await new Browser(t.url).get("/signup");
      expect(page.status).toBe(403);
      expect(page.text).toContain("Sign-up is closed");
      const b = new Browser(t.url);
      await b.get("/signin"); // a CSRF cookie + token from a pre-session page
      const res = await b.submit("/signin", "/signup", { email: "late@example.com", password: PASSWORD });
      expect(res.status).toBe(403);
      expect(res.text).toContain("does not accept new accounts");
      expect(countUsers(t.pier.deps)).toBe(1);
    } finally {
      await t.stop();
    }
  });
});

describe("sign-in, sign-out, limits, CSRF and cookies", () => {
  let t: TestPier;
  let email: string;
  beforeAll(async () => {
    t = await startTestPier({ signupMode: "open" });
    email = "person@example.com";
    await signUp(t, email);
  });
  afterAll(() => t.stop());

  test("sign in sets a host-only, HttpOnly, SameSite=Lax session cookie; sign out ends the session", async () => {
    const b = new Browser(t.url);
    const res = await b.submit("/signin?next=/account/access", "/signin", { email, password: PASSWORD, next: "/account/access" });
    expect(res.status).toBe(303);
    expect(res.location).toBe("/account/access");
    const cookie = res.setCookies.find((c) => c.startsWith("pier_session="))!;
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).toContain("Path=/");
    // No Domain attribute: the cookie is host-only, so sites under the sites domain never get it.
    expect(cookie.toLowerCase()).not.toContain("domain=");
    // Not "remembered": a browser-session cookie without Max-Age, and no Secure on plain http.
    expect(cookie).not.toContain("Max-Age");
    expect(cookie).not.toContain("Secure");
    expect((await b.get("/dashboard")).status).toBe(200);

    const out = await b.submit("/dashboard", "/signout", {});
    expect(out.status).toBe(303);
    expect(out.location).toBe("/signin?signed_out=1");
    expect(out.setCookies.find((c) => c.startsWith("pier_session="))).toContain("Max-Age=0");
    const after = await b.get("/dashboard");
    expect(after.status).toBe(303);
    expect(after.location).toBe("/signin?next=%2Fdashboard");
  });

  test("a cookie with a malformed percent-encoding counts as no cookie (not a server error)", async () => {
    const cookie = "pier_session=%E0%A4%A; pier_csrf=%zz";
    const page = await fetch(`${t.url}/dashboard`, { headers: { cookie }, redirect: "manual" });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/signin?next=%2Fdashboard");
    expect((await fetch(`${t.url}/signin`, { headers: { cookie } })).status).toBe(200);
    const api = await t.api("GET", "/api/v1/buckets", { headers: { cookie } });
    expect(api.status).toBe(401);
    expect(api.body.error.code).toBe("UNAUTHORIZED");
  });

  test("the session token no longer works after sign-out even if a client kept it", async () => {
    const b = new Browser(t.url);
    await b.submit("/signin", "/signin", { email, password: PASSWORD });
    const token = b.cookies.get("pier_session")!;
    await b.submit("/dashboard", "/signout", {});
    const replay = await fetch(`${t.url}/dashboard`, { headers: { cookie: `pier_session=${token}` }, redirect: "manual" });
    expect(replay.status).toBe(303);
  });

  test("remember me gives a 30-day cookie", async () => {
    const b = new Browser(t.url);
    const res = await b.submit("/signin", "/signin", { email, password: PASSWORD, remember: "1" });
    expect(res.setCookies.find((c) => c.startsWith("pier_session="))).toContain(`Max-Age=${30 * 24 * 3600}`);
  });

  test("a wrong password is refused with a clear message and no session", async () => {
    const b = new Browser(t.url);
    const res = await b.submit("/signin", "/signin", { email, password: "wrong password!" });
    expect(res.status).toBe(401);
    expect(res.text).toContain("Email or password is wrong.");
    expect(res.setCookies.some((c) => c.startsWith("pier_session="))).toBe(false);
    const unknown = await b.submit("/signin", "/signin", { email: "nobody@example.com", password: PASSWORD });
    expect(unknown.status).toBe(401);
    expect(unknown.text).toContain("Email or password is wrong.");
  });

  test("a form without the CSRF token, or with another browser's, is refused", async () => {
    const b = new Browser(t.url);
    await b.get("/signin");
    const missing = await b.post("/signin", { email, password: PASSWORD });
    expect(missing.status).toBe(403);
    expect(missing.text).toContain("Reload the page");
    expect(missing.setCookies.some((c) => c.startsWith("pier_session="))).toBe(false);

    const other = new Browser(t.url);
    const otherPage = await other.get("/signin");
    const foreign = /name="csrf" value="([^"]+)"/.exec(otherPage.text)![1]!;
    const crossed = await b.post("/signin", { csrf: foreign, email, password: PASSWORD });
    expect(crossed.status).toBe(403);

    const noCookie = await fetch(`${t.url}/signin`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf: foreign, email, password: PASSWORD }),
    });
    expect(noCookie.status).toBe(403);
    const before = countUsers(t.pier.deps);
    const signup = await b.post("/signup", { email: "csrf@example.com", password: PASSWORD });
    expect(signup.status).toBe(403);
    expect(countUsers(t.pier.deps)).toBe(before);
  });

  test("signed-in forms need the session's CSRF token (sign-out without it keeps the session)", async () => {
    const b = new Browser(t.url);
    await b.submit("/signin", "/signin", { email, password: PASSWORD });
    const res = await b.post("/signout", { csrf: "forged" });
    expect(res.status).toBe(403);
    expect((await b.get("/dashboard")).status).toBe(200);
  });

  test("only same-site paths are followed after sign-in", async () => {
    const b = new Browser(t.url);
    const res = await b.submit("/signin", "/signin", { email, password: PASSWORD, next: "//evil.example/x" });
    expect(res.location).toBe("/dashboard");
  });

  test("too many failed attempts lock the failing address out of that email, even with the right password", async () => {
    const victim = "limited@example.com";
    await signUp(t, victim);
    const b = new Browser(t.url);
    await b.get("/signin");
    for (let i = 0; i < 10; i++) {
      const r = await b.submit("/signin", "/signin", { email: victim, password: `wrong password ${i}` });
      expect(r.status).toBe(401);
    }
    const locked = await b.submit("/signin", "/signin", { email: victim, password: PASSWORD });
    expect(locked.status).toBe(429);
    expect(locked.text).toContain("Too many failed sign-in attempts for this email from your network address");
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    // Other people are not affected, and the lock lifts when the window passes.
    expect((await new Browser(t.url).submit("/signin", "/signin", { email, password: PASSWORD })).status).toBe(303);
    t.clock.advance(16 * 60_000);
    expect((await b.submit("/signin", "/signin", { email: victim, password: PASSWORD })).status).toBe(303);
  });

  test("failed attempts sent side by side are held to the same 10; the right password then waits too", async () => {
    // The limit was checked before each password's argon2id check and the failure counted after
    // it, so guesses sent at once all got checked.
    const victim = "parallel@example.com";
    await signUp(t, victim);
    const b = new Browser(t.url);
    await b.get("/signin");
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => b.submit("/signin", "/signin", { email: victim, password: `wrong guess ${i}` })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBe(10);
    expect(statuses.filter((s) => s === 429).length).toBe(20);
    expect((await b.submit("/signin", "/signin", { email: victim, password: PASSWORD })).status).toBe(429);
  }, 30_000);

  test("signing in while signed in goes straight on; unknown dashboard paths need a session too", async () => {
    const b = new Browser(t.url);
    await b.submit("/signin", "/signin", { email, password: PASSWORD });
    const again = await b.get("/signin?next=/account/access");
    expect(again.status).toBe(303);
    expect(again.location).toBe("/account/access");
    // Signed in, an unknown bucket is the dashboard's not-found page (404), not a sign-in redirect.
    const unknown = await b.get("/dashboard/buckets/anything");
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain("Not found");
    const anon = await new Browser(t.url).get("/dashboard/buckets/anything");
    expect(anon.location).toBe("/signin?next=%2Fdashboard%2Fbuckets%2Fanything");
  });

  test("pages carry no-store, no-framing and a strict content security policy", async () => {
    const res = await new Browser(t.url).get("/signin");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.text).not.toMatch(/<script|https?:\/\/(?!localhost)/);
    expect(res.text).toContain('<label for="email">');
  });

  test("the cleanup job deletes sessions that expired without being seen again", async () => {
    const b = new Browser(t.url);
    await b.submit("/signin", "/signin", { email, password: PASSWORD });
    const live = () => t.pier.deps.db.select().from(sessions).all().length;
    const before = live();
    expect(before).toBeGreaterThan(0);
    createInvite(t.pier.deps, { days: 1 });
    t.clock.advance(40 * 86400_000);
    t.pier.runner.schedulePeriodic();
    await t.pier.runner.drain();
    expect(live()).toBe(0);
    expect(t.pier.deps.db.select().from(invites).all()).toHaveLength(0);
    expect((await b.get("/dashboard")).status).toBe(303);
  });
});

describe("behind an https reverse proxy", () => {
  let t: TestPier;
  beforeAll(async () => {
    t = await startTestPier({ baseUrl: "https://pier.example.test", trustProxy: true });
  });
  afterAll(() => t.stop());

  test("every browser cookie is Secure and __Host- prefixed (session, sudo and pre-session CSRF)", async () => {
    const u = await t.user();
    const b = new Browser(t.url, { host: "pier.example.test", "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.7" });
    const form = await b.get("/signin");
    expect(form.status).toBe(200);
    const csrf = form.setCookies.find((c) => c.startsWith("__Host-pier_csrf="))!;
    expect(csrf).toContain("; Secure");
    expect(csrf).toContain("Path=/");
    expect(csrf.toLowerCase()).not.toContain("domain=");
    const res = await b.submit("/signin", "/signin", { email: u.email, password: u.password });
    expect(res.status).toBe(303);
    expect(res.setCookies.find((c) => c.startsWith("__Host-pier_session="))).toMatch(/; Path=\/; HttpOnly; SameSite=Lax.*; Secure$/);
    expect(res.setCookies.find((c) => c.startsWith("__Host-pier_sudo="))).toMatch(/; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
    expect(res.setCookies.some((c) => c.startsWith("pier_session="))).toBe(false);
    expect((await b.get("/dashboard")).status).toBe(200);
    const out = await b.submit("/dashboard", "/signout", {});
    expect(out.setCookies.find((c) => c.startsWith("__Host-pier_session="))).toContain("; Secure");
  });
});
