// Sign-up as an attack surface (docs/security.md, "Accounts, sessions, OAuth and gates"): who
// may learn which emails have users, and what one address can make the server spend. The server
// trusts X-Forwarded-For here so that each test speaks from its own client address.
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { createInvite } from "../../src/features/accounts/invites";
import { countUsers } from "../../src/features/accounts/service";
import { defaultAttemptLimits, SigninGuard } from "../../src/features/accounts/signin-limits";
import { Browser } from "../helpers/browser";
import { startTestPier, type TestPier } from "../helpers/pier";

const PASSWORD = "a long enough password";
const from = (ip: string) => ({ "x-forwarded-for": ip });

async function signUp(t: TestPier, ip: string, email: string, extra: Record<string, string> = {}) {
  return new Browser(t.url, from(ip)).submit("/signup", "/signup", { email, password: PASSWORD, ...extra });
}

describe("invite mode (the default)", () => {
  let t: TestPier;
  beforeAll(async () => {
    t = await startTestPier({ trustProxy: true });
    await t.user({ email: "taken@example.com" });
  });
  afterAll(() => t.stop());

  test("without a valid invite, a taken email and a free one get the same answer", async () => {
    const taken = await signUp(t, "198.51.100.10", "taken@example.com", { invite: "inv-notarealcode" });
    const free = await signUp(t, "198.51.100.10", "nobody-yet@example.com", { invite: "inv-notarealcode" });
    expect(free.status).toBe(403);
    expect(free.text).toContain("invite code is wrong");
    // Before, the taken email answered 409 "A user with this email already exists."
    expect([taken.status, taken.text.includes("already exists")]).toEqual([403, false]);
    expect(taken.text).toContain("invite code is wrong");
  });

  test("a sign-up that is refused anyway costs no argon2id hash", async () => {
    // Counts the hashes (a wrong invite must not buy 64 MiB and a tenth of a second of CPU).
    const hash = spyOn(Bun.password, "hash");
    try {
      await refusedWithoutHashing(hash);
    } finally {
      hash.mockRestore();
    }
  });

  async function refusedWithoutHashing(hash: { mock: { calls: unknown[] } }) {
    const before = countUsers(t.pier.deps);
    expect((await signUp(t, "198.51.100.11", "someone@example.com", { invite: "inv-notarealcode" })).status).toBe(403);
    expect((await signUp(t, "198.51.100.11", "someone@example.com")).status).toBe(403);
    const { code } = createInvite(t.pier.deps, { email: "bound@example.com" });
    expect((await signUp(t, "198.51.100.11", "someone@example.com", { invite: code })).status).toBe(403);
    // A valid invite and a taken email: told (the invite holder may sign up anyway), not hashed.
    const open = createInvite(t.pier.deps, {});
    expect((await signUp(t, "198.51.100.11", "taken@example.com", { invite: open.code })).status).toBe(409);
    expect(hash.mock.calls.length).toBe(0);
    expect(countUsers(t.pier.deps)).toBe(before);
    // The invite was not used up by the refused attempt: its holder still signs up with it.
    expect((await signUp(t, "198.51.100.11", "holder@example.com", { invite: open.code })).status).toBe(303);
    expect(hash.mock.calls.length).toBe(1);
  }
});

describe("open mode", () => {
  let t: TestPier;
  beforeAll(async () => {
    t = await startTestPier({ trustProxy: true, signupMode: "open" });
    await t.user();
  });
  afterAll(() => t.stop());

  test("sign-ups sent side by side from one address are held to the hourly allowance", async () => {
    // A small allowance for this test; the guard is read from deps on every request.
    t.pier.deps.signinGuard = new SigninGuard({ ...defaultAttemptLimits, signupsPerIpHour: 3 });
    const before = countUsers(t.pier.deps);
    const browsers = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const b = new Browser(t.url, from("198.51.100.20"));
        return { b, page: await b.get("/signup") };
      }),
    );
    const statuses = await Promise.all(
      browsers.map(({ b, page }, i) =>
        b
          .post("/signup", { csrf: /name="csrf" value="([^"]+)"/.exec(page.text)![1]!, email: `burst${i}@example.com`, password: PASSWORD })
          .then((r) => r.status),
      ),
    );
    // Before, every one passed the check while the first ones were still being hashed.
    expect(statuses.filter((s) => s === 303).length).toBe(3);
    expect(statuses.filter((s) => s === 429).length).toBe(5);
    expect(countUsers(t.pier.deps)).toBe(before + 3);
  }, 30_000);
});
