// GitHub App attacks, one test each: linking an installation the GitHub user cannot see (a forged
// installation_id), replaying or carrying a setup `state` into another session, connecting a
// repository through another account's installation, webhooks with a wrong signature, and
// using the GitHub authorization someone else gave Pier.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Browser } from "../helpers/browser";
import { startGithubStandIn, type GithubStandIn } from "../helpers/github-stand-in";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { newBucket } from "../helpers/uploads";

let gh: GithubStandIn;
let t: TestPier;
let victim: TestUser;
let attacker: TestUser;
let victimBrowser: Browser;
let attackerBrowser: Browser;

async function signedIn(u: TestUser): Promise<Browser> {
  const b = new Browser(t.url);
  const r = await b.submit("/signin", "/signin", { email: u.email, password: u.password });
  if (r.status !== 303) throw new Error(`sign-in failed: ${r.status}`);
  return b;
}

beforeAll(async () => {
  gh = startGithubStandIn();
  t = await startTestPier(gh.config);
  gh.useClock(() => t.clock.now().getTime());
  gh.callbackUrl = `${t.url}/dashboard/git/github/callback`;
  gh.account("victim-org", "Organization", ["victim"]);
  gh.account("mallory", "User");
  gh.createRepo("victim-org", "secrets");
  victim = await t.user({ plan: "pro" });
  attacker = await t.user({ plan: "pro" });
  victimBrowser = await signedIn(victim);
  attackerBrowser = await signedIn(attacker);
});
afterAll(async () => {
  await t?.stop();
  await gh?.stop();
});

/** Start the round trip on Pier and go through GitHub's install page as `githubUser`; returns GitHub's redirect back. */
async function roundTrip(b: Browser, bucketId: string, githubUser: string, target: string): Promise<URL> {
  const start = await b.get(`/dashboard/buckets/${bucketId}/git/github/install`);
  expect(start.status).toBe(303);
  const res = await fetch(`${start.location}&target=${target}`, { headers: { "x-github-user": githubUser }, redirect: "manual" });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("location")!);
}
const installations = async (u: TestUser, bucketId: string) =>
  (await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync/setup`, { key: u.key })).body.data.github_sync_setup.installations as any[];

describe("GitHub App: installation linking", () => {
  test("a forged installation_id (an installation the GitHub user cannot see) is refused and links nothing", async () => {
    // The victim's organization has the app installed.
    const victimBucket = await newBucket(t, victim.key, "victim");
    const ok = await roundTrip(victimBrowser, victimBucket, "victim", "victim-org");
    expect((await victimBrowser.get(ok.pathname + ok.search)).status).toBe(303);
    const victimInstallation = ok.searchParams.get("installation_id")!;

    // The attacker completes a real round trip for their own GitHub account, then swaps in the victim's installation id.
    const bucketId = await newBucket(t, attacker.key, "attacker");
    const back = await roundTrip(attackerBrowser, bucketId, "mallory", "mallory");
    expect(back.searchParams.get("installation_id")).not.toBe(victimInstallation);
    back.searchParams.set("installation_id", victimInstallation);
    const forged = await attackerBrowser.get(back.pathname + back.search);
    expect(forged.status).toBe(403);
    expect(forged.text).toContain("did not confirm");
    expect(await installations(attacker, bucketId)).toEqual([]);
    // Connecting the victim's repository through it is refused too.
    const connect = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, {
      key: attacker.key,
      body: { direction: "import", repository: "victim-org/secrets", installation_id: Number(victimInstallation) },
    });
    expect(connect.status).toBe(409);
    expect(connect.body.error.code).toBe("GITHUB_INSTALLATION_REQUIRED");
  });

  test("a callback without the code GitHub issues (installation_id alone) links nothing", async () => {
    const bucketId = await newBucket(t, attacker.key, "no code");
    const back = await roundTrip(attackerBrowser, bucketId, "mallory", "mallory");
    back.searchParams.delete("code");
    back.searchParams.set("installation_id", gh.installationOn("victim-org")!.id.toString());
    const r = await attackerBrowser.get(back.pathname + back.search);
    expect(r.status).toBe(403);
    expect(await installations(attacker, bucketId)).toEqual([]);
  });

  test("the setup state works once, only in the browser session that started it", async () => {
    const bucketId = await newBucket(t, victim.key, "state");
    const back = await roundTrip(victimBrowser, bucketId, "victim", "victim-org");
    // Another signed-in session (the attacker luring a victim to their callback, or the reverse) is refused.
    const elsewhere = await attackerBrowser.get(back.pathname + back.search);
    expect(elsewhere.status).toBe(400);
    // The state was used up by that attempt: the rightful session cannot replay it either.
    const replay = await victimBrowser.get(back.pathname + back.search);
    expect(replay.status).toBe(400);
    // A state nobody issued.
    const made = new URL(back);
    made.searchParams.set("state", "x".repeat(32));
    expect((await victimBrowser.get(made.pathname + made.search)).status).toBe(400);
  });

  test("an expired state is refused", async () => {
    const bucketId = await newBucket(t, victim.key, "late");
    const back = await roundTrip(victimBrowser, bucketId, "victim", "victim-org");
    t.clock.advance(31 * 60_000);
    const late = await victimBrowser.get(back.pathname + back.search);
    expect(late.status).toBe(400);
  });
});

describe("GitHub App: webhooks", () => {
  test("a delivery with a wrong, missing or replayed-on-another-body signature is refused and changes nothing", async () => {
    const inst = gh.installationOn("victim-org")!;
    const payload = { action: "deleted", installation: { id: inst.id } };
    const wrong = await gh.deliver(t.url, "installation", payload, "not-the-app-secret");
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as any).error.code).toBe("GIT_WEBHOOK_SIGNATURE_INVALID");
    const missing = await fetch(`${t.url}/api/v1/git_sync/github/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": "installation" },
      body: JSON.stringify(payload),
    });
    expect(missing.status).toBe(401);
    const good = JSON.stringify({ action: "created", installation: { id: inst.id } });
    const { createHmac } = await import("node:crypto");
    const replayed = await fetch(`${t.url}/api/v1/git_sync/github/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "installation",
        "x-hub-signature-256": `sha256=${createHmac("sha256", gh.app.webhookSecret).update(good).digest("hex")}`,
      },
      body: JSON.stringify(payload),
    });
    expect(replayed.status).toBe(401);
    // The installation is still active for the victim's account.
    const victimBucket = await newBucket(t, victim.key, "still linked");
    expect((await installations(victim, victimBucket)).find((i) => i.installation_id === inst.id)?.state).toBe("active");
  });
});

describe("GitHub App: kept user authorizations", () => {
  test("another Pier account cannot create a repository in someone's personal account through the authorization that person gave Pier", async () => {
    // The victim links their personal account; Pier keeps their authorization for the victim's Pier account.
    gh.account("vic", "User");
    const victimBucket = await newBucket(t, victim.key, "vic");
    const back = await roundTrip(victimBrowser, victimBucket, "vic", "vic");
    expect((await victimBrowser.get(back.pathname + back.search)).status).toBe(303);
    const vicInstallation = gh.installationOn("vic")!.id;
    const refreshes = gh.refreshes;

    // The attacker names the victim's account and installation from their own account.
    const bucketId = await newBucket(t, attacker.key, "into vic");
    const r = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/export`, {
      key: attacker.key,
      body: { owner: "vic", name: "planted", installation_id: vicInstallation },
    });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("GITHUB_INSTALLATION_REQUIRED");
    expect(gh.repoByName("vic/planted")).toBeUndefined();
    // The victim's refresh token was not even used (so not rotated away from the victim either).
    expect(gh.refreshes).toBe(refreshes);
  });
});
