// Lockouts anyone could trigger, and gate mail anyone could aim at a stranger (docs/security.md,
// "Accounts, sessions, OAuth and gates"). The server trusts X-Forwarded-For here so that one test
// can speak from many client addresses, as a distributed attacker does.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { users } from "../../src/db/schema";
import * as OTPAuth from "otpauth";
import { TWO_FACTOR_FAILURES_PER_USER } from "../../src/features/accounts/signin-limits";
import { listOutbox } from "../../src/features/mail/outbound";
import { Browser, unescapeHtml } from "../helpers/browser";
import { sessionCookie } from "../helpers/oauth";
import { startTestPier, type TestPier } from "../helpers/pier";
import { publishSite, siteFetch } from "../helpers/sites";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
});
afterAll(() => t.stop());

const form = { "content-type": "application/x-www-form-urlencoded" };
const from = (ip: string) => ({ "x-forwarded-for": ip });
/** A visitor at `ip` asks a require_email site's gate for a code mailed to `email`. */
const askCode = (host: string, email: string, ip: string) =>
  siteFetch(t, host, "/_pier/gate/email", {
    method: "POST",
    headers: { ...form, ...from(ip) },
    body: new URLSearchParams({ email, next: "/" }).toString(),
  });
const gateAttempt = (host: string) => (password: string, ip: string) =>
  siteFetch(t, host, "/_pier/gate/password", {
    method: "POST",
    headers: { ...form, ...from(ip) },
    body: new URLSearchParams({ password, next: "/" }).toString(),
  });

describe("password-gated site", () => {
  test("200 wrong passwords from 20 addresses do not lock out a visitor with the right password", async () => {
    const site = await publishSite(t, { access: "password", password: "open sesame", files: [{ path: "index.html", bytes: "<h1>in</h1>" }] });
    const attempt = gateAttempt(site.host);
    // Over-long guesses are refused without an argon2id check, so the attack runs fast; each
    // still counts as a failed attempt, as any wrong password does.
    const wrong = "w".repeat(201);
    for (let a = 0; a < 20; a++) {
      const statuses = await Promise.all(Array.from({ length: 10 }, () => attempt(wrong, `198.51.100.${a + 1}`).then((r) => r.status)));
      expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    }
    // The attacker's addresses are locked out, even with the right password...
    const attacker = await attempt("open sesame", "198.51.100.1");
    expect(attacker.status).toBe(429);
    expect(Number(attacker.headers.get("retry-after"))).toBeGreaterThan(0);
    // ...the visitor from a fresh address gets in.
    const visitor = await attempt("open sesame", "203.0.113.50");
    expect(visitor.status).toBe(303);
    // While the site is under attack each new address gets fewer guesses (slower spread guessing).
    const fresh = "203.0.113.77";
    const tries: number[] = [];
    for (let i = 0; i < 4; i++) tries.push((await attempt(wrong, fresh)).status);
    expect(tries).toEqual([401, 401, 401, 429]);
  }, 30_000);

  test("guesses from several addresses at once wait for one argon2id check at a time, and past a short queue the gate is busy", async () => {
    // Each check holds a thread of Bun's work pool, the one that also reads files (Bun.file):
    // ten guesses at once held a site file's read ~2.7 s, forty ~11 s, on every site of the process.
    const site = await publishSite(t, { access: "password", password: "open sesame", files: [{ path: "index.html", bytes: "<h1>in</h1>" }] });
    const attempt = gateAttempt(site.host);
    const answers = await Promise.all(Array.from({ length: 14 }, (_, i) => attempt(`wrong-${i}`, `198.51.106.${i % 2}`)));
    const statuses = answers.map((r) => r.status);
    // One check running and 9 waiting; the others are told to come back (not counted as failures).
    expect(statuses.filter((s) => s === 401).length).toBe(10);
    const busy = answers.filter((r) => r.status === 503);
    expect(busy).toHaveLength(4);
    expect(Number(busy[0]!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await busy[0]!.text()).toContain("busy");
    expect((await attempt("open sesame", "198.51.106.0")).status).toBe(303);
  }, 30_000);
});

describe("sign-in", () => {
  test("guesses from many addresses at once wait for one argon2id check at a time, and past a short queue Pier says it is busy", async () => {
    // The same work pool as the gates' checks (D305): a distributed flood of sign-ins held every
    // site file read of the process. Past the queue the page says so, and nothing is counted.
    const browsers = Array.from({ length: 14 }, (_, i) => new Browser(t.url, from(`198.51.107.${i + 1}`)));
    const answers = await Promise.all(browsers.map((b, i) => b.submit("/signin", "/signin", { email: `flood-${i}@example.com`, password: `guess ${i}` })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBe(10);
    const busy = answers.filter((r) => r.status === 503);
    expect(busy).toHaveLength(4);
    expect(Number(busy[0]!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(busy[0]!.text).toContain("checking many passwords");
    const u = await t.user();
    expect((await new Browser(t.url, from("203.0.113.10")).submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  }, 30_000);

  test("a flood of guesses at a site's password gate does not make the owner's sign-in wait behind it", async () => {
    const site = await publishSite(t, { access: "password", password: "open sesame", files: [{ path: "index.html", bytes: "<h1>in</h1>" }] });
    const u = await t.user();
    const owner = new Browser(t.url, from("203.0.113.11"));
    await owner.get("/signin");
    const attempt = gateAttempt(site.host);
    const done: number[] = [];
    const flood = Promise.all(
      Array.from({ length: 14 }, (_, i) =>
        attempt(`wrong-${i}`, `198.51.108.${i % 2}`).then((r) => {
          if (r.status === 401) done.push(performance.now());
          return r.status;
        }),
      ),
    );
    await Bun.sleep(100); // the gate's lane is full by now: one check running, nine waiting
    const signedIn = await owner.submit("/signin", "/signin", { email: u.email, password: u.password });
    const ownerDone = performance.now();
    expect(signedIn.status).toBe(303);
    const statuses = await flood;
    expect(statuses.filter((s) => s === 401).length).toBe(10);
    expect(statuses.filter((s) => s === 503).length).toBe(4);
    // The freed slot alternates between the lanes: the owner's check ran second, not eleventh.
    expect(done.filter((at) => at < ownerDone).length).toBeLessThan(5);
  }, 30_000);

  test("failures on an email from one address do not lock out its owner at another address", async () => {
    const u = await t.user();
    const attacker = new Browser(t.url, from("198.51.100.200"));
    await attacker.get("/signin");
    for (let i = 0; i < 10; i++) expect((await attacker.submit("/signin", "/signin", { email: u.email, password: `guess ${i}` })).status).toBe(401);
    const locked = await attacker.submit("/signin", "/signin", { email: u.email, password: u.password });
    expect(locked.status).toBe(429);
    const owner = new Browser(t.url, from("203.0.113.9"));
    expect((await owner.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  }, 30_000);
});

describe("device approval", () => {
  async function startDevice() {
    const reg = await t.api("POST", "/oauth/register", {
      body: { client_name: "CLI", grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"], token_endpoint_auth_method: "none" },
    });
    const res = await fetch(`${t.url}/oauth/device_authorization`, {
      method: "POST",
      headers: form,
      body: new URLSearchParams({ client_id: reg.body.client_id }).toString(),
    });
    return (await res.json()) as { user_code: string; device_code: string };
  }

  test("another site sending the user's browser to wrong Connection IDs cannot lock the user out", async () => {
    const u = await t.user();
    const cookie = sessionCookie(t, u);
    for (let i = 0; i < 15; i++) {
      const r = await fetch(`${t.url}/oauth/device?user_code=BBBB-BBB${"BCDFGHJKLMNPQ"[i]}`, {
        headers: { cookie, "sec-fetch-site": "cross-site" },
        redirect: "manual",
      });
      expect(r.status).toBe(200);
    }
    const d = await startDevice();
    const own = await fetch(`${t.url}/oauth/device?user_code=${d.user_code}`, { headers: { cookie, "sec-fetch-site": "none" }, redirect: "manual" });
    expect(own.status).toBe(200);
    expect(await own.text()).toContain("Confirm");
  });

  test("wrong codes from one address lock out that address, not the user at another one", async () => {
    const u = await t.user();
    const cookie = sessionCookie(t, u);
    const guess = (ip: string) => fetch(`${t.url}/oauth/device?user_code=BBBB-BBBB`, { headers: { cookie, ...from(ip) }, redirect: "manual" });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await guess("198.51.100.33")).status);
    expect(statuses).toEqual([...Array(10).fill(404), 429]);
    const d = await startDevice();
    const elsewhere = await fetch(`${t.url}/oauth/device?user_code=${d.user_code}`, { headers: { cookie, ...from("203.0.113.33") }, redirect: "manual" });
    expect(elsewhere.status).toBe(200);
  });
});

describe("access-code mail", () => {
  test("a phishing title is quoted, cut short and attributed to the site in the mail", async () => {
    const title = "URGENT: your bank account is locked.\nCall +1 555 0100 now or lose your savings \u202Eforever and ever and ever";
    const site = await publishSite(t, { kind: "preview", access: "require_email", storedTitle: title, files: [{ path: "index.html", bytes: "<h1>x</h1>" }] });
    const r = await siteFetch(t, site.host, "/_pier/gate/email", {
      method: "POST",
      headers: { ...form, ...from("198.51.100.60") },
      body: new URLSearchParams({ email: "stranger@example.com", next: "/" }).toString(),
    });
    expect(r.status).toBe(200);
    const msg = listOutbox(t.pier.deps).find((m) => m.to_address === "stranger@example.com")!;
    expect(msg.subject).not.toContain("\n");
    expect(msg.subject).not.toContain("\u202E");
    expect(msg.subject).toContain(`"URGENT: your bank account is locked. Call +1 555 0100 now o…" (${site.host})`);
    expect(msg.text_body).toContain("chosen by the site's publisher, not by Pier");
    expect(msg.text_body).not.toContain("lose your savings");
  });

  test("code mail is limited per recipient and per site; strangers using a recipient's budget up do not lock them out", async () => {
    const sites = await Promise.all(
      [1, 2].map(() => publishSite(t, { kind: "preview", access: "require_email", title: "Members", files: [{ path: "index.html", bytes: "x" }] })),
    );
    const ask = askCode;
    const victim = "target@example.com";
    const mailsTo = (email: string) => listOutbox(t.pier.deps, 500).filter((m) => m.to_address === email);
    // Five requests naming the victim on one site (from different addresses): five mails...
    for (let i = 0; i < 5; i++) expect((await ask(sites[0]!.host, victim, `198.51.101.${i}`)).status).toBe(200);
    expect(mailsTo(victim)).toHaveLength(5);
    // ...then no more mail from that site, but the victim is not refused: the page asks for the
    // code already sent (it used to be 429 on every email-gated site for an hour).
    const again = await ask(sites[0]!.host, victim, "203.0.113.60");
    expect(again.status).toBe(200);
    const page = await again.text();
    expect(page).toContain("Enter your code");
    expect(mailsTo(victim)).toHaveLength(5);
    const newest = /\b(\d{6})\b/.exec(mailsTo(victim)[0]!.text_body)![1]!;
    const request = /name="request" value="([^"]+)"/.exec(page)![1]!;
    const enter = await siteFetch(t, sites[0]!.host, "/_pier/gate/code", {
      method: "POST",
      headers: { ...form, ...from("203.0.113.60") },
      body: new URLSearchParams({ request, code: newest, next: "/" }).toString(),
    });
    expect(enter.status).toBe(303);
    // Another site still mails the victim a code of its own.
    expect((await ask(sites[1]!.host, victim, "203.0.113.60")).status).toBe(200);
    expect(mailsTo(victim)).toHaveLength(6);

    // Over the budget with no usable code left: 429 with Retry-After, and the page says why.
    const other = "other-target@example.com";
    for (let i = 0; i < 5; i++) await ask(sites[1]!.host, other, `198.51.104.${i}`);
    t.pier.deps.sqlite.run("UPDATE site_email_codes SET used_at = created_at WHERE email = ?", [other]);
    const refused = await ask(sites[1]!.host, other, "198.51.104.99");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-pier-error-code")).toBe("GATE_MAIL_RATE_LIMITED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.text()).toContain("Too many codes were sent");

    // One site mails at most 100 codes an hour, whoever asks.
    const site = sites[0]!;
    let sent = listOutbox(t.pier.deps, 1000).length;
    for (let i = 0; i < 100; i++) await ask(site.host, `visitor${i}@example.com`, `198.51.102.${Math.floor(i / 4)}`);
    const over = await ask(site.host, "one-more@example.com", "198.51.103.1");
    expect(over.status).toBe(429);
    sent = listOutbox(t.pier.deps, 1000).length - sent;
    expect(sent).toBeLessThanOrEqual(100);
  }, 30_000);

  test("plus-tagged variants of an address share its mail budget, and a code sent to one still opens the site", async () => {
    const site = await publishSite(t, { kind: "preview", access: "require_email", files: [{ path: "index.html", bytes: "<h1>tagged</h1>" }] });
    const ask = (email: string, ip: string) => askCode(site.host, email, ip);
    const inbox = () => listOutbox(t.pier.deps, 1000).filter((m) => /^bombed(\+[^@]*)?@example\.com$/.test(m.to_address));
    // bombed+1@, bombed+2@, ...: one inbox, and each variant used to get a budget of its own.
    for (let i = 0; i < 8; i++) expect((await ask(`Bombed+${i}@example.com`, `198.51.105.${i}`)).status).toBeLessThan(500);
    expect(inbox()).toHaveLength(5);
    // The owner of the inbox is not locked out: the newest code mailed to it opens the site.
    const again = await ask("bombed@example.com", "203.0.113.80");
    expect(again.status).toBe(200);
    expect(inbox()).toHaveLength(5);
    const request = /name="request" value="([^"]+)"/.exec(await again.text())![1]!;
    const code = /\b(\d{6})\b/.exec(inbox()[0]!.text_body)![1]!;
    const enter = await siteFetch(t, site.host, "/_pier/gate/code", {
      method: "POST",
      headers: { ...form, ...from("203.0.113.80") },
      body: new URLSearchParams({ request, code, next: "/" }).toString(),
    });
    expect(enter.status).toBe(303);
  });

  test("Gmail's dotted spellings and googlemail.com share one inbox's mail budget", async () => {
    const site = await publishSite(t, { kind: "preview", access: "require_email", files: [{ path: "index.html", bytes: "<h1>dots</h1>" }] });
    const ask = (email: string, ip: string) => askCode(site.host, email, ip);
    const spellings = [
      "dot.ted.user@gmail.com",
      "dotteduser@googlemail.com",
      "d.o.t.t.e.d.user@gmail.com",
      "dotted.user+x@gmail.com",
      "Dot.Ted.User@GMail.com",
      "d.ottedu.ser@gmail.com",
      "dotteduser@gmail.com",
    ];
    for (const [i, email] of spellings.entries()) expect((await ask(email, `198.51.106.${i}`)).status).toBeLessThan(500);
    const inbox = listOutbox(t.pier.deps, 1000).filter(
      (m) => /@(gmail|googlemail)\.com$/.test(m.to_address) && m.to_address.replaceAll(".", "").startsWith("dotteduser"),
    );
    expect(inbox).toHaveLength(5);
    // Another provider's dots are its own business: a.b@ and ab@ elsewhere are two inboxes.
    for (const [i, email] of ["dot.ted@example.net", "dotted@example.net"].entries()) expect((await ask(email, `198.51.107.${i}`)).status).toBe(200);
    expect(listOutbox(t.pier.deps, 1000).filter((m) => m.to_address.endsWith("@example.net"))).toHaveLength(2);
  });
});

/** A user signed in from `ip` who turned two-factor on (a code step later), and their codes. */
async function withTwoFactor(ip: string) {
  const u = await t.user();
  const owner = new Browser(t.url, from(ip));
  expect((await owner.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  const enroll = await owner.submit("/account/security", "/account/security/totp/enroll", {});
  const totp = OTPAuth.URI.parse(unescapeHtml(/href="(otpauth:\/\/[^"]+)"/.exec(enroll.text)![1]!)) as OTPAuth.TOTP;
  const code = () => totp.generate({ timestamp: t.clock.now().getTime() });
  expect((await owner.submit("/account/security", "/account/security/totp/confirm", { code: code() })).status).toBe(200);
  t.clock.advance(30_000);
  return { u, owner, code };
}

describe("two-factor sign-in", () => {
  test("a password holder spreading code guesses over many addresses gets only a few guesses per account", async () => {
    const { u, code } = await withTwoFactor("203.0.113.30");

    // The attacker knows the password; each address used to get 10 code guesses of its own.
    const wrong = () => (code() === "000000" ? "111111" : "000000");
    let wrongCodesChecked = 0;
    let passwordStepsRefused = 0;
    const pending: Browser[] = [];
    for (let a = 0; a < 10; a++) {
      const b = new Browser(t.url, from(`198.51.100.${60 + a}`));
      const signin = await b.submit("/signin", "/signin", { email: u.email, password: u.password });
      if (signin.status === 429) {
        passwordStepsRefused++;
        continue;
      }
      expect(signin.status).toBe(303);
      pending.push(b);
      for (let i = 0; i < 2; i++) {
        const r = await b.submit("/signin/two-factor", "/signin/two-factor", { code: wrong() });
        if (r.text.includes("did not match")) wrongCodesChecked++;
      }
    }
    expect(wrongCodesChecked).toBe(TWO_FACTOR_FAILURES_PER_USER); // was 20
    expect(passwordStepsRefused).toBeGreaterThan(0);
    // Past the allowance even the right code on a pending sign-in is refused (password asked again).
    const late = await pending[0]!.submit("/signin/two-factor", "/signin/two-factor", { code: code() });
    expect(late.setCookies.some((c) => c.startsWith("pier_session="))).toBe(false);
    expect(late.text).toContain("Too many wrong codes");

    // After the window the owner signs in with the password and the right code.
    t.clock.advance(16 * 60_000);
    const back = new Browser(t.url, from("203.0.113.30"));
    expect((await back.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
    const done = await back.submit("/signin/two-factor", "/signin/two-factor", { code: code() });
    expect(done.status).toBe(303);
    expect(done.setCookies.some((c) => c.startsWith("pier_session="))).toBe(true);
  }, 30_000);
});

describe("turning two-factor off", () => {
  test("a session holder who knows the password gets only the account's few code guesses, then the right code waits too", async () => {
    const { u, owner, code } = await withTwoFactor("203.0.113.31");

    // Whoever holds this signed-in browser (in sudo mode) guesses the code that turns it off:
    // unlimited before, so a million codes were a matter of minutes at the server's pace.
    const wrong = () => (code() === "000000" ? "111111" : "000000");
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await owner.submit("/account/security", "/account/security/totp/disable", { code: wrong() })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const right = await owner.submit("/account/security", "/account/security/totp/disable", { code: code() });
    expect(right.status).toBe(429);
    expect(right.text).toContain("Too many wrong two-factor codes");
    const row = t.pier.deps.db.select().from(users).where(eq(users.email, u.email)).get()!;
    expect(row.totpEnabledAt).not.toBeNull();
  }, 30_000);
});

describe("agent email codes", () => {
  const ask = (email: string, ip: string) => t.api("POST", "/api/v1/agent_auth/request_code", { headers: from(ip), body: { email } });
  const verify = (email: string, code: string, ip: string) => t.api("POST", "/api/v1/agent_auth/verify_code", { headers: from(ip), body: { email, code } });
  const codesTo = (email: string) =>
    listOutbox(t.pier.deps, 500)
      .filter((m) => m.to_address === email && m.kind === "agent-login-code")
      .map((m) => /\b(\d{8})\b/.exec(m.text_body)![1]!);
  /** The codes mailed to `email` once there are `n` (mail goes out after the response), or those there are after 20 s. */
  const codesArrive = async (email: string, n: number) => {
    for (const end = Date.now() + 20_000; codesTo(email).length < n && Date.now() < end; ) await Bun.sleep(20);
    return codesTo(email);
  };

  test("strangers' wrong codes and code requests do not lock the owner out of the email-code flow", async () => {
    const u = await t.user();
    // The stranger asks for codes for the victim until the old per-address quota (5 an hour) is used up...
    for (let i = 0; i < 5; i++) expect((await ask(u.email, "198.51.100.150")).status).toBe(200);
    expect(await codesArrive(u.email, 5)).toHaveLength(5);
    // ...and more from the same client mail nothing, answering as before.
    expect((await ask(u.email, "198.51.100.150")).status).toBe(200);
    await Bun.sleep(20);
    expect(codesTo(u.email)).toHaveLength(5);

    // The owner still gets a code of their own.
    expect((await ask(u.email, "203.0.113.40")).status).toBe(200);
    const mine = (await codesArrive(u.email, 6))[0]!;
    expect(codesTo(u.email)).toHaveLength(6);

    // Wrong guesses from several addresses (5 used to burn the code) lock out only those addresses.
    const wrong = mine === "00000000" ? "11111111" : "00000000";
    for (const ip of ["198.51.100.151", "198.51.100.152", "198.51.100.153"]) {
      for (let i = 0; i < 5; i++) expect((await verify(u.email, wrong, ip)).body.error.code).toBe("INVALID_CODE");
      expect((await verify(u.email, mine, ip)).status).toBe(429);
    }
    const ok = await verify(u.email, mine, "203.0.113.40");
    expect(ok.status).toBe(200);
    expect(ok.body.data.api_key).toMatch(/^pier_/);
  });
});

describe("gate redirects", () => {
  test("a site gate's next follows Pier's sign-in rule: backslashes, control characters, non-ASCII and overlong paths go to /", async () => {
    const site = await publishSite(t, { access: "password", password: "open sesame", files: [{ path: "index.html", bytes: "<h1>in</h1>" }] });
    // A browser's next is the address it asked for, always percent-encoded; a raw U+2028 made
    // the Location header throw (a 500 after the right password), a raw é was sent unencoded.
    for (const next of ["/x\\..\\\\evil.example", "/\u007f/evil.example", `/${"a".repeat(3000)}`, "/\t/evil.example", "/\u2028x", "/caf\u00e9", "/\u0085"]) {
      const r = await siteFetch(t, site.host, "/_pier/gate/password", {
        method: "POST",
        headers: { ...form, ...from("203.0.113.70") },
        body: new URLSearchParams({ password: "open sesame", next }).toString(),
      });
      expect(r.status).toBe(303);
      expect(r.headers.get("location")).toBe("/");
    }
  });
});
