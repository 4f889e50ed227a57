// Cloudflare Turnstile for forms whose configuration says turnstile: "auto", with the operator's
// keys set: the widget and Cloudflare's script appear only on that site's pages, and every post
// is checked at siteverify, here a loopback stand-in answering as Cloudflare documents, and a
// token counts only on the host it was solved on (the site key is the whole instance's).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { filledTimer, solveFormChallenge } from "../../helpers/forms";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";

/** A token the stand-in confirms as solved on `host` (Cloudflare's answer names the page's hostname). */
const solvedOn = (host: string) => `XXXX.DUMMY.TOKEN.XXXX@${host}`;
/** A token the stand-in confirms with no hostname in its answer. */
const NO_HOSTNAME = "XXXX.DUMMY.TOKEN.XXXX";
const seen: Array<Record<string, string>> = [];
let cloudflare: ReturnType<typeof Bun.serve>;
let t: TestPier;
let withTurnstile: PublishedSite;
let without: PublishedSite;
let another: PublishedSite;
let preview: PublishedSite;
let ip = 0;

beforeAll(async () => {
  // https://developers.cloudflare.com/turnstile/get-started/server-side-validation/
  cloudflare = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const form = Object.fromEntries(new URLSearchParams(await req.text()));
      seen.push(form);
      const response = form.response ?? "";
      const ok = form.secret === "test-secret" && response.startsWith(NO_HOSTNAME);
      const hostname = response.startsWith(`${NO_HOSTNAME}@`) ? response.slice(NO_HOSTNAME.length + 1) : undefined;
      return Response.json(
        ok
          ? { success: true, challenge_ts: new Date().toISOString(), hostname, "error-codes": [] }
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
  another = await publishSite(t, { files: [{ path: "index.html", bytes: "<!doctype html><html><body><h1>A</h1></body></html>" }] });
  preview = await publishSite(t, { kind: "preview", files: [{ path: "index.html", bytes: "<!doctype html><html><body><h1>P</h1></body></html>" }] });
  for (const [s, turnstile] of [
    [withTurnstile, "auto"],
    [without, "off"],
    [another, "auto"],
    [preview, "auto"],
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
    const token = solvedOn(withTurnstile.host);
    const r = await post(withTurnstile, { "cf-turnstile-response": token });
    expect(r.status).toBe(201);
    expect(seen).toEqual([{ secret: "test-secret", response: token, remoteip: `192.0.2.${ip}` }]);
  });

  test("a token solved on another site of the instance, or confirmed for no host, is refused; a preview's own host counts", async () => {
    for (const token of [solvedOn(another.host), solvedOn(preview.host), solvedOn(`${withTurnstile.host}.evil.example`), NO_HOSTNAME]) {
      const r = await post(withTurnstile, { "cf-turnstile-response": token });
      expect(r.status).toBe(403);
      expect((await r.json()).error.details.challenge).toBe("turnstile");
    }
    const list = await t.api("GET", `/api/v1/buckets/${withTurnstile.pub.bucketId}/form_submissions`, { key: withTurnstile.user.key });
    expect(list.body.data.form_submissions.length).toBe(1); // the one accepted above
    // A preview is a host of its own: a token solved there is good there, and only there.
    expect(preview.host.startsWith("preview-")).toBe(true);
    expect((await post(preview, { "cf-turnstile-response": solvedOn(withTurnstile.host) })).status).toBe(403);
    expect((await post(preview, { "cf-turnstile-response": solvedOn(preview.host.toUpperCase()) })).status).toBe(201);
    expect((await post(another, { "cf-turnstile-response": solvedOn(another.host) })).status).toBe(201);
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
