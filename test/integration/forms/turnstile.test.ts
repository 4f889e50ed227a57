// Cloudflare Turnstile for forms whose configuration says turnstile: "auto", with the operator's
// keys set: the widget and Cloudflare's script appear only on that site's pages, and every post
// is checked at siteverify, here a loopback stand-in answering as Cloudflare documents.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { filledTimer, solveFormChallenge } from "../../helpers/forms";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";

const GOOD_TOKEN = "XXXX.DUMMY.TOKEN.XXXX";
const seen: Array<Record<string, string>> = [];
let cloudflare: ReturnType<typeof Bun.serve>;
let t: TestPier;
let withTurnstile: PublishedSite;
let without: PublishedSite;
let ip = 0;

beforeAll(async () => {
  // https://developers.cloudflare.com/turnstile/get-started/server-side-validation/
  cloudflare = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const form = Object.fromEntries(new URLSearchParams(await req.text()));
      seen.push(form);
      const ok = form.secret === "test-secret" && form.response === GOOD_TOKEN;
      return Response.json(
        ok
          ? { success: true, challenge_ts: new Date().toISOString(), hostname: "example.com", "error-codes": [] }
          : { success: false, "error-codes": ["invalid-input-response"] },
      );
    },
  });
  t = await startTestPier({
    trustProxy: true,
    turnstileSiteKey: "test-site-key",
    turnstileSecretKey: "test-secret",
    turnstileVerifyUrl: `http://127.0.0.1:${cloudflare.port}/turnstile/v0/siteverify`,
  });
  withTurnstile = await publishSite(t, { files: [{ path: "index.html", bytes: "<!doctype html><html><body><h1>T</h1></body></html>" }] });
  without = await publishSite(t, { files: [{ path: "index.html", bytes: "<!doctype html><html><body><h1>N</h1></body></html>" }] });
  for (const [s, turnstile] of [
    [withTurnstile, "auto"],
    [without, "off"],
  ] as const) {
    const r = await t.api("PATCH", `/api/v1/buckets/${s.pub.bucketId}`, {
      key: s.user.key,
      body: { bucket: { metadata: { publication_forms: { forms: [{ name: "contact" }], turnstile } } } },
    });
    if (r.status !== 200) throw new Error(`configure: ${r.status}`);
  }
});
afterAll(async () => {
  await t?.stop();
  cloudflare?.stop(true);
});

async function post(s: PublishedSite, body: Record<string, string>, json = true) {
  const altcha = json ? await solveFormChallenge(t, s.host) : "";
  return siteFetch(t, s.host, "/_pier/form/contact", {
    method: "POST",
    body: new URLSearchParams({
      email: "v@example.com",
      message: "hello",
      _pier_started: filledTimer(t, s.pub.id, "contact"),
      ...(altcha ? { altcha } : {}),
      ...body,
    }).toString(),
    headers: {
      origin: `http://${s.host}`,
      "content-type": "application/x-www-form-urlencoded",
      "x-forwarded-for": `192.0.2.${++ip}`,
      ...(json ? { accept: "application/json" } : {}),
    },
  });
}

describe("Turnstile", () => {
  test("only the site whose forms ask for it loads Cloudflare's script and widget", async () => {
    const page = await (await siteFetch(t, withTurnstile.host, "/")).text();
    expect(page).toContain('<div class="cf-turnstile" data-sitekey="test-site-key">');
    expect(page).toContain('<script src="https://challenges.cloudflare.com/turnstile/v0/api.js" async defer></script>');
    const plain = await (await siteFetch(t, without.host, "/")).text();
    expect(plain).toContain('data-pier-form="contact"');
    expect(plain).not.toContain("challenges.cloudflare.com");
    expect(plain).not.toContain("cf-turnstile");
  });

  test("a post without a Turnstile token, or with one Cloudflare rejects, is refused", async () => {
    const none = await post(withTurnstile, {});
    expect(none.status).toBe(403);
    expect((await none.json()).error.details.challenge).toBe("turnstile");
    const bad = await post(withTurnstile, { "cf-turnstile-response": "forged" });
    expect(bad.status).toBe(403);
    expect((await bad.json()).error.code).toBe("FORM_CHALLENGE_FAILED");
    const list = await t.api("GET", `/api/v1/buckets/${withTurnstile.pub.bucketId}/form_submissions`, { key: withTurnstile.user.key });
    expect(list.body.data.form_submissions.length).toBe(0);
  });

  test("a token Cloudflare confirms is accepted; siteverify got the secret, the token and the visitor's address", async () => {
    seen.length = 0;
    const r = await post(withTurnstile, { "cf-turnstile-response": GOOD_TOKEN });
    expect(r.status).toBe(201);
    expect(seen).toEqual([{ secret: "test-secret", response: GOOD_TOKEN, remoteip: `192.0.2.${ip}` }]);
  });

  test("a site with turnstile off never calls Cloudflare", async () => {
    seen.length = 0;
    expect((await post(without, {})).status).toBe(201);
    expect(seen.length).toBe(0);
  });

  test("the form shown again (missing field) lets Turnstile's script and frame through its CSP, and only there", async () => {
    const r = await post(withTurnstile, { message: "" }, false);
    expect(r.status).toBe(422);
    const csp = r.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self' https://challenges.cloudflare.com");
    expect(csp).toContain("frame-src https://challenges.cloudflare.com");
    expect(await r.text()).toContain('class="cf-turnstile"');
    const plain = await post(without, { message: "" }, false);
    expect(plain.headers.get("content-security-policy")).not.toContain("cloudflare");
  });
});
