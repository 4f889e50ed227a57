// The proof of work of built-in forms, attacked over real HTTP: a post sent by script without a
// solution, a forged solution, a solution replayed, a solution from another site, a challenge
// altered after signing. Each is refused with FORM_CHALLENGE_FAILED and nothing is stored.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createChallenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/pbkdf2";
import { formSubmissions } from "../../src/db/schema";
import { fetchChallenge, filledTimer, solvedPayload, solveFormChallenge } from "../helpers/forms";
import { startTestPier, type TestPier } from "../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../helpers/sites";

let t: TestPier;
let site: PublishedSite;
let other: PublishedSite;
let ip = 0;
beforeAll(async () => {
  t = await startTestPier({ trustProxy: true });
  site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>Home</h1>" }] });
  other = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>Other</h1>" }] });
  for (const s of [site, other]) {
    const r = await t.api("PATCH", `/api/v1/buckets/${s.pub.bucketId}`, {
      key: s.user.key,
      body: { bucket: { metadata: { publication_forms: { forms: [{ name: "contact" }] } } } },
    });
    if (r.status !== 200) throw new Error(`configure: ${r.status}`);
  }
});
afterAll(() => t?.stop());
beforeEach(() => t.clock.advance(120_000));

const stored = () => t.pier.deps.db.select().from(formSubmissions).where(eq(formSubmissions.bucketId, site.pub.bucketId)).all().length;

async function post(body: Record<string, unknown>) {
  const r = await siteFetch(t, site.host, "/_pier/form/contact", {
    method: "POST",
    body: JSON.stringify({ email: "v@example.com", message: "hello", _pier_started: filledTimer(t, site.pub.id, "contact"), ...body }),
    headers: { origin: `http://${site.host}`, "content-type": "application/json", accept: "application/json", "x-forwarded-for": `203.0.113.${++ip % 250}` },
  });
  return { status: r.status, body: await r.json() };
}

describe("form proof of work", () => {
  test("the challenge is served by the site host, signed, expiring, and only for sites with forms", async () => {
    const c = await fetchChallenge(t, site.host);
    expect(c.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(c.parameters.algorithm).toBe("PBKDF2/SHA-256");
    expect(c.parameters.expiresAt! * 1000).toBeGreaterThan(Date.now());
    expect(c.parameters.expiresAt! * 1000).toBeLessThanOrEqual(Date.now() + 11 * 60_000);
    const plain = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>No forms</h1>" }] });
    expect((await siteFetch(t, plain.host, "/_pier/form/challenge")).status).toBe(404);
    const script = await siteFetch(t, site.host, "/_pier/altcha.js");
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("javascript");
    expect(await script.text()).toContain("altcha");
  });

  test("a post sent by script without a solution is refused", async () => {
    const before = stored();
    const r = await post({});
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("FORM_CHALLENGE_FAILED");
    expect(stored()).toBe(before);
  });

  test("a forged solution (wrong derived key) is refused", async () => {
    const before = stored();
    const c = await fetchChallenge(t, site.host);
    const forged = Buffer.from(JSON.stringify({ challenge: c, solution: { counter: 1, derivedKey: "00".repeat(32) } })).toString("base64");
    const r = await post({ altcha: forged });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("FORM_CHALLENGE_FAILED");
    expect(stored()).toBe(before);
  });

  test("a challenge made easier after signing (keyPrefix changed) is refused", async () => {
    const before = stored();
    const c = await fetchChallenge(t, site.host);
    const easier = { ...c, parameters: { ...c.parameters, keyPrefix: "0" } };
    const r = await post({ altcha: await solvedPayload(easier) });
    expect(r.status).toBe(403);
    expect(r.body.error.details.challenge).toBe("invalid solution");
    expect(stored()).toBe(before);
  });

  test("a solved challenge works once; the replay is refused", async () => {
    const altcha = await solveFormChallenge(t, site.host);
    const before = stored();
    const first = await post({ altcha });
    expect(first.status).toBe(201);
    const again = await post({ altcha, message: "second time" });
    expect(again.status).toBe(403);
    expect(again.body.error.details.challenge).toBe("already used");
    expect(stored()).toBe(before + 1);
  });

  test("two concurrent posts with one solution store one submission", async () => {
    const altcha = await solveFormChallenge(t, site.host);
    const before = stored();
    const results = await Promise.all([post({ altcha }), post({ altcha }), post({ altcha })]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 403, 403]);
    expect(stored()).toBe(before + 1);
  });

  test("a solution for another site's challenge is refused", async () => {
    const before = stored();
    const r = await post({ altcha: await solveFormChallenge(t, other.host) });
    expect(r.status).toBe(403);
    expect(r.body.error.details.challenge).toBe("issued for another site");
    expect(stored()).toBe(before);
  });

  test("a missing field does not spend the solution: the corrected post goes through with it", async () => {
    const altcha = await solveFormChallenge(t, site.host);
    const missing = await post({ altcha, message: "" });
    expect(missing.status).toBe(422);
    expect((await post({ altcha })).status).toBe(201);
  });

  test("an expired challenge, even correctly signed and solved, is refused", async () => {
    const c = await createChallenge({
      algorithm: "PBKDF2/SHA-256",
      cost: 5_000,
      deriveKey,
      keyPrefix: "00",
      expiresAt: new Date(Date.now() - 1_000),
      data: { site: site.pub.id },
      hmacSignatureSecret: t.pier.deps.secrets.key("form-challenge").toString("hex"),
    });
    const before = stored();
    const r = await post({ altcha: await solvedPayload(c) });
    expect(r.status).toBe(403);
    expect(r.body.error.details.challenge).toBe("expired");
    expect(stored()).toBe(before);
  });

  test("garbage in the altcha field is refused, not a server error", async () => {
    for (const altcha of ["not base64 json", Buffer.from("[]").toString("base64"), "x".repeat(5000)]) {
      const r = await post({ altcha });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe("FORM_CHALLENGE_FAILED");
    }
  });
});
