// Attacks on the bucket settings tab and the pages that show what agents wrote: a secret's
// value read back from any dashboard page (also after a refused save), text an agent stores
// that spells a template field ({{apiCsrf}}) turning into the session's CSRF token on the page,
// and lifting the visibility lock without a browser session. Each is reproduced over HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { unlockVisibility } from "../../src/features/buckets";
import { Browser, csrfOf, unescapeHtml } from "../helpers/browser";
import { createBucket } from "../helpers/buckets";
import { apiKeyActorOf, startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { syncFiles, textFile } from "../helpers/uploads";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(async () => {
  await t?.stop();
});

async function signedIn(u: TestUser): Promise<Browser> {
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  return b;
}

describe("dashboard settings", () => {
  test("a secret's value is on no dashboard page, not even the page of a refused save", async () => {
    const u = await t.user();
    const bucket = await createBucket(t, u, { title: "Payments" });
    const value = "sk_live_9f8e7d6c5b4a-secret-value";
    await t.api("PATCH", `/api/v1/buckets/${bucket.id}/variables`, { key: u.key, body: { secrets: { STRIPE_KEY: value } } });
    const b = await signedIn(u);
    for (const path of ["/dashboard/buckets", `/dashboard/buckets/${bucket.id}`, `/dashboard/buckets/${bucket.id}/settings`]) {
      const page = await b.get(path);
      expect(page.status).toBe(200);
      expect(page.text).not.toContain(value);
    }
    expect((await b.get(`/dashboard/buckets/${bucket.id}/settings`)).text).toContain("STRIPE_KEY");
    // A refused save of a secret (reserved name) answers the page again without the typed value.
    const typed = "typed-secret-value-never-echoed";
    const refused = await b.submit(`/dashboard/buckets/${bucket.id}/settings`, `/dashboard/buckets/${bucket.id}/settings/variables/set`, {
      form: "variable-add",
      kind: "secret",
      name: "PIER_STRIPE",
      value: typed,
    });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain("reserved");
    expect(refused.text).not.toContain(typed);
    // And an oversized one (the value is the problem): still not echoed.
    const big = `${typed}${"x".repeat(5000)}`;
    const tooBig = await b.submit(`/dashboard/buckets/${bucket.id}/settings`, `/dashboard/buckets/${bucket.id}/settings/variables/set`, {
      form: "secret:STRIPE_KEY",
      kind: "secret",
      name: "STRIPE_KEY",
      value: big,
    });
    expect(tooBig.status).toBe(422);
    expect(tooBig.text).not.toContain(typed);
  });

  // A secret's value is never shown, so a deleted secret cannot be put back from the page (D297).
  test("deleting a secret needs its confirmation box: a bare post deletes nothing; a public variable goes at one click", async () => {
    const u = await t.user();
    const bucket = await createBucket(t, u, { title: "Keys" });
    const vars = async () => (await t.api("GET", `/api/v1/buckets/${bucket.id}/variables`, { key: u.key })).body.data;
    await t.api("PATCH", `/api/v1/buckets/${bucket.id}/variables`, { key: u.key, body: { variables: { SHOWN: "1" }, secrets: { STRIPE_KEY: "sk" } } });
    const b = await signedIn(u);
    const settings = `/dashboard/buckets/${bucket.id}/settings`;
    const page = (await b.get(settings)).text;
    const refused = await b.post(`${settings}/variables/delete`, { csrf: csrfOf(page), form: "secret:STRIPE_KEY", kind: "secret", name: "STRIPE_KEY" });
    expect((await vars()).secrets.map((x: { name: string }) => x.name)).toEqual(["STRIPE_KEY"]);
    expect(refused.status).toBe(422);
    // The message is next to the box, and the browser will not send the form without it ticked.
    expect(refused.text).toMatch(
      /name="confirm" required aria-invalid="true" aria-describedby="secret-0-confirm-error">.*<span class="field-error" id="secret-0-confirm-error">Tick the box to confirm/,
    );
    expect(page).toMatch(/value="secret:STRIPE_KEY"><label class="check"><input type="checkbox" name="confirm" required>/);
    const done = await b.post(`${settings}/variables/delete`, { csrf: csrfOf(page), kind: "secret", name: "STRIPE_KEY", confirm: "on" });
    expect(done.status).toBe(303);
    expect((await b.post(`${settings}/variables/delete`, { csrf: csrfOf(page), kind: "variable", name: "SHOWN" })).status).toBe(303);
    expect(await vars()).toMatchObject({ variables: {}, secrets: [] });
  });

  test("an agent's text spelling {{apiCsrf}} is shown as itself, never as the session's CSRF token", async () => {
    const u = await t.user();
    const bucket = await createBucket(t, u, { title: "Agent-written" });
    // An API key (an agent) writes a variable, a lock message and a file name that spell template fields.
    await t.api("PATCH", `/api/v1/buckets/${bucket.id}/variables`, { key: u.key, body: { variables: { LEAK: "{{apiCsrf}}" } } });
    await syncFiles(t, u.key, bucket.id, [textFile("{{apiCsrf}}.txt", "x", "text/plain")]);
    await t.api("POST", `/api/v1/buckets/${bucket.id}/lock`, { key: u.key, body: { message: "{{csrf}}", duration_seconds: 60 } });
    const b = await signedIn(u);
    for (const path of [`/dashboard/buckets/${bucket.id}/settings`, `/dashboard/buckets/${bucket.id}`]) {
      const page = await b.get(path);
      const token = csrfOf(page.text).split("~")[0]!;
      // The token appears only in the forms' csrf fields and the scripts' data attribute.
      const outside = unescapeHtml(page.text)
        .replace(/name="csrf" value="[^"]+"/g, "")
        .replace(/data-csrf="[^"]+"/g, "");
      expect(outside).not.toContain(token);
      expect(page.text).toContain("{{");
    }
    const settings = (await b.get(`/dashboard/buckets/${bucket.id}/settings`)).text;
    expect(settings).toMatch(/name="value" type="text" value="\{\{apiCsrf\}\}"/);
    expect(settings).toContain("“{{csrf}}”");
  });

  test("the visibility lock cannot be lifted by an API key, only by a browser session", async () => {
    const u = await t.user();
    const bucket = await createBucket(t, u, { title: "Frozen" });
    await t.api("POST", `/api/v1/buckets/${bucket.id}/visibility_change_lock`, { key: u.key, body: { reason: "freeze" } });
    // No REST route unlocks it (none of the verbs a client might guess).
    for (const [method, path] of [
      ["DELETE", `/api/v1/buckets/${bucket.id}/visibility_change_lock`],
      ["POST", `/api/v1/buckets/${bucket.id}/visibility_change_unlock`],
    ] as const) {
      const r = await t.api(method, path, { key: u.key, body: {} });
      expect(r.status).toBeGreaterThanOrEqual(400);
    }
    // The service itself refuses an actor that is not a browser session (the owner's own admin key).
    expect(() => unlockVisibility(t.pier.deps, apiKeyActorOf(u), bucket.id)).toThrow("lifted by a person in the dashboard");
    const still = await t.api("GET", `/api/v1/buckets/${bucket.id}`, { key: u.key });
    expect(still.body.data.bucket.visibility_change_lock.locked).toBe(true);
    // The account's browser session can.
    const b = await signedIn(u);
    const res = await b.submit(`/dashboard/buckets/${bucket.id}/settings`, `/dashboard/buckets/${bucket.id}/settings/visibility/unlock`, {});
    expect(res.status).toBe(303);
    expect((await t.api("GET", `/api/v1/buckets/${bucket.id}`, { key: u.key })).body.data.bucket.visibility_change_lock).toEqual({ locked: false });
  });
});
