// Attacks on the visitor form endpoint, each reproduced over real HTTP and shown to store nothing:
// cross-site posts, oversized and mistyped bodies, bots (honeypot, too fast, forged timer), floods.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { formSubmissions } from "../../src/db/schema";
import { FORM_POSTS_PER_FORM_MINUTE, FORM_POSTS_PER_IP_MINUTE, MAX_FILL_MS, MIN_FILL_MS, startedToken } from "../../src/features/forms";
import { startTestPier, type TestPier } from "../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../helpers/sites";
import { filledTimer, solveFormChallenge } from "../helpers/forms";

let t: TestPier;
let site: PublishedSite;
let ip = 0;
beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
  site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>Home</h1>" }] });
  const r = await t.api("PATCH", `/api/v1/buckets/${site.pub.bucketId}`, {
    key: site.user.key,
    body: { bucket: { metadata: { publication_forms: { forms: [{ name: "contact" }, { name: "feedback" }] } } } },
  });
  expect(r.status).toBe(200);
});
afterAll(() => t?.stop());
// Each test starts with full rate-limit buckets.
beforeEach(() => t.clock.advance(120_000));

const stored = () => t.pier.deps.db.select().from(formSubmissions).where(eq(formSubmissions.bucketId, site.pub.bucketId)).all().length;

/** A plain post as Pier's form sends it: with a fill timer old enough, unless the test brings its own. */
function post(body: string, headers: Record<string, string> = {}, form: "contact" | "feedback" = "contact") {
  return siteFetch(t, site.host, `/_pier/form/${form}`, {
    method: "POST",
    body: body.includes("_pier_started=") ? body : `${body}&_pier_started=${encodeURIComponent(filledTimer(t, site.pub.id, form))}`,
    headers: { origin: `http://${site.host}`, "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": `203.0.113.${++ip % 250}`, ...headers },
  });
}
const GOOD = "email=v%40example.com&message=hello";

describe("form endpoint attacks", () => {
  test("a post from another site's page (foreign Origin) is refused", async () => {
    const before = stored();
    const r = await post(GOOD, { origin: "http://evil.example" });
    expect(r.status).toBe(403);
    expect(await r.text()).toContain("only be sent from the site");
    expect(stored()).toBe(before);
  });

  test("a post with an opaque (null) Origin or with no Origin and no Sec-Fetch-Site is refused", async () => {
    const before = stored();
    expect((await post(GOOD, { origin: "null" })).status).toBe(403);
    const bare = await fetch(`${t.url}/_pier/form/contact`, {
      method: "POST",
      body: GOOD,
      headers: { host: site.host, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(bare.status).toBe(403);
    expect((await post(GOOD, { origin: "", "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect(stored()).toBe(before);
  });

  test("an oversized body is refused before it is read whole: a page for a plain post, the envelope for a script", async () => {
    const before = stored();
    const big = `email=a%40example.com&message=${"x".repeat(70_000)}`;
    const r = await post(big);
    expect(r.status).toBe(413);
    expect(r.headers.get("content-type")).toContain("text/html");
    expect(await r.text()).toContain("Your message was not sent");
    const j = await post(big, { accept: "application/json" });
    expect(j.status).toBe(413);
    expect((await j.json()).error.code).toBe("PAYLOAD_TOO_LARGE");
    expect(stored()).toBe(before);
  });

  test("a field over its own limit is refused naming the field", async () => {
    const before = stored();
    const r = await post(`email=a%40example.com&message=hi&name=${"n".repeat(201)}`, { accept: "application/json" });
    expect(r.status).toBe(422);
    expect((await r.json()).error.details.field).toBe("name");
    expect(stored()).toBe(before);
  });

  test("wrong content types (plain text, a file upload) are refused", async () => {
    const before = stored();
    expect((await post(GOOD, { "content-type": "text/plain" })).status).toBe(415);
    const fd = new FormData();
    fd.set("email", "a@example.com");
    fd.set("message", "see file");
    fd.set("attachment", new Blob(["MZ"]), "x.exe");
    const multi = await siteFetch(t, site.host, "/_pier/form/contact", {
      method: "POST",
      body: fd,
      headers: { origin: `http://${site.host}`, "x-forwarded-for": "192.0.2.77" },
    });
    expect(multi.status).toBe(415);
    expect(stored()).toBe(before);
  });

  test("a bot that fills the honeypot is told 'thank you' and nothing is stored", async () => {
    const before = stored();
    const r = await post(`${GOOD}&_pier_website=http%3A%2F%2Fspam.example`);
    expect(r.status).toBe(200);
    expect(await r.text()).toContain("Thank you");
    expect(stored()).toBe(before);
  });

  test("a form sent faster than a person can fill it in, or with a forged timer, is refused", async () => {
    const before = stored();
    const fresh = startedToken(t.pier.deps, site.pub.id, "contact");
    const fast = await post(`${GOOD}&_pier_started=${encodeURIComponent(fresh)}`);
    expect(fast.status).toBe(403);
    expect(await fast.text()).toContain("faster than a person");
    const forged = `${Date.now() - 60_000}.AAAA`;
    expect((await post(`${GOOD}&_pier_started=${encodeURIComponent(forged)}`)).status).toBe(403);
    // A timer issued for another form of the same site does not count either.
    const other = startedToken(t.pier.deps, site.pub.id, "feedback");
    t.clock.advance(MIN_FILL_MS + 1);
    expect((await post(`${GOOD}&_pier_started=${encodeURIComponent(other)}`)).status).toBe(403);
    expect(stored()).toBe(before);
    // The same form's own timer, after a person's time, is accepted.
    const ok = startedToken(t.pier.deps, site.pub.id, "contact");
    t.clock.advance(MIN_FILL_MS + 1);
    expect((await post(`${GOOD}&_pier_started=${encodeURIComponent(ok)}`)).status).toBe(200);
    expect(stored()).toBe(before + 1);
  });

  test("a hosted form's post needs the fill timer, and a timer older than a day is refused; a hand-written form needs none", async () => {
    const before = stored();
    const bare = (host: string, body: string, accept = "application/json") =>
      siteFetch(t, host, "/_pier/form/contact", {
        method: "POST",
        body,
        headers: { origin: `http://${host}`, "content-type": "application/x-www-form-urlencoded", accept, "x-forwarded-for": `203.0.113.${++ip % 250}` },
      });
    const missing = await bare(site.host, GOOD);
    expect(missing.status).toBe(403);
    expect((await missing.json()).error).toMatchObject({ code: "FORM_CHALLENGE_FAILED", details: { challenge: "fill_time_missing" } });
    // A plain post without it gets the page saying why.
    const plainMissing = await bare(site.host, GOOD, "text/html");
    expect(plainMissing.status).toBe(403);
    expect(await plainMissing.text()).toContain("without the time it was opened");
    // A timer captured once does not serve for ever.
    const old = startedToken(t.pier.deps, site.pub.id, "contact");
    t.clock.advance(MAX_FILL_MS + 1);
    const expired = await bare(site.host, `${GOOD}&_pier_started=${encodeURIComponent(old)}`);
    expect(expired.status).toBe(403);
    expect((await expired.json()).error.details.challenge).toBe("fill_time_expired");
    expect(stored()).toBe(before);
    // hosted: false renders no form, so its posts carry no timer (D167).
    const own = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>Own</h1>" }] });
    const r = await t.api("PATCH", `/api/v1/buckets/${own.pub.bucketId}`, {
      key: own.user.key,
      body: { bucket: { metadata: { publication_forms: { forms: [{ name: "contact", hosted: false }] } } } },
    });
    expect(r.status).toBe(200);
    expect((await bare(own.host, GOOD, "text/html")).status).toBe(200);
  });

  test("a flood from one address is cut off after the per-address limit, with Retry-After", async () => {
    const before = stored();
    const statuses: number[] = [];
    let last: Response | null = null;
    for (let i = 0; i < FORM_POSTS_PER_IP_MINUTE + 3; i++) {
      const altcha = encodeURIComponent(await solveFormChallenge(t, site.host));
      last = await post(`${GOOD}&altcha=${altcha}`, { "x-forwarded-for": "198.18.0.1", accept: "application/json" });
      statuses.push(last.status);
    }
    expect(statuses.filter((s) => s === 201).length).toBe(FORM_POSTS_PER_IP_MINUTE);
    expect(statuses.slice(-3)).toEqual([429, 429, 429]);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(stored()).toBe(before + FORM_POSTS_PER_IP_MINUTE);
  });

  test("addresses rotated inside one IPv6 /64 share the per-address limit", async () => {
    const before = stored();
    const statuses: number[] = [];
    for (let i = 1; i <= FORM_POSTS_PER_IP_MINUTE + 2; i++) statuses.push((await post(GOOD, { "x-forwarded-for": `2001:db8:1:2::${i.toString(16)}` })).status);
    expect(statuses.filter((s) => s === 200).length).toBe(FORM_POSTS_PER_IP_MINUTE);
    expect(statuses.slice(-2)).toEqual([429, 429]);
    // Another /64 is another client.
    expect((await post(GOOD, { "x-forwarded-for": "2001:db8:1:3::1" })).status).toBe(200);
    expect(stored()).toBe(before + FORM_POSTS_PER_IP_MINUTE + 1);
  });

  test("junk that fails the form's checks does not spend the form's shared limit (a real visitor still gets through)", async () => {
    const before = stored();
    for (let i = 0; i < FORM_POSTS_PER_FORM_MINUTE + 5; i++) {
      // Required fields missing: refused, from as many clients as the per-form limit allows posts.
      const junk = await post("name=junk", { "x-forwarded-for": `100.65.${i >> 8}.${i & 255}` });
      expect(junk.status).toBe(422);
    }
    const real = await post(GOOD, { "x-forwarded-for": "192.0.2.200" });
    expect(real.status).toBe(200);
    expect(stored()).toBe(before + 1);
  });

  test("a flood spread over many addresses is cut off by the per-form limit", async () => {
    const before = stored();
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < FORM_POSTS_PER_FORM_MINUTE + 5; i++) {
      const r = await post("rating=5&message=spread", { "x-forwarded-for": `100.64.${i >> 8}.${i & 255}` }, "feedback");
      if (r.status === 200) accepted++;
      if (r.status === 429) refused++;
    }
    expect(accepted).toBe(FORM_POSTS_PER_FORM_MINUTE);
    expect(refused).toBe(5);
    expect(stored()).toBe(before + FORM_POSTS_PER_FORM_MINUTE);
  });
});

describe("form macros in pages", () => {
  test("a page repeating the form macros gets each form once: its answer grows with the page, not with macros times forms", async () => {
    const macros = "{{PIER_FORM}}".repeat(2_000) + "{{PIER_FORM:contact}}".repeat(2_000);
    const page = `<!doctype html><html><body><h1>Many</h1>${macros}<p>end</p></body></html>`;
    const many = await publishSite(t, { files: [{ path: "index.html", bytes: page }] });
    const r = await t.api("PATCH", `/api/v1/buckets/${many.pub.bucketId}`, {
      key: many.user.key,
      body: { bucket: { metadata: { publication_forms: { forms: [{ name: "contact" }, { name: "waitlist" }, { name: "feedback" }] } } } },
    });
    expect(r.status).toBe(200);
    const res = await siteFetch(t, many.host, "/");
    expect(res.status).toBe(200);
    const body = await res.text();
    for (const form of ["contact", "waitlist", "feedback"]) expect(body.split(`data-pier-form="${form}"`).length - 1).toBe(1);
    // The forms went inline at their first macro: none floats, and every other macro is gone.
    expect(body).not.toContain("data-pier-widget=");
    expect(body).not.toContain("{{PIER_FORM");
    expect(body).toContain("<p>end</p>");
    expect(body.length).toBeLessThan(page.length);
  });
});
