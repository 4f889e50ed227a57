// The GitHub App on the bucket's Git page in real Chromium: "Install on GitHub" goes to the
// GitHub stand-in's installation page (signed in there as alice) and comes back linked; the
// repository is picked from the list and imported; the page shows it, without any secret. A
// second bucket exports to a new private repository in the same personal account.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { launchChromium } from "../../helpers/chromium";
import { dashboardUrl, expectAccessible, screenshot, signIn, submit } from "../../helpers/dashboard";
import { workClone, type WorkClone } from "../../helpers/git-server";
import { startGithubStandIn, type GithubStandIn } from "../../helpers/github-stand-in";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { newBucket } from "../../helpers/uploads";

let gh: GithubStandIn;
let t: TestPier;
let browser: Browser;
let other: WorkClone | undefined;
beforeAll(async () => {
  gh = startGithubStandIn();
  t = await startTestPier(gh.config);
  gh.useClock(() => t.clock.now().getTime());
  gh.callbackUrl = dashboardUrl(t, "/dashboard/git/github/callback");
  gh.account("alice", "User");
  browser = await launchChromium();
});
afterAll(async () => {
  other?.cleanup();
  await browser?.close();
  await t?.stop();
  await gh?.stop();
});

test("install on GitHub from the Git page, pick the repository, import", async () => {
  const repo = gh.createRepo("alice", "homepage");
  other = await workClone(gh.adminUrl(repo));
  other.write("index.html", "<h1>alice</h1>\n");
  await other.commitAndPush("first");
  const u = await t.user({ plan: "pro" });
  const bucketId = await newBucket(t, u.key, "Alice home");
  const context = await browser.newContext();
  // Who is signed in on "GitHub" (the stand-in's pages read it; Pier ignores it).
  await context.setExtraHTTPHeaders({ "x-github-user": "alice" });
  const page = await context.newPage();
  await signIn(page, t, u, `/dashboard/buckets/${bucketId}/git`);
  expect(await page.textContent("#github-h")).toBe("GitHub");

  await Promise.all([page.waitForURL(/\/git\?done=github_linked$/), page.click("#github-install")]);
  expect(await page.textContent("body")).toContain("GitHub installation linked");
  expect(await page.textContent("#github-installations")).toContain("alice");
  expect(await page.textContent("#github-repository")).toContain("alice/homepage");
  await screenshot(page, "git-github-linked");

  // A refused connect puts the error next to its field and keeps what was typed.
  await page.selectOption("#github-repository", { index: 0 });
  await page.fill("#github-branch", "bad..branch");
  await page.check("form[action$='/git/github/connect'] input[name=direction][value=export]");
  await submit(page, "form[action$='/git/github/connect'] button[type=submit]");
  expect(await page.textContent("#github-branch-error")).toContain("not a usable branch name");
  expect(await page.getAttribute("#github-branch", "aria-invalid")).toBe("true");
  expect(await page.inputValue("#github-branch")).toBe("bad..branch");
  expect(await page.isChecked("form[action$='/git/github/connect'] input[name=direction][value=export]")).toBe(true);
  expect(await page.locator("#branch-error").count()).toBe(0); // not put on the repository form's branch
  await expectAccessible(page);
  await page.fill("#github-branch", "");
  await page.check("form[action$='/git/github/connect'] input[name=direction][value=import]");
  await submit(page, "form[action$='/git/github/connect'] button[type=submit]");
  expect(await page.textContent("body")).toContain("Connected");
  await t.pier.runner.drain();
  await page.reload();
  expect(await page.textContent("#git-state")).toBe("in sync");
  expect(await page.textContent("body")).toContain("alice/homepage");
  const html = await page.content();
  for (const secret of [gh.app.clientSecret, gh.app.webhookSecret, "ghs_"]) expect(html).not.toContain(secret);
  await screenshot(page, "git-github-connected");
  await expectAccessible(page);
  const file = await t.api("GET", `/api/v1/buckets/${bucketId}/files/by_path?path=index.html`, { key: u.key });
  expect(file.status).toBe(302);

  // Another bucket exports to a new private repository in alice's personal account, with the
  // authorization the install above kept.
  const second = await newBucket(t, u.key, "Alice blog");
  await page.goto(dashboardUrl(t, `/dashboard/buckets/${second}/git`));
  expect(await page.textContent("#github-org")).toContain("alice (personal account)");
  expect(await page.inputValue("#github-name")).toBe("alice-blog");
  expect(await page.inputValue("#github-export-branch")).toBe("main");
  // A name GitHub refuses (alice/homepage exists): the error by the name, the typed branch kept.
  await page.fill("#github-name", "homepage");
  await page.fill("#github-export-branch", "site");
  await submit(page, "form[action$='/git/github/export'] button[type=submit]");
  expect(await page.textContent("#github-name-error")).toContain("GitHub refused the name alice/homepage");
  expect(await page.inputValue("#github-name")).toBe("homepage");
  expect(await page.inputValue("#github-export-branch")).toBe("site");
  expect(gh.repoByName("alice/alice-blog")).toBeUndefined();
  await page.fill("#github-name", "alice-blog");
  await submit(page, "form[action$='/git/github/export'] button[type=submit]");
  expect(await page.textContent("body")).toContain("Connected");
  await t.pier.runner.drain();
  expect(gh.repoByName("alice/alice-blog")?.private).toBe(true);
  // The branch chosen on the form is the one exported to and followed.
  const sync = (await t.api("GET", `/api/v1/buckets/${second}/github_sync`, { key: u.key })).body.data.github_sync;
  expect([sync.branch, sync.state]).toEqual(["site", "in_sync"]);
  await page.reload();
  expect(await page.textContent("#git-state")).toBe("in sync");
  for (const secret of [...gh.issuedRefreshTokens, ...gh.issuedUserTokens]) expect(await page.content()).not.toContain(secret);
}, 120_000);
