// Two-factor (TOTP) enrollment, sign-in with the second step, replay and disable, over HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import * as OTPAuth from "otpauth";
import { sessions, users } from "../../../src/db/schema";
import { Browser, unescapeHtml } from "../../helpers/browser";
import { startTestPier, type TestPier } from "../../helpers/pier";

const PASSWORD = "a long enough password";
const email = "twofactor@example.com";
let t: TestPier;
let secret: string;

const code = (offsetSteps = 0) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" }).generate({
    timestamp: t.clock.now().getTime() + offsetSteps * 30_000,
  });
const nextStep = () => t.clock.advance(30_000);

beforeAll(async () => {
  t = await startTestPier({ signupMode: "open" });
  await new Browser(t.url).submit("/signup", "/signup", { email, password: PASSWORD });
});
afterAll(() => t.stop());

async function signedIn(): Promise<Browser> {
  const b = new Browser(t.url);
  const res = await b.submit("/signin", "/signin", { email, password: PASSWORD });
  expect(res.status).toBe(303);
  return b;
}

describe("two-factor authentication", () => {
  test("enroll: the page shows the set-up key and otpauth URI; a wrong code keeps it off; the right one turns it on", async () => {
    const b = await signedIn();
    const off = await b.get("/account/security");
    expect(off.text).toContain("Set up two-factor");
    const enroll = await b.submit("/account/security", "/account/security/totp/enroll", {});
    expect(enroll.status).toBe(200);
    const uri = unescapeHtml(/href="(otpauth:\/\/[^"]+)"/.exec(enroll.text)![1]!);
    const parsed = OTPAuth.URI.parse(uri) as OTPAuth.TOTP;
    expect(parsed.issuer).toContain("Pier");
    expect(parsed.label).toBe(email);
    secret = parsed.secret.base32;
    expect(enroll.text).toContain(secret);
    expect(enroll.text).toMatch(/<div class="qr" role="img"[^>]*><svg[^>]*>/);

    // The seed is sealed at rest, never stored in the clear.
    const row = t.pier.deps.db.select().from(users).where(eq(users.email, email)).get()!;
    expect(row.totpSealed).toStartWith("v1.");
    expect(row.totpSealed).not.toContain(secret);
    expect(row.totpEnabledAt).toBeNull();

    // Reloading the page during set-up shows the same key.
    expect((await b.get("/account/security")).text).toContain(secret);

    const wrong = await b.submit("/account/security", "/account/security/totp/confirm", { code: "000000" === code() ? "111111" : "000000" });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain("did not match");
    const ok = await b.submit("/account/security", "/account/security/totp/confirm", { code: code() });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain("Two-factor authentication is on.");
    expect(t.pier.deps.db.select().from(users).where(eq(users.email, email)).get()!.totpEnabledAt).not.toBeNull();
  });

  test("sign-in asks for the code after the password; no session until it is right", async () => {
    nextStep();
    const b = new Browser(t.url);
    const first = await b.submit("/signin", "/signin", { email, password: PASSWORD, next: "/account/access" });
    expect(first.status).toBe(303);
    expect(first.location).toBe("/signin/two-factor?next=%2Faccount%2Faccess");
    expect(first.setCookies.some((c) => c.startsWith("pier_session="))).toBe(false);
    expect(first.setCookies.find((c) => c.startsWith("pier_2fa="))).toContain("HttpOnly");
    expect((await b.get("/dashboard")).status).toBe(303);

    const page = await b.get(first.location!);
    expect(page.text).toContain('autocomplete="one-time-code"');
    const bad = await b.submit(first.location!, "/signin/two-factor", { code: "12345x", next: "/account/access" });
    expect(bad.status).toBe(401);
    expect(bad.text).toContain("did not match");

    const good = await b.submit(first.location!, "/signin/two-factor", { code: code(), next: "/account/access" });
    expect(good.status).toBe(303);
    expect(good.location).toBe("/account/access");
    expect(good.setCookies.find((c) => c.startsWith("pier_session="))).toContain("HttpOnly");
    expect((await b.get("/dashboard")).status).toBe(200);
  });

  test("a code is accepted once: replaying it in another browser fails", async () => {
    nextStep();
    const a = new Browser(t.url);
    await a.submit("/signin", "/signin", { email, password: PASSWORD });
    const c = code();
    expect((await a.submit("/signin/two-factor", "/signin/two-factor", { code: c })).status).toBe(303);
    const b = new Browser(t.url);
    await b.submit("/signin", "/signin", { email, password: PASSWORD });
    expect((await b.submit("/signin/two-factor", "/signin/two-factor", { code: c })).status).toBe(401);
  });

  test("a user disabled between the password and the code gets no session, and none wakes up when enabled again", async () => {
    nextStep();
    const b = new Browser(t.url);
    expect((await b.submit("/signin", "/signin", { email, password: PASSWORD })).status).toBe(303);
    const userId = t.pier.deps.db.select().from(users).where(eq(users.email, email)).get()!.id;
    const sessionsOf = () => t.pier.deps.db.select().from(sessions).where(eq(sessions.userId, userId)).all().length;
    const before = sessionsOf();
    // This user is the instance's first (an admin, whom adminSetDisabled refuses): set the mark as it does.
    const setDisabled = (at: string | null) => t.pier.deps.db.update(users).set({ disabledAt: at }).where(eq(users.id, userId)).run();
    setDisabled(new Date().toISOString());
    try {
      const res = await b.submit("/signin/two-factor", "/signin/two-factor", { code: code() });
      expect(res.status).toBe(403);
      expect(res.text).toContain("disabled");
      expect(res.setCookies.some((c) => c.startsWith("pier_session="))).toBe(false);
      expect(sessionsOf()).toBe(before);
    } finally {
      setDisabled(null);
    }
    expect((await b.get("/dashboard")).status).toBe(303); // still signed out
  });

  test("the second step without a password step (or with a forged token) starts over", async () => {
    const b = new Browser(t.url);
    expect((await b.get("/signin/two-factor")).status).toBe(303);
    b.cookies.set("pier_2fa", "usr_x.1.99999999999999.forged");
    const res = await b.submit("/signin", "/signin/two-factor", { code: code() });
    expect(res.status).toBe(401);
    expect(res.text).toContain("Enter your email and password again");
  });

  test("turning two-factor on signs out the user's other browsers; this one, API keys and other users stay", async () => {
    const u = await t.user();
    const other = await t.user();
    const signIn = async (who: { email: string; password: string }) => {
      const b = new Browser(t.url);
      expect((await b.submit("/signin", "/signin", { email: who.email, password: who.password })).status).toBe(303);
      return b;
    };
    // `stolen` stands for a session cookie someone else holds; `mine` is where the user turns two-factor on.
    const mine = await signIn(u);
    const stolen = await signIn(u);
    const stranger = await signIn(other);
    expect((await stolen.get("/dashboard")).status).toBe(200);

    const enroll = await mine.submit("/account/security", "/account/security/totp/enroll", {});
    const seed = (OTPAuth.URI.parse(unescapeHtml(/href="(otpauth:\/\/[^"]+)"/.exec(enroll.text)![1]!)) as OTPAuth.TOTP).secret;
    const current = new OTPAuth.TOTP({ secret: seed, digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: t.clock.now().getTime() });
    // Set-up alone changes nothing at sign-in, so it ends nothing.
    expect((await stolen.get("/dashboard")).status).toBe(200);

    const on = await mine.submit("/account/security", "/account/security/totp/confirm", { code: current });
    expect(on.status).toBe(200);
    const gone = await stolen.get("/dashboard");
    expect(gone.status).toBe(303);
    expect(gone.location).toStartWith("/signin");
    expect(on.text).toContain("Every other browser signed in as you was signed out.");
    expect((await mine.get("/dashboard")).status).toBe(200);
    expect((await stranger.get("/dashboard")).status).toBe(200);
    expect((await t.api("GET", "/api/v1/buckets", { key: u.key })).status).toBe(200);
  });

  test("turning two-factor off needs a current code", async () => {
    nextStep();
    const b = new Browser(t.url);
    await b.submit("/signin", "/signin", { email, password: PASSWORD });
    await b.submit("/signin/two-factor", "/signin/two-factor", { code: code() });
    const refused = await b.submit("/account/security", "/account/security/totp/disable", { code: "999999" === code() ? "888888" : "999999" });
    expect(refused.status).toBe(401);
    expect(t.pier.deps.db.select().from(users).where(eq(users.email, email)).get()!.totpEnabledAt).not.toBeNull();
    nextStep();
    const ok = await b.submit("/account/security", "/account/security/totp/disable", { code: code() });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain("Two-factor authentication is off.");
    const row = t.pier.deps.db.select().from(users).where(eq(users.email, email)).get()!;
    expect(row.totpSealed).toBeNull();
    // Password alone signs in again.
    expect((await new Browser(t.url).submit("/signin", "/signin", { email, password: PASSWORD })).location).toBe("/dashboard");
  });
});
