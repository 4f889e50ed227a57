// browser_login_link: a key gets a one-time link; the browser confirms with a button (so link
// scanners cannot use it), is signed in and lands on the requested page. Once only, 5 minutes,
// never for two-factor users.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { users } from "../../../src/db/schema";
import { hiddenFields } from "../../helpers/oauth";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t.stop());

const local = (url: string) => url.replace(t.pier.deps.urls.baseUrl, t.url);
const cookieOf = (res: Response, name: string) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .find((c) => c.startsWith(`${name}=`));

async function open(url: string) {
  const page = await fetch(local(url), { redirect: "manual" });
  return { page, html: await page.text(), csrfCookie: cookieOf(page, "pier_csrf") };
}

describe("browser login link", () => {
  test("signs the browser in once and lands on redirect_path", async () => {
    const u = await t.user();
    const r = await t.api("POST", "/api/v1/agent_auth/browser_login_link", { key: u.key, body: { redirect_path: "/account/access" } });
    expect(r.status).toBe(200);
    const url = r.body.data.url as string;
    expect(url).toStartWith(`${t.pier.deps.urls.baseUrl}/login_link/`);
    expect(r.body.data).toMatchObject({ redirect_path: "/account/access", one_time: true });
    const { page, html, csrfCookie } = await open(url);
    expect(page.status).toBe(200);
    expect(html).toContain("Continue to Pier");
    expect(html).toContain(u.email);
    const post = await fetch(local(url), {
      method: "POST",
      redirect: "manual",
      body: new URLSearchParams(hiddenFields(html)),
      headers: { cookie: csrfCookie!, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(post.status).toBe(303);
    expect(post.headers.get("location")).toBe("/account/access");
    const session = cookieOf(post, "pier_session")!;
    const access = await fetch(`${t.url}/dashboard/account/keys`, { headers: { cookie: session }, redirect: "manual" });
    expect(access.status).toBe(200);

    const again = await fetch(local(url), {
      method: "POST",
      redirect: "manual",
      body: new URLSearchParams(hiddenFields(html)),
      headers: { cookie: csrfCookie!, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(again.status).toBe(404);
    expect(cookieOf(again, "pier_session")).toBeUndefined();
  });

  test("a forged form, an expired link, a bad redirect path and two-factor users are refused", async () => {
    const u = await t.user();
    const link = (await t.api("POST", "/api/v1/agent_auth/browser_login_link", { key: u.key, body: {} })).body.data;
    expect(link.redirect_path).toBe("/dashboard");
    const forged = await fetch(local(link.url), {
      method: "POST",
      redirect: "manual",
      body: new URLSearchParams({ csrf: "x" }),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(forged.status).toBe(403);
    expect(cookieOf(forged, "pier_session")).toBeUndefined();
    expect((await open(link.url)).page.status).toBe(200); // still usable
    t.clock.advance(301_000);
    const late = await open(link.url);
    expect(late.page.status).toBe(404);
    expect(late.html).toContain("invalid, expired or already used");

    for (const path of ["//evil.example/x", "https://evil.example/", "dashboard"]) {
      const bad = await t.api("POST", "/api/v1/agent_auth/browser_login_link", { key: u.key, body: { redirect_path: path } });
      expect(bad.status).toBe(422);
    }
    t.pier.deps.db.update(users).set({ totpEnabledAt: new Date().toISOString(), totpSealed: "v1.x.y.z" }).where(eq(users.id, u.userId)).run();
    const twoFactor = await t.api("POST", "/api/v1/agent_auth/browser_login_link", { key: u.key, body: {} });
    expect(twoFactor.status).toBe(403);
    expect(twoFactor.body.error.details.reason).toBe("two_factor");
    expect((await t.api("POST", "/api/v1/agent_auth/browser_login_link", { body: {} })).status).toBe(401);
  });
});
